/**
 * `npm run test:stress [-- --quick] [--only NAME,...] [--seed N]`: the reliability scenarios, each against
 * real processes on 127.0.0.1, bounded in count and time. Prints each scenario's figures and the goals it
 * missed; exits 1 when any goal was missed. docs/reliability.md records the figures.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { damagedStores } from "./damaged-stores.ts";
import { httpLoad } from "./http-load.ts";
import { importMalformed } from "./import-malformed.ts";
import { indexerKill } from "./indexer-kill.ts";
import type { Outcome, Scenario } from "./scenario.ts";

const SCENARIOS: readonly Scenario[] = [importMalformed, indexerKill, httpLoad, damagedStores];

const { values } = parseArgs({
  options: { quick: { type: "boolean" }, only: { type: "string" }, seed: { type: "string" } },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const only = values.only?.split(",").map((s) => s.trim());
const unknown = only?.filter((name) => !SCENARIOS.some((s) => s.name === name)) ?? [];
if (unknown.length > 0 || !Number.isInteger(seed)) {
  console.error(
    `test:stress: ${unknown.length > 0 ? `no scenario ${unknown.join(", ")} (there are ${SCENARIOS.map((s) => s.name).join(", ")})` : `--seed takes an integer, not ${values.seed}`}`,
  );
  process.exit(2);
}

const cpu = os.cpus()[0]?.model ?? "unknown CPU";
console.log(
  `x402-merchants stress: ${new Date().toISOString().slice(0, 10)}, ${cpu}, ${os.cpus().length} cores, Node ${process.version}, seed ${seed}${values.quick ? ", quick" : ""}`,
);
let missed = 0;
for (const scenario of SCENARIOS.filter((s) => !only || only.includes(s.name))) {
  console.log(`\n## ${scenario.name}\n${scenario.about}`);
  const started = performance.now();
  let outcome: Outcome;
  try {
    outcome = await scenario.run({
      seed,
      quick: values.quick ?? false,
      say: (message) => process.stderr.write(`  [${scenario.name}] ${message}\n`),
    });
  } catch (error) {
    outcome = { figures: {}, failures: [`did not finish: ${(error as Error).stack ?? error}`] };
  }
  outcome.figures["time (s)"] = Number(((performance.now() - started) / 1000).toFixed(1));
  for (const [name, value] of Object.entries(outcome.figures)) console.log(`- ${name}: ${value}`);
  for (const failure of outcome.failures) console.log(`- MISSED: ${failure}`);
  if (outcome.failures.length === 0) console.log("- every goal met");
  missed += outcome.failures.length;
}
console.log(missed === 0 ? "\nall goals met" : `\n${missed} goals missed`);
process.exit(missed === 0 ? 0 : 1);
