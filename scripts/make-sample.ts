/**
 * Writes `sample/week.ndjson`: a small, readable synthetic week (`npm run sample`).
 *
 * Twelve named merchants carry the story: every flag kind is planted on one of them, and the genuine
 * demand that must pass (a large customer, a steady integration, metered charges) on others. Fourteen
 * small unnamed merchants (listed on api-<n>.example) form the long tail; they are there because a
 * prober must pay at least 20 different merchants to be one.
 *
 * The week ends at Base block 53,955,727, produced at 2026-11-15T00:00:01Z.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME, writeSynthetic } from "./synthetic.ts";

const NAMES = [
  "social.example",
  "inference.example",
  "utility.example",
  "search.example",
  "weather.example",
  "market-data.example",
  "translate.example",
  "images.example",
  "scrape.example",
  "speech.example",
  "maps.example",
  "news.example",
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const file = path.join(root, "sample", "week.ndjson");
fs.mkdirSync(path.dirname(file), { recursive: true });

const summary = await writeSynthetic(file, {
  seed: 402,
  merchants: 26,
  buyers: 200,
  payments: 5_000,
  endBlock: DEFAULT_END_BLOCK,
  endTime: DEFAULT_END_TIME,
  names: NAMES,
  claimed: [0, 1, 2],
  frozen: [8],
  roles: {
    large_customer: [1],
    steady_integration: [2],
    self_payment: [3],
    merchant_funded: [4],
    ring_transfer: [5],
    ring_reciprocal: [6, 7],
    tiny_repeat: [8],
    metered: [9],
  },
  probers: 2,
});

const { roles, wallets, ...counts } = summary;
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}: ${JSON.stringify(counts)}\n`);
for (const [role, merchants] of Object.entries(roles)) {
  process.stdout.write(`  ${role.padEnd(18)} ${merchants.join(", ")}\n`);
}
