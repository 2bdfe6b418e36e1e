import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { sqlChain } from "../scope.ts";

/**
 * A payment stands for its transaction by its block and row until the evidence needs the hash: reading
 * every reached wallet's payment hashes was more than half of the pass (the scan decodes the hash of
 * every payment it passes), and the ways shown hold a few payments at most. The build reads one version
 * of the data (`ReportService.write` builds again if a write landed), so a row stays the same row.
 */
const REF = "@";
export const paymentRef = (block: number, row: bigint | number) => `${REF}${block}:${row}`;

/** The transaction hashes of the payments among `refs` (others are left out), by their refs. */
export async function paymentHashes(
  analytics: Analytics,
  chain: AnyChainRecord,
  refs: readonly string[],
): Promise<Map<string, string>> {
  const wanted = new Set(refs.filter((r) => r.startsWith(REF)));
  const out = new Map<string, string>();
  if (wanted.size === 0) return out;
  const blocks = [
    ...new Set([...wanted].map((r) => Math.trunc(Number(r.slice(REF.length, r.indexOf(":")))))),
  ];
  const read = (where: string) =>
    `SELECT block_number AS block, rowid AS row, tx_hash AS tx FROM payments WHERE ${sqlChain(chain)} AND ${where}`;
  // One block is a range the zone maps find (13-25 ms for 40 blocks at 10M); an IN list is read as its
  // lowest to highest block, the whole table when they are spread (about 100 ms): the better past a few hundred.
  const sql =
    blocks.length <= 256
      ? blocks.map((b) => read(`block_number = ${b}`)).join(" UNION ALL ")
      : read(`block_number IN (${blocks.join(", ")})`);
  const rows = await analytics.all<{ block: bigint | number; row: bigint; tx: string }>(sql);
  for (const r of rows) {
    const ref = paymentRef(Number(r.block), r.row);
    if (wanted.has(ref)) out.set(ref, r.tx);
  }
  return out;
}
