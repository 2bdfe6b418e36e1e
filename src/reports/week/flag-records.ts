/**
 * A flag row as the feed's datasets list it (`flags.ndjson`, the Parquet, the hash a week's attestation
 * commits to), with the link to where its wallet is on its merchant's evidence page.
 */
import type { FlagRecord } from "../model.ts";
import { evidenceAnchor, flagAnchor } from "./anchors.ts";
import { type FlagRow, reasonOf } from "./flags.ts";

/** What a window's rows share: its end block, where its pages are, and the methodology it was built under. */
export interface FlagRecordContext {
  /** The chain's slug. */
  chain: string;
  end: number;
  publicUrl: string;
  methodology: string;
}

/**
 * Where a flagged wallet is on its merchant's evidence page of the window: its own entry when the page
 * names it, else the flag's section, which counts the wallets it does not name.
 */
export function evidenceUrl(publicUrl: string, chain: string, end: number, row: FlagRow): string {
  const anchor = row.named ? evidenceAnchor(row.kind, row.wallet) : flagAnchor(row.kind);
  return `${publicUrl}/reports/${chain}/${row.pay_to}/evidence?end_block=${end}#${anchor}`;
}

export function flagRecord(context: FlagRecordContext, row: FlagRow): FlagRecord {
  return {
    chain: context.chain,
    end_block: context.end,
    wallet: row.wallet,
    cluster: row.cluster,
    merchant: row.pay_to,
    merchant_name: row.name,
    kind: row.kind,
    reason: reasonOf(row.kind),
    tx: row.tx,
    usd: row.usd,
    first_block: row.first_block,
    last_block: row.last_block,
    methodology_version: context.methodology,
    evidence: evidenceUrl(context.publicUrl, context.chain, context.end, row),
  };
}
