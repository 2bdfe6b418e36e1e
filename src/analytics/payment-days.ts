import type { AnyChainRecord } from "../chain/chains.ts";
import type { Analytics } from "./duckdb.ts";
import type { Params } from "./sql.ts";

/** SQL: a payment's scheme as the report's groups keep it: "unknown" where the store cannot say (migration 13). */
export const SQL_SCHEME = "coalesce(scheme, 'unknown')";

/**
 * The payments of each past day, grouped as the reports group them (payer, merchant, amount, scheme), kept
 * as payments are written: a report build reads a week as about a seventh as many groups instead of
 * grouping every payment again (docs/benchmarks-log.md: the grouping was a third of each build).
 *
 * A day is "sealed" when its groups are stored (`payment_days`) with how many payments they hold and
 * their lowest and highest block (`sealed_days`). The groups are a cache of the payments table, never
 * a source of truth:
 * - every write of payments unseals the days it touches, in the transaction of the write (the
 *   indexer's batches, the import, a reorg's rewind), then seals days before the latest one it wrote;
 * - a build uses a sealed day only if its payments all lie in the window and the payments table still
 *   holds exactly that many payments on that day (`usableDays`), so a seal that raced a write on
 *   another connection is never read; every other payment of the window is grouped from the table.
 *
 * Each chain's days are its own (`chain`): only its USDC payments are kept, the ones its reports count
 * (`sqlInWindow`), and a write of one chain unseals and seals that chain's days only.
 */

/** Days sealed by one indexer commit at most: catching up on an old store must not stall one block. */
export const SEALS_PER_COMMIT = 2;

const DAY_MS = 86_400_000;

/** YYYY-MM-DD of a time in seconds or a Date. */
export const utcDate = (t: number | Date): string =>
  (typeof t === "number" ? new Date(t * 1000) : t).toISOString().slice(0, 10);

const nextDate = (day: string): string => utcDate(new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS));

/** A chain's rows: its slug is a record's, written as a literal (src/reports/scope.ts says why). */
const onChain = (chain: AnyChainRecord) => `chain = '${chain.slug}'`;
const inScope = (chain: AnyChainRecord) => `${onChain(chain)} AND asset = '${chain.usdc.address}'`;

/** SQL: a payment's time lies in the days `from`..`to` (YYYY-MM-DD, inclusive); zone maps skip the rest. */
const sqlDays = (from: string, to: string) =>
  `block_time >= TIMESTAMP '${from}' AND block_time < TIMESTAMP '${nextDate(to)}'`;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
function checked(day: string): string {
  if (!DATE.test(day)) throw new RangeError(`not a date: ${day}`);
  return day;
}

/** Drops the groups of sealed days among `days` (inside the writer's transaction). */
async function unseal(
  analytics: Analytics,
  chain: AnyChainRecord,
  where: string,
  params?: Params,
): Promise<void> {
  const stale = await analytics.all<{ day: string }>(
    `SELECT strftime(day, '%Y-%m-%d') AS day FROM sealed_days WHERE ${onChain(chain)} AND ${where}`,
    params,
  );
  if (stale.length === 0) return;
  const list = stale.map((s) => `DATE '${checked(s.day)}'`).join(", ");
  await analytics.run(`DELETE FROM payment_days WHERE ${onChain(chain)} AND day IN (${list})`);
  await analytics.run(`DELETE FROM sealed_days WHERE ${onChain(chain)} AND day IN (${list})`);
}

/** Payments were added at times `from`..`to` (seconds): the days between are no longer what was sealed. */
export function unsealTimes(
  analytics: Analytics,
  chain: AnyChainRecord,
  from: number,
  to: number,
): Promise<void> {
  return unseal(analytics, chain, `day BETWEEN DATE '${utcDate(from)}' AND DATE '${utcDate(to)}'`);
}

/** Payments above `block` were deleted (a reorg): the days that held any are no longer what was sealed. */
export function unsealAbove(analytics: Analytics, chain: AnyChainRecord, block: number): Promise<void> {
  return unseal(analytics, chain, "hi_block > $block", { block });
}

