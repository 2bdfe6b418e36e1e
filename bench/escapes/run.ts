/**
 * The red team (issue 84): every escape strategy of the catalogue (`strategies.ts`) played at each of its knob
 * values beside the genuine look-alikes (`world.ts`), and a table of what each hid, what it cost and what the
 * look-alikes lost.
 *
 *   npm run bench:escapes [-- --quick] [-- --only NAME[,NAME...]] [-- --catalogue]
 *
 * `--quick` plays each strategy's one or two quick values (what CI plays: test/bench/escapes.test.ts);
 * `--catalogue` prints the strategies, their knobs, look-alikes and ledgers, and plays nothing. The output is
 * markdown, written into docs/screens.md ("The red team"); progress goes to stderr.
 */
import { Bench, type Point } from "./measure.ts";
import { catalogue, showKnob, table, verdicts, worstLoss } from "./report.ts";
import { STRATEGIES } from "./strategies.ts";

function parse(argv: readonly string[]) {
  const known = new Set(STRATEGIES.map((s) => s.name));
  const options = new Set(["--quick", "--only", "--catalogue"]);
  const at = argv.indexOf("--only");
  const only = at >= 0 ? (argv[at + 1] ?? "").split(",") : [];
  const stray = argv.find((a, i) => !options.has(a) && !(at >= 0 && i === at + 1));
  const missing = only.find((n) => !known.has(n));
  if (stray !== undefined || missing !== undefined) {
    const what = stray !== undefined ? `unknown argument ${stray}` : `no strategy named "${missing}"`;
    console.error(`bench:escapes: ${what} (strategies: ${[...known].join(", ")})`);
    process.exit(2);
  }
  return {
    quick: argv.includes("--quick"),
    list: argv.includes("--catalogue"),
    strategies: at >= 0 ? STRATEGIES.filter((s) => only.includes(s.name)) : STRATEGIES,
  };
}

async function main() {
  const { quick, list, strategies } = parse(process.argv.slice(2));
  if (list) {
    console.log(catalogue(strategies));
    return;
  }
  const started = performance.now();
  const bench = await Bench.open();
  const points: Point[] = [];
  try {
    for (const s of strategies)
      for (const v of quick ? s.quick : s.values) {
        const p = await bench.measure(s, v);
        points.push(p);
        console.error(
          `${s.name} at ${showKnob(s, v)}: ${p.hiddenTx} of ${p.fakeTx} fake payments hidden (${Math.round(p.ms)} ms)`,
        );
      }
  } finally {
    bench.close();
  }
  console.log(`${table(points)}\n\n${verdicts(points)}\n\n${worstLoss(points)}`);
  console.error(`${points.length} points in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

await main();
