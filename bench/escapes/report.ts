/**
 * The red team's output (`run.ts`, test/bench/escapes.test.ts): the table of every point, each strategy's verdict,
 * and the catalogue as docs/screens.md lists it.
 */
import { knownOpen, meetsBar, ownLoss, type Point } from "./measure.ts";
import type { Knob, Strategy } from "./strategy.ts";

const dollars = (atomic: number) => `$${(atomic / 1e6).toFixed(atomic > 0 && atomic < 100_000 ? 4 : 2)}`;
export const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
export const showKnob = (s: Strategy, v: Knob) => (s.show ? s.show(v) : String(v));

/** The bar's column: met or not, and where that disagrees with the catalogue's known limit. */
function bar(p: Point): string {
  const met = meetsBar(p);
  if (knownOpen(p)) return met ? "met (its known limit can go)" : "open: known limit";
  return met ? "met" : "**MISSED**";
}

/** One row a point, as markdown. */
export function table(points: readonly Point[]): string {
  const lines = [
    "| strategy | knob | fake $ (tx) | hidden $ (tx) | money gone | gone / hidden | its look-alike lost | bar |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const p of points) {
    const ratio = p.hidden > 0 ? (p.gone / p.hidden).toFixed(2) : "-";
    lines.push(
      `| ${p.strategy.name} | ${showKnob(p.strategy, p.knob)} | ${dollars(p.fake)} (${p.fakeTx}) | ${dollars(p.hidden)} (${p.hiddenTx}) | ${dollars(p.gone)} | ${ratio} | ${percent(ownLoss(p))} | ${bar(p)} |`,
    );
  }
  return lines.join("\n");
}

/** Per strategy: closed (the bar met at every value played) or open where, and why. */
export function verdicts(points: readonly Point[]): string {
  const out: string[] = [];
  for (const s of new Set(points.map((p) => p.strategy))) {
    const open = points.filter((p) => p.strategy === s && !meetsBar(p));
    const status =
      open.length === 0 ? "closed" : `open at ${open.map((p) => showKnob(s, p.knob)).join(", ")}`;
    const why = open.length > 0 && s.knownLimit ? `: ${s.knownLimit.why}` : "";
    out.push(`- **${s.name}**: ${status}${why}.`);
  }
  return out.join("\n");
}

/** The worst loss of any look-alike at any point, and where. */
export function worstLoss(points: readonly Point[]): string {
  const all = points.flatMap((p) =>
    [...p.lost].map(([name, loss]) => ({
      name,
      loss,
      at: `${p.strategy.name} at ${showKnob(p.strategy, p.knob)}`,
    })),
  );
  const worst = all.sort((a, b) => b.loss - a.loss)[0];
  if (!worst || worst.loss === 0) return "Every look-alike lost 0.0% of its revenue at every point.";
  return `The most any look-alike lost at any point: ${percent(worst.loss)} (${worst.name}, beside ${worst.at}).`;
}

/** The catalogue: each strategy, its knob, its look-alikes and its ledger at its first quick value (or first value). */
export function catalogue(strategies: readonly Strategy[]): string {
  return strategies
    .map((s) => {
      const first = (s.quick[0] ?? s.values[0]) as Knob;
      const ledger = s
        .play(first)
        .ledger.map((l) => `${l.gone ? "gone" : "not gone"} $${l.usd.toFixed(2)} (${l.item})`)
        .join("; ");
      return `- **${s.name}** (${s.origin}). ${s.title} Knob: ${s.knob}. Beside: ${s.lookAlikes.join("; ")}. Ledger at ${showKnob(s, first)}: ${ledger}.`;
    })
    .join("\n");
}