/**
 * What every writer of payments calls in its transaction, after adding payments of blocks `lo`..`hi`:
 * the days they touch are unsealed, then days before the latest day written are sealed (at most
 * `limit`). The latest day is that of the last payment, or of `until` (seconds: the writer's
 * checkpoint, which vouches that the days before it are whole) when later.
 */
export async function paymentsWritten(
  analytics: Analytics,
  chain: AnyChainRecord,
  blocks: { lo: number | bigint; hi: number | bigint },
  options: { until?: number; limit?: number } = {},
): Promise<void> {
  const span = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    `SELECT epoch(min(block_time))::BIGINT AS lo, epoch(max(block_time))::BIGINT AS hi FROM payments
     WHERE ${inScope(chain)} AND block_number BETWEEN $lo AND $hi`,
    { lo: blocks.lo, hi: blocks.hi },
  );
  if (span?.lo == null || span.hi == null) return;
  await unsealTimes(analytics, chain, Number(span.lo), Number(span.hi));
  const latest = Math.max(Number(span.hi), options.until ?? 0);
  await sealDays(analytics, chain, {
    before: utcDate(latest),
    from: utcDate(Number(span.lo)),
    limit: options.limit,
  });
}

/**
 * Seals unsealed days before `before` (YYYY-MM-DD, the day of the latest write: it may still grow),
 * from the earliest sealed day, or `from` when earlier, or the first payment's day when none is
 * sealed. Days without payments are sealed too, so the sealed days stay one run. Returns how many.
 */
export async function sealDays(
  analytics: Analytics,
  chain: AnyChainRecord,
  options: { before: string; from?: string; limit?: number },
): Promise<number> {
  const before = checked(options.before);
  const lowest = await analytics.one<{ day: string | null }>(
    `SELECT strftime(min(day), '%Y-%m-%d') AS day FROM sealed_days WHERE ${onChain(chain)}`,
  );
  let from = lowest?.day ?? undefined;
  if (options.from !== undefined && (from === undefined || options.from < from)) from = checked(options.from);
  if (from === undefined) {
    const first = await analytics.one<{ day: string | null }>(
      `SELECT strftime(min(block_time), '%Y-%m-%d') AS day FROM payments WHERE ${inScope(chain)}`,
    );
    if (!first?.day) return 0;
    from = first.day;
  }
  if (from >= before) return 0;
  const days = await analytics.all<{ day: string }>(
    `SELECT strftime(d, '%Y-%m-%d') AS day FROM generate_series(DATE '${from}', DATE '${before}' - 1, INTERVAL 1 DAY) s(d)
     WHERE d::DATE NOT IN (SELECT day FROM sealed_days WHERE ${onChain(chain)})
     ORDER BY d ${options.limit === undefined ? "" : `LIMIT ${Math.max(0, Math.floor(options.limit))}`}`,
  );
  for (const run of runsOf(days.map((d) => d.day))) await seal(analytics, chain, run);
  return days.length;
}

/** Groups the payments of a run of days in one pass, and records each day of it, those without payments too. */
async function seal(analytics: Analytics, chain: AnyChainRecord, run: DayRun): Promise<void> {
  await analytics.run(
    `INSERT INTO payment_days
     SELECT '${chain.slug}', block_time::DATE AS day, payer, pay_to, amount, ${SQL_SCHEME} AS scheme, count(*),
       min(block_number), max(block_number)
     FROM payments WHERE ${inScope(chain)} AND ${sqlDays(run.from, run.to)} GROUP BY ALL ORDER BY day`,
  );
  await analytics.run(
    `INSERT INTO sealed_days
     SELECT '${chain.slug}', s.d::DATE, min(g.first_block), max(g.last_block), coalesce(sum(g.n), 0)::BIGINT
     FROM generate_series(DATE '${run.from}', DATE '${run.to}', INTERVAL 1 DAY) s(d)
       LEFT JOIN (SELECT * FROM payment_days WHERE ${onChain(chain)}
         AND day BETWEEN DATE '${run.from}' AND DATE '${run.to}') g ON g.day = s.d::DATE
     GROUP BY s.d`,
  );
}

