/**
 * `simulate --check`: every report's real revenue against the simulator's ground truth. A merchant passes
 * when its `real_usd` is within 5% of the genuine demand it received in the window (or equals it rounded
 * to cents, as the report rounds), and its reported `usd` equals every payment the simulator made to it
 * rounded the same way (the indexer missed nothing).
 */
import type { Report } from "../reports/index.ts";
import { type TruthRecord, truthByMerchant } from "./truth.ts";

export const TOLERANCE = 0.05;

export interface CheckRow {
  name: string;
  address: string;
  /** Reported and real revenue in the report. */
  usd: number;
  real_usd: number;
  /** What the simulator paid the merchant in the window, and the genuine part of it. */
  truth_usd: number;
  genuine_usd: number;
  /** (real - genuine) / genuine, genuine rounded to cents as the report rounds; null without genuine demand. */
  error: number | null;
  /** Share of genuine demand the screens took away: max(0, genuine - real) / genuine (cents). */
  genuine_lost: number | null;
  ok: boolean;
  reason?: string;
}

export function checkReports(
  records: readonly TruthRecord[],
  reports: readonly Report[],
  window: { start_block: number; end_block: number },
): CheckRow[] {
  const truth = truthByMerchant(records, window);
  const byAddress = new Map(reports.map((r) => [r.address, r]));
  const addresses = new Set([...truth.keys(), ...reports.filter((r) => r.tx > 0).map((r) => r.address)]);
  const rows: CheckRow[] = [];
  for (const address of addresses) {
    const t = truth.get(address) ?? { total: 0n, genuine: 0n, tx: 0, genuineTx: 0 };
    const report = byAddress.get(address);
    const truthUsd = Number(t.total) / 1e6;
    const genuineUsd = Number(t.genuine) / 1e6;
    const row: CheckRow = {
      name: report?.name ?? address,
      address,
      usd: report?.usd ?? 0,
      real_usd: report?.real_usd ?? 0,
      truth_usd: round(truthUsd),
      genuine_usd: round(genuineUsd),
      error: null,
      genuine_lost: null,
      ok: true,
    };
    // Against the truth rounded as the report rounds: a report equal to it is off by nothing.
    const genuineCents = cents(t.genuine);
    if (genuineCents > 0) {
      row.error = round((row.real_usd - genuineCents) / genuineCents, 4);
      row.genuine_lost = round(Math.max(0, genuineCents - row.real_usd) / genuineCents, 4);
    }
    // The report rounds exact amounts half up to cents; the same rounding of the truth is no error.
    const exact = row.real_usd === cents(t.genuine);
    if (!report) {
      row.ok = false;
      row.reason = "no report for a merchant the simulator paid";
    } else if (report.usd !== cents(t.total)) {
      row.ok = false;
      row.reason = `reported $${report.usd.toFixed(2)} but the simulator paid $${cents(t.total).toFixed(2)}`;
    } else if (!exact && (genuineUsd === 0 || Math.abs(row.real_usd - genuineUsd) / genuineUsd > TOLERANCE)) {
      row.ok = false;
      row.reason =
        row.real_usd > genuineUsd
          ? "screens let simulated abuse through"
          : "screens took away genuine demand";
    }
    rows.push(row);
  }
  return rows.sort((a, b) => b.genuine_usd - a.genuine_usd || a.address.localeCompare(b.address));
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
/** Atomic units (6 decimals) to dollars, half up to cents, as the report rounds. */
const cents = (atomic: bigint) => Number((atomic + 5_000n) / 10_000n) / 100;
