/**
 * `x402-merchants check`'s look at the sealed weeks: every report stored as sealed still proves against the
 * root its week was attested under, and the week holds as many as it sealed. A sealed body changed in the
 * store would be served as attested and fail every reader's `verify`; this finds it first.
 */
import type { Hex } from "viem";
import type { Analytics } from "../../analytics/duckdb.ts";
import type { CheckLine } from "../../analytics/integrity.ts";
import { storeChains } from "../../chain/chains.ts";
import { provesReport } from "./tree.ts";

const SUBJECT = "sealed weeks";

export async function checkSealedWeeks(db: Analytics): Promise<CheckLine[]> {
  const tables = await db.one<{ n: number }>(
    "SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE table_name IN ('attestations', 'attested_reports')",
  );
  if (tables?.n !== 2) return [];
  const weeks = await db.all<{ chain: string; end_block: number; root: Hex; reports: number }>(
    "SELECT chain, end_block::DOUBLE AS end_block, root, reports FROM attestations ORDER BY chain, end_block",
  );
  const broken: string[] = [];
  let reports = 0;
  for (const week of weeks) {
    const rows = await db.all<{ address: string; body: string; proof: string }>(
      "SELECT address, body, proof FROM attested_reports WHERE chain = $chain AND end_block = $end ORDER BY address",
      { chain: week.chain, end: week.end_block },
    );
    reports += rows.length;
    const at = `the ${week.chain} week ending at block ${week.end_block}`;
    // Each chain's leaves are its own (tree.ts): a week of a chain this program does not know proves nothing.
    const chain = storeChains.bySlug.get(week.chain);
    if (!chain) {
      broken.push(`${at} is of a chain this program does not know`);
      continue;
    }
    const wrong = rows.filter(
      (row) => !provesReport(week.root, JSON.parse(row.body), JSON.parse(row.proof) as Hex[], chain),
    );
    if (rows.length !== week.reports)
      broken.push(`${at} holds ${rows.length} sealed reports of ${week.reports}`);
    if (wrong.length > 0)
      broken.push(
        `${at}: ${wrong.length} sealed reports do not prove against its root (${wrong[0]?.address} first)`,
      );
  }
  if (broken.length > 0) return [{ ok: false, subject: SUBJECT, text: broken.join("; "), problem: "data" }];
  const text =
    weeks.length === 0
      ? "none yet"
      : `${weeks.length} ${weeks.length === 1 ? "week" : "weeks"}, ${reports} reports, each proves against its week's root`;
  return [{ ok: true, subject: SUBJECT, text }];
}
