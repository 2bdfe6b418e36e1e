/**
 * The clustering rules swept across a gamer's knob (issue 63, item 4), each on a week with genuine demand:
 * a funder's share, decoy purchases at other merchants, and how widely exchange withdrawals are spread.
 * At every knob value the week is built whole and three things are read from what it flags:
 *
 * - the farm's flagged share (of its dollars at the merchant) never falls by more than 10 points between
 *   neighbouring knob values, except at a step the gamer paid for: the test's own ledger shows it spent, in
 *   money that left its control and stays gone (decoys at other merchants' prices), at least half of the
 *   volume the step hid (the price test is a yes or no for a band, so a farm whose band becomes a price
 *   passes at once: where that stays, what it costs is the measure);
 * - wherever the farm escapes fully, the ledger shows it spent at least half of what it hid;
 * - the genuine look-alikes (customers of one exchange hour, topped up by friends with the farm's own share,
 *   a treasury's agents, metered buyers withdrawn in the farm's own spread) lose under 2% of their revenue.
 *
 * The curves are printed (DEBUG_SWEEPS=1) and written into docs/screens.md beside each rule.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { THRESHOLDS } from "../../src/reports/screens/index.ts";
import { addr, END, payment, START, transfer } from "../helpers/data.ts";
import { DAY, genuine, listing, payers, rng, WEEK, wallets } from "../helpers/scenarios.ts";
import {
  removeSweepStores,
  type SweepStores,
  sweepPoints,
  sweepStores,
  windowFlags,
} from "../helpers/window-flags.ts";

/** Blocks are 2 s apart (test/helpers/data.ts), and END is a UTC midnight. */
const HOUR = DAY / 24;
const MINUTE = HOUR / 60;

const m = addr("sweep-merchant");
const metered = addr("sweep-metered-merchant");
const listed = addr("sweep-listed-merchant");
const FARM = 12;
const farm = wallets("sweep-farm", FARM);

/** An exchange: a hub by its depositors, 50 wallets each withdrawn from a source of its own. */
function exchange(label: string) {
  const wallet = addr(label);
  const records = wallets(`${label}-depositor`, THRESHOLDS.hubMinSenders).flatMap((w, i) => [
    transfer(addr(`${label}-own-${i}`), w, 2_000_000, START - 6 * WEEK + i),
    transfer(w, wallet, 1_000_000, START - 6 * WEEK + 100 + i),
  ]);
  return { wallet, records };
}
const cex = exchange("sweep-exchange");

/** Each of `n` withdrawals spread evenly over `blocks`, centred on a UTC midnight 10 days before the window's end. */
function spread(n: number, blocks: number) {
  const midnight = END - 10 * DAY;
  return Array.from({ length: n }, (_, i) =>
    Math.round(midnight - blocks / 2 + (n === 1 ? 0 : (i * blocks) / (n - 1))),
  );
}

interface Week {
  records: object[];
  /** What the gamer spent that left its control and stays gone (atomic). */
  spent: number;
  /** Each genuine group: its wallets, the merchant they pay, and what they paid it (atomic). */
  genuine: Map<string, { wallets: string[]; merchant: string; paid: number }>;
}

/**
 * The week every sweep plays: the farm's tiny charges at `m` beside thirty genuine buyers, and the look-alikes:
 * the genuine buyers are topped up by friends (a different one each) with `friendShare` of their money beside
 * an exchange withdrawal; twenty metered buyers of `metered` are withdrawn from the exchange at the times
 * `onRamp` gives, twenty more from wallets of their own; a treasury funds eight agents that pay `listed`
 * its listed price; and 400 buyers of 40 other merchants. What does not depend on the knobs (`COMMON`) is in
 * the store each point copies (`commonStore`); the week's records are the rest.
 */
function baseWeek(friendShare: number, onRamp: readonly number[]): Week {
  const { buyers, hour } = COMMON;
  if (onRamp.length !== hour.length) throw new Error(`the on-ramp withdraws ${hour.length} wallets`);
  const records: object[] = [];
  buyers.forEach((w, i) => {
    const total = 40_000_000;
    const friend = Math.round(total * friendShare);
    // Each withdrew at a time of its own over six weeks, a day and a half apart.
    const at = START - 6 * WEEK + i * 3 * (DAY / 2) + 1_000;
    records.push(transfer(cex.wallet, w, total - friend + 1, at));
    if (friend > 0) records.push(transfer(addr(`sweep-friend-${i}`), w, friend, at + 7));
  });
  records.push(...hour.map((w, i) => transfer(cex.wallet, w, 5_000_000, onRamp[i] as number)));
  return { records, spent: 0, genuine: COMMON.genuine };
}

