/**
 * Sealing a week: every merchant's report as it will be served once the week is attested (`frozen: true`),
 * the Merkle tree over them (tree.ts) with each report's proof, and the hash of the week's flag feed. What is
 * sealed is stored (store.ts) and served from then on, so the attested reports never change, whatever the
 * analytics database, the listings or this program's wording become.
 */
import { type Hex, keccak256, stringToHex } from "viem";
import type { Analytics } from "../../analytics/duckdb.ts";
import { sqlChain } from "../scope.ts";
import { flagRecord } from "../week/flag-records.ts";
import { flagBatch } from "../week/flags.ts";
import { type ReportContext, reportsQuery, type StoredReportRow } from "../week/report.ts";
import type { Seal } from "./store.ts";
import { canonicalJson, type Leaf, reportLeaf, weekTree } from "./tree.ts";

/** Reports (or flagged wallets) read at once. */
const BATCH = 2_000;

/** The week of the built window `context`, sealed (nothing is written). */
export async function sealOf(db: Analytics, context: ReportContext): Promise<Seal> {
  const end = context.window.end_block;
  const reports: { address: string; body: string; proof: string[] }[] = [];
  const leaves: Leaf[] = [];
  for (let after = ""; ; ) {
    const next = await db.one<{ through: string | null }>(
      `SELECT max(address) AS through FROM (SELECT address FROM reports
         WHERE ${sqlChain(context.chain)} AND end_block = $end AND address > $after ORDER BY address LIMIT $size)`,
      { end, after, size: BATCH },
    );
    if (!next?.through) break;
    const { sql, params } = reportsQuery(context, { after, through: next.through });
    for (const row of await db.all<StoredReportRow & { address: string }>(sql, params)) {
      const report = {
        ...(JSON.parse(row.body) as Record<string, unknown> & { address: string }),
        frozen: true,
      };
      leaves.push(reportLeaf(report, context.chain));
      // Kept as the store keeps the merchant (Solana's key as written): served by it (store.ts, servedRows).
      reports.push({ address: row.address, body: JSON.stringify(report), proof: [] });
    }
    after = next.through;
  }
  const tree = weekTree(leaves, context.chain);
  reports.forEach((report, i) => {
    report.proof = tree.getProof(i);
  });
  return {
    startBlock: context.window.start_block,
    endBlock: end,
    methodology: context.methodology,
    root: tree.root as Hex,
    feedHash: await feedHash(db, context),
    publicUrl: context.publicUrl,
    reports,
  };
}

/**
 * keccak256 of the week's flag feed as `flags.ndjson` lists it, each line in RFC 8785's canonical form
 * followed by a newline: a reader recomputes it from the downloaded file, whatever its whitespace.
 */
export async function feedHash(db: Analytics, context: ReportContext): Promise<Hex> {
  const end = context.window.end_block;
  const records = {
    chain: context.chain.slug,
    end,
    publicUrl: context.publicUrl,
    methodology: context.methodology,
  };
  const lines: string[] = [];
  for (let after = ""; ; ) {
    const batch = await flagBatch(db, context.chain, end, after, BATCH);
    if (!batch) break;
    for (const row of batch.rows) lines.push(`${canonicalJson(flagRecord(records, row))}\n`);
    after = batch.through;
  }
  return keccak256(stringToHex(lines.join("")));
}
