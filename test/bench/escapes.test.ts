/**
 * The red team in CI (issue 84): every strategy of bench/escapes/ with quick values played at its one or two
 * beside the genuine look-alikes, on the week `npm run bench:escapes` plays (the others, in the full run only). At every point every look-alike loses under 2%
 * of its revenue; where the catalogue marks no known limit, the bar holds: the fake payments hide nothing,
 * or the money the gamer's ledger says is gone is at least half the dollars they hide. A known limit's points are
 * printed, and so is a known limit the screens have closed since (its mark can go).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bench, knownOpen, meetsBar, type Point } from "../../bench/escapes/measure.ts";
import { showKnob, table } from "../../bench/escapes/report.ts";
import { STRATEGIES } from "../../bench/escapes/strategies.ts";
import { world } from "../../bench/escapes/world.ts";

let bench: Bench;
const points: Point[] = [];
beforeAll(async () => {
  bench = await Bench.open();
}, 60_000);
afterAll(() => {
  bench?.close();
  if (points.length > 0) console.log(`bench/escapes, quick values:\n${table(points)}`);
});

describe("the red team's catalogue", () => {
  it("holds the kinds the adversarial week used and ten of its own, each beside look-alikes of the week", () => {
    expect(STRATEGIES.filter((s) => s.origin === "issue 84").length).toBeGreaterThanOrEqual(10);
    expect(STRATEGIES.filter((s) => s.origin === "invented").length).toBeGreaterThanOrEqual(10);
    expect(new Set(STRATEGIES.map((s) => s.name)).size).toBe(STRATEGIES.length);
    const names = new Set(world().lookAlikes.keys());
    for (const s of STRATEGIES) {
      expect(s.lookAlikes.length, s.name).toBeGreaterThan(0);
      for (const l of s.lookAlikes) expect(names.has(l), `${s.name}: ${l}`).toBe(true);
      for (const v of s.quick) expect(s.values, s.name).toContain(v);
    }
  });
});

describe("the red team, at its quick values", () => {
  // A strategy with no quick value is played by the full run alone (`npm run bench:escapes`).
  for (const s of STRATEGIES.filter((x) => x.quick.length > 0)) {
    it(`${s.name}: ${s.knownLimit ? "look-alikes under 2% (a known limit where open)" : "closed, look-alikes under 2%"}`, async () => {
      for (const v of s.quick) {
        const p = await bench.measure(s, v);
        points.push(p);
        const at = `${s.name} at ${showKnob(s, v)}`;
        for (const [name, lost] of p.lost) expect(lost, `${name}, beside ${at}`).toBeLessThan(0.02);
        if (!knownOpen(p))
          expect(meetsBar(p), `${at}: $${p.gone / 1e6} gone for $${p.hidden / 1e6} hidden`).toBe(true);
        else if (meetsBar(p))
          console.log(`${at}: the known limit is closed now; its mark in strategies.ts can go`);
        else
          console.log(
            `${at}: open (known limit), ${p.hiddenTx} of ${p.fakeTx} fake payments hidden, $${p.gone / 1e6} gone`,
          );
      }
    }, 30_000);
  }
});