/** The records of every week whatever its knobs, and its genuine groups. */
function common() {
  const next = rng(63);
  const base = genuine(m, [10_000, 20_000, 50_000], 30, 63);
  const buyers = [...new Set(base.records.map((r) => (r as { payer: string }).payer))];
  const records: object[] = [...cex.records, ...base.records];
  const hour = wallets("sweep-onramp", 20);
  const own = wallets("sweep-own-funded", 20);
  const meteredPays = [...hour, ...own].flatMap((w) =>
    payers(metered, [w], 5 + next(20), () => 200 + next(8_000)),
  );
  records.push(
    ...own.map((w, i) => transfer(addr(`sweep-own-${i}`), w, 5_000_000, START - WEEK + i * 20_000)),
    ...meteredPays,
  );
  const treasury = addr("sweep-treasury");
  const agents = wallets("sweep-agent", 8);
  const agentPays = payers(listed, agents, 40, () => 10_000);
  records.push(
    listing(listed, "lookup", 0.01),
    ...agents.map((w, i) => transfer(treasury, w, 1_000_000, START - WEEK + i)),
    ...agentPays,
  );
  // The rest of the week: 400 buyers of 40 other merchants, whom the null model's "payers outside the group"
  // stand for (a real week has hundreds of thousands).
  const crowd = wallets("sweep-crowd", 400);
  records.push(
    ...crowd.flatMap((w, i) =>
      payers(addr(`sweep-other-merchant-${i % 40}`), [w], 2, () => 5_000 + next(50_000)),
    ),
    ...farmCharges(),
  );
  const sum = (rs: readonly object[]) => rs.reduce((s, r) => s + Number((r as { amount: string }).amount), 0);
  const genuineGroups = new Map([
    ["friends' top-ups", { wallets: buyers, merchant: m, paid: sum(base.records) }],
    ["an exchange's customers", { wallets: [...hour, ...own], merchant: metered, paid: sum(meteredPays) }],
    ["a treasury's agents", { wallets: agents, merchant: listed, paid: sum(agentPays) }],
  ]);
  return { records, buyers, hour, genuine: genuineGroups };
}

/** The farm's tiny charges: 150 a wallet, amounts from 100 to 2,000 atomic units, never one twice in a row. */
function farmCharges() {
  const next = rng(64);
  return payers(m, farm, 150, () => 100 + next(1_900));
}
const FARM_PAID = farmCharges().reduce((s, r) => s + Number(r.amount), 0);
const COMMON = common();

/**
 * A store holding `COMMON`'s records alone, made once: each point starts from a copy of it and imports its week's
 * records on top, instead of importing the 4,200 records every week shares again for each of the 36 points. And
 * most of a point's time is the build's fixed cost on a small week: `REPLICAS` points share one build, each on
 * a copy of the common records of its own (test/helpers/window-flags.ts, `sweepPoints`).
 */
const REPLICAS = 14;
let stores: SweepStores | undefined;
// Its copies are tens of thousands of records: an import of minutes on a loaded machine, not seconds.
beforeAll(async () => {
  stores = await sweepStores(COMMON.records, REPLICAS);
}, 300_000);
afterAll(() => removeSweepStores(stores));

interface Point {
  knob: string;
  farmFlagged: number;
  hidden: number;
  spent: number;
  genuineLoss: Record<string, number>;
}

/**
 * Builds the weeks, in the order given, and reads, per payer and merchant, what each flagged: a point a week.
 * Two stores at a time gained nothing on a loaded machine (each a DuckDB of one thread, the two cores busy).
 */
async function measureAll(weeks: readonly (readonly [string, Week])[]): Promise<Point[]> {
  const points = weeks.map(([knob, week]) => ({ knob, ...week }));
  return sweepPoints(stores as SweepStores, points, async (analytics, batch) => {
    const flags = await windowFlags(analytics);
    return batch.map(([replica, week]) => {
      const flagged = (wallets: readonly string[], merchant: string) =>
        flags(replica.group({ wallets, merchant })).flagged;
      const farmFlagged = flagged(farm, m) / FARM_PAID;
      const genuineLoss: Record<string, number> = {};
      for (const [name, g] of week.genuine) genuineLoss[name] = flagged(g.wallets, g.merchant) / g.paid;
      return {
        knob: week.knob,
        farmFlagged,
        hidden: FARM_PAID * (1 - farmFlagged),
        spent: week.spent,
        genuineLoss,
      };
    });
  });
}

