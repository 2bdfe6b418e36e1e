/**
 * The merchant's payment ledger, per paid call (`npm run bench:ledger [-- --calls N --in-flight N]`).
 *
 * What a paid call adds on the merchant's side, step by step, on a devnet and the ledger's database
 * (PostgreSQL when DATABASE_URL is set, else PGlite), one call at a time, `--calls` each (300) after 30
 * warm-ups:
 * - `take`: an endpoint that neither writes nor costs upstream takes the payment's row (one INSERT);
 * - `reserve`, nothing in flight: an endpoint that writes or costs upstream, for a payer with no other
 *   payment under way (one transaction: advisory lock, two SELECTs, the INSERT; no chain read);
 * - `reserve`, `--in-flight` (8) under way: the same plus the chain read of the payer's balance and of
 *   those authorizations' state at one block (`eth_blockNumber`, then one JSON-RPC batch);
 * - `finish`: the outcome recorded after settlement (one UPDATE).
 * The stock `@x402/hono` stack has no ledger: these are the project's added costs, to set beside a paid
 * request's 30-40 ms of CPU and 600-900 ms under load (`npm run bench:paid`).
 */
import os from "node:os";
import { startDevnet } from "../src/chain/devnet/index.ts";
import { migrate } from "../src/common/db/index.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../src/merchant-kit/migrations.ts";
import { chainFunds } from "../src/merchant-kit/payments/funds.ts";
import { type PaymentKey, PaymentLedger } from "../src/merchant-kit/payments/payment-ledger.ts";
import { openTestDatabase } from "../test/helpers/db.ts";

function flagValue(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} takes a whole number above 0`);
  return value;
}
const CALLS = flagValue("calls", 300);
const IN_FLIGHT = flagValue("in-flight", 8);
const WARM_UP = 30;
const RESOURCE = "https://bench.test/api/store/insert";
const kind = process.env.DATABASE_URL ? "postgres" : "pglite";

const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 1 });
const { db, close } = await openTestDatabase(kind);
await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
const ledger = new PaymentLedger(db);
const funds = chainFunds(devnet.rpc, devnet.usdc as `0x${string}`);
const payer = devnet.buyers[0]?.address as `0x${string}`;

let nonce = 1;
const nextKey = (): PaymentKey => ({
  payer,
  nonce: `0x${(nonce++).toString(16).padStart(64, "0")}`,
  validBefore: Math.floor(Date.now() / 1000) + 300,
  amount: 1000n,
});

function quantile(sorted: number[], q: number): string {
  return (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN).toFixed(2);
}

type Step = (key: PaymentKey) => Promise<unknown>;

/** Times `step` on a fresh key per call, between `before` and `after` (untimed: they set the stage). */
async function time(label: string, step: Step, { before, after }: { before?: Step; after?: Step }) {
  const times: number[] = [];
  for (let i = 0; i < WARM_UP + CALLS; i++) {
    const key = nextKey();
    await before?.(key);
    const start = performance.now();
    await step(key);
    if (i >= WARM_UP) times.push(performance.now() - start);
    await after?.(key);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(34)} p50 ${quantile(times, 0.5).padStart(6)} ms  p90 ${quantile(times, 0.9).padStart(6)} ms`,
  );
  return { label, p50: Number(quantile(times, 0.5)), p90: Number(quantile(times, 0.9)) };
}

const take: Step = (key) => ledger.take(key, RESOURCE);
const reserve: Step = (key) => ledger.reserve(key, RESOURCE, Date.now(), funds);
const release: Step = (key) => ledger.finish(key, "released");
console.log(
  `bench:ledger on ${os.cpus()[0]?.model.trim()} x${os.cpus().length}, Node ${process.version}, ledger on ${kind}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${CALLS} calls each`,
);
const results = [
  await time("take (no effects)", take, { after: release }),
  await time("reserve, nothing in flight", reserve, { after: release }),
];
// Payments of the same payer that are running: reserve must count them, and ask the chain about them.
for (const key of Array.from({ length: IN_FLIGHT }, nextKey)) await take(key);
results.push(await time(`reserve, ${IN_FLIGHT} in flight`, reserve, { after: release }));
results.push(await time("finish (settled)", (key) => ledger.finish(key, "settled"), { before: take }));
console.log(JSON.stringify({ bench: "ledger", db: kind, calls: CALLS, inFlight: IN_FLIGHT, results }));
await close();
await devnet.stop();