/** Sorted dates as runs of consecutive days. */
function runsOf(days: readonly string[]): DayRun[] {
  const runs: DayRun[] = [];
  for (const day of days) {
    const last = runs.at(-1);
    if (last && nextDate(last.to) === day) last.to = day;
    else runs.push({ from: day, to: day });
  }
  return runs;
}

/** Consecutive sealed days whose groups stand for all the window's payments on those days. */
export interface DayRun {
  from: string;
  to: string;
}

/**
 * The sealed days a build of the window (blocks `start` + 1 .. `end`, its first date `first`) may read
 * instead of payments: all their payments lie in the window, and the payments table holds as many on
 * those days as were sealed (checked per run of days with one count over zone maps: a seal that raced a
 * write on another connection is dropped). A day without payments joins runs wherever it is.
 */
export async function usableDays(
  analytics: Analytics,
  chain: AnyChainRecord,
  window: { start: number; end: number; first: string },
): Promise<DayRun[]> {
  const sealed = await analytics.all<{ day: string; payments: bigint }>(
    `SELECT strftime(day, '%Y-%m-%d') AS day, payments FROM sealed_days
     WHERE ${onChain(chain)} AND day BETWEEN $first::DATE - 1 AND $first::DATE + 8
       AND (payments = 0 OR (lo_block > $start AND hi_block <= $end))
     ORDER BY day`,
    window,
  );
  const payments = new Map(sealed.map((d) => [d.day, d.payments]));
  const usable: DayRun[] = [];
  for (const run of runsOf(sealed.map((d) => d.day))) {
    let sum = 0n;
    for (let day = run.from; day <= run.to; day = nextDate(day)) sum += payments.get(day) ?? 0n;
    // Days without payments add nothing; the scan of the gap they leave finds nothing there either.
    if (sum === 0n) continue;
    const held = await analytics.one<{ n: bigint }>(
      `SELECT count(*) AS n FROM payments WHERE ${inScope(chain)} AND ${sqlDays(run.from, run.to)}`,
    );
    if (held?.n === sum) usable.push({ from: run.from, to: run.to });
  }
  return usable;
}

/**
 * SQL of the window's payment groups (payer, pay_to, amount, scheme, day, n, first_block, last_block), `day`
 * counted from the parameter `$first`: the sealed days in `runs` from their groups, every other
 * payment of the window (parameters `$start`, `$end`) grouped from the payments table. A day is never
 * split between the two, so no group appears twice.
 */
export function sqlWindowGroups(
  chain: AnyChainRecord,
  runs: readonly DayRun[],
  inWindow: string,
  day: string,
): string {
  const parts = runs.map(
    (
      r,
    ) => `SELECT payer, pay_to, amount, scheme, (day - $first::DATE)::INTEGER AS day, n, first_block, last_block
       FROM payment_days WHERE ${onChain(chain)} AND day BETWEEN DATE '${r.from}' AND DATE '${r.to}'`,
  );
  // The payments outside the runs: one scan per gap, each a plain time range that zone maps narrow.
  const gaps: string[] = [];
  let after: string | undefined;
  for (const r of runs) {
    gaps.push(
      [after && `block_time >= TIMESTAMP '${after}'`, `block_time < TIMESTAMP '${r.from}'`]
        .filter(Boolean)
        .join(" AND "),
    );
    after = nextDate(r.to);
  }
  gaps.push(after ? `block_time >= TIMESTAMP '${after}'` : "true");
  for (const gap of gaps) {
    parts.push(
      `SELECT payer, pay_to, amount, ${SQL_SCHEME} AS scheme, ${day} AS day, count(*) AS n, min(block_number) AS first_block,
         max(block_number) AS last_block
       FROM payments WHERE ${inWindow} AND ${gap} GROUP BY ALL`,
    );
  }
  return parts.join("\nUNION ALL\n");
}