/** The sweep's assertions (the module's comment), and its curve for the docs. */
function expectHolds(points: readonly Point[]) {
  if (process.env.DEBUG_SWEEPS) {
    for (const p of points) {
      const loss = Object.values(p.genuineLoss).map((l) => (l * 100).toFixed(1));
      console.log(
        `| ${p.knob} | ${(p.farmFlagged * 100).toFixed(0)}% | $${(p.hidden / 1e6).toFixed(2)} | $${(p.spent / 1e6).toFixed(2)} | ${loss.join(" / ")} |`,
      );
    }
  }
  points.forEach((p, i) => {
    for (const [name, loss] of Object.entries(p.genuineLoss)) {
      expect(loss, `${name} at ${p.knob}`).toBeLessThan(0.02);
    }
    if (p.farmFlagged === 0) expect(p.spent, `escape at ${p.knob}`).toBeGreaterThanOrEqual(p.hidden / 2);
    const before = points[i - 1];
    if (before && before.farmFlagged - p.farmFlagged > 0.1) {
      expect(p.spent, `step from ${before.knob} to ${p.knob}`).toBeGreaterThanOrEqual(p.hidden / 2);
    }
  });
}

/** The farm's exchange withdrawals, `blocks` wide, and the exchange-hour customers withdrawn in the same spread. */
function withdrawals(blocks: number) {
  return spread(FARM, blocks);
}

describe("sweeps of the clustering rules (issue 63)", () => {
  it("funding: a funder's share of each farm wallet from 0 to 100%, at two levels, the rest withdrawn over three days", async () => {
    const shares = [0, 0.01, 0.03, 0.05, 0.1, 0.15, 0.2, 0.24, 0.25, 0.3, 0.5, 0.75, 1];
    const owner = addr("sweep-owner");
    const feeders = wallets("sweep-feeder", 3);
    // Each farm wallet's withdrawal 6 hours after the last: no day of them holds five.
    const times = withdrawals(3 * DAY);
    const weeks = shares.map((s) => {
      const week = baseWeek(s, spread(20, HOUR));
      const each = 5_000_000;
      const part = (total: number) => Math.round(total * s);
      week.records.push(
        ...feeders.flatMap((f, j) => [
          transfer(cex.wallet, f, 4 * each - part(4 * each) + 1, START - 5 * WEEK + j * DAY),
          ...(s > 0 ? [transfer(owner, f, part(4 * each), START - 5 * WEEK + j * DAY + 10)] : []),
        ]),
        ...farm.flatMap((w, i) => [
          transfer(cex.wallet, w, each - part(each) + 1, times[i] as number),
          ...(s > 0 ? [transfer(feeders[i % 3] as string, w, part(each), (times[i] as number) + 10)] : []),
        ]),
      );
      return [`${Math.round(s * 100)}%`, week] as const;
    });
    expectHolds(await measureAll(weeks));
  });

  it("diversity: decoy purchases at 0 to 10 other merchants, a cent each and five cents each", async () => {
    const weeks: (readonly [string, Week])[] = [];
    const counts = [0, 1, 2, 3, 4, 6, 10];
    for (const cost of [10_000, 50_000]) {
      for (const decoys of counts) {
        const week = baseWeek(0.1, spread(20, HOUR));
        // The farm withdrawn in one minute: what the decoys must hide it from.
        const times = withdrawals(MINUTE);
        week.records.push(...farm.map((w, i) => transfer(cex.wallet, w, 5_000_000, times[i] as number)));
        for (let j = 0; j < decoys; j++) {
          const other = addr(`sweep-decoy-merchant-${j}`);
          // Each decoy merchant has customers of its own, and lists the price the farm pays it.
          week.records.push(
            listing(other, "item", cost / 1e6),
            ...payers(other, wallets(`sweep-decoy-customer-${j}`, 3), 4, () => cost),
            ...farm.map((w, i) =>
              payment({ payer: w, payTo: other, amount: cost, block: START + 500 + i * 7 + j }),
            ),
          );
          week.spent += FARM * cost;
        }
        weeks.push([`${decoys} × $${(cost / 1e6).toFixed(2)}`, week]);
      }
    }
    const points = await measureAll(weeks);
    expectHolds(points.slice(0, counts.length));
    expectHolds(points.slice(counts.length));
  });

  it("time windows: exchange withdrawals spread from one minute to three days across UTC midnights", async () => {
    const spreads: [string, number][] = [
      ["1 minute", MINUTE],
      ["1 hour", HOUR],
      ["6 hours", 6 * HOUR],
      ["12 hours", 12 * HOUR],
      ["1 day", DAY],
      ["1.5 days", 1.5 * DAY],
      ["2 days", 2 * DAY],
      ["2.5 days", 2.5 * DAY],
      ["3 days", 3 * DAY],
    ];
    const weeks = spreads.map(([name, blocks]) => {
      // The exchange-hour customers are withdrawn in the farm's own spread: a launch, not a farm.
      const week = baseWeek(0.1, spread(20, blocks));
      const times = withdrawals(blocks);
      week.records.push(...farm.map((w, i) => transfer(cex.wallet, w, 5_000_000, times[i] as number)));
      return [name, week] as const;
    });
    expectHolds(await measureAll(weeks));
  });
});
