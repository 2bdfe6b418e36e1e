/**
 * The merchant's payment ledger and channel charges, per paid call
 * (`npm run bench:ledger [-- --calls N --in-flight N --concurrency N,N --requests N --phase steps,together]`).
 *
 * `steps`: what a paid call adds on the merchant's side, step by step, on a devnet and the ledger's database
 * (PostgreSQL when DATABASE_URL is set, else PGlite), one call at a time, `--calls` each (300) after 30 warm-ups:
 * - `take`: an endpoint that neither writes nor costs upstream takes the payment's row (one INSERT);
 * - `reserve`, nothing in flight: an endpoint that writes or costs upstream, for a payer with no other
 *   payment under way (one transaction: advisory lock, two SELECTs, the INSERT; no chain read);
 * - `reserve`, `--in-flight` (8) under way: the same plus the chain read of the payer's balance and of
 *   those authorizations' state at one block (`eth_blockNumber`, then one JSON-RPC batch);
 * - `finish`: the outcome recorded after settlement (one UPDATE);
 * - `charge`: a voucher's charge of its channel with its ledger row (one conditional UPDATE).
 *
 * `together`: the same writes made by requests that arrive together, as a host gets them, so that group commit
 * (common/db/grouped.ts) can share a statement between them: an HTTP server in this process, its clients in a
 * child process (their CPU not counted), `--concurrency` requests at once (1 and 16), `--requests` (2000) of
 * each kind after a tenth as many warm-ups. Kinds: `empty` (the HTTP exchange alone, the floor), `exact` (a take
 * and a finish, as a paid call of an endpoint without effects), `voucher` (the channel read, reserved and
 * charged with its ledger row, as the SDK's channel server does; each client its own channel). Printed per kind:
 * the CPU per request of this process and (PostgreSQL) of its backends, the server's own processes apart
 * (bench/cpu.ts), statements per request, and the clients' p50 and p90.
 * The stock `@x402/hono` stack has no ledger: these are the project's added costs, to set beside a paid
 * request's whole CPU (`npm run bench:paid`).
 */
import { fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { fileURLToPath } from "node:url";
import type { Channel } from "@x402/evm/batch-settlement/server";
import { migrate } from "../src/common/db/index.ts";
import { channelRequest, inChannelRequest } from "../src/merchant-kit/channels/context.ts";
import { ChannelStore } from "../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../src/merchant-kit/migrations.ts";
import { type PaymentKey, PaymentLedger } from "../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { countingDatabase, openTestDatabase } from "../test/helpers/db.ts";
import { meterCpu } from "./cpu.ts";

function flagValue(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} takes a whole number above 0`);
  return value;
}
function flagList(name: string, fallback: string[]): string[] {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : String(process.argv[at + 1] ?? "").split(",");
}

const KINDS = ["empty", "exact", "voucher"] as const;
type Kind = (typeof KINDS)[number];
const RESOURCE = "https://bench.test/api/store/insert";
const PAYER = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" as const;
const RECEIVER = "0x1111111111111111111111111111111111111111";
const PRICE = 1000n;

if (process.argv.includes("--client")) await client();
else await main();

async function main(): Promise<void> {
  const CALLS = flagValue("calls", 300);
  const IN_FLIGHT = flagValue("in-flight", 8);
  const REQUESTS = flagValue("requests", 2000);
  const concurrencies = flagList("concurrency", ["1", "16"]).map(Number);
  if (!concurrencies.every((c) => Number.isSafeInteger(c) && c > 0)) {
    throw new Error("--concurrency takes whole numbers above 0, separated by commas");
  }
  const phases = flagList("phase", ["steps", "together"]);
  const dbKind = process.env.DATABASE_URL ? "postgres" : "pglite";
  const { db: opened, close } = await openTestDatabase(dbKind);
  await migrate(opened, KIT_MODULE, KIT_MIGRATIONS);
  const { db, counts } = countingDatabase(opened);
  const ledger = new PaymentLedger(db);
  const store = new ChannelStore(db, RECEIVER);
  console.log(
    `bench:ledger on ${os.cpus()[0]?.model.trim()} x${os.cpus().length}, Node ${process.version}, ledger on ${dbKind}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );

  let nonce = 1;
  const nextKey = (payer: `0x${string}` = PAYER): PaymentKey => ({
    payer,
    nonce: `0x${(nonce++).toString(16).padStart(64, "0")}`,
    validBefore: Math.floor(Date.now() / 1000) + 300,
    amount: PRICE,
  });
  let channels = 0;
  /** A fresh channel in the store, as a deposit leaves it. */
  const openChannel = async (): Promise<string> => {
    const c = channelOf(++channels);
    await store.updateChannel(c.channelId, () => c);
    return c.channelId;
  };
  /** A voucher's writes: the check's read, the reservation, the charge with its ledger row. */
  let request = 0;
  const voucher = (channelId: string) =>
    inChannelRequest(async () => {
      const pendingId = `r${++request}`;
      const current = await store.get(channelId);
      if (!current) throw new Error(`channel ${channelId} is not in the store`);
      const signed = (BigInt(current.chargedCumulativeAmount) + PRICE).toString();
      await store.updateChannel(
        channelId,
        (c) =>
          c && {
            ...c,
            signedMaxClaimable: signed,
            signature: `0x${request.toString(16)}`,
            lastRequestTimestamp: Date.now(),
            pendingRequest: { pendingId, signedMaxClaimable: signed, expiresAt: Date.now() + 60_000 },
          },
      );
      (channelRequest() as NonNullable<ReturnType<typeof channelRequest>>).ledger = {
        payer: PAYER,
        nonce: `channel:${channelId}:${signed}:${pendingId}`,
        resource: RESOURCE,
        validBefore: Math.floor(Date.now() / 1000) + 3600,
        amount: PRICE,
      };
      const charged = await store.updateChannel(channelId, (c) =>
        c?.pendingRequest?.pendingId === pendingId
          ? { ...c, chargedCumulativeAmount: signed, pendingRequest: undefined }
          : c,
      );
      if (charged.status !== "updated") throw new Error(`channel ${channelId} was not charged`);
    });

  const results: Record<string, unknown>[] = [];
  if (phases.includes("steps")) {
    const { startDevnet } = await import("../src/chain/devnet/index.ts");
    const { chainFunds } = await import("../src/merchant-kit/payments/ledger/funds.ts");
    const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 1 });
    const funds = chainFunds(devnet.rpc, devnet.usdc as `0x${string}`);
    const buyer = devnet.buyers[0]?.address as `0x${string}`;
    type Step = (key: PaymentKey) => Promise<unknown>;
    /** Times `step` on a fresh key per call, between `before` and `after` (untimed: they set the stage). */
    const time = async (label: string, step: Step, { before, after }: { before?: Step; after?: Step }) => {
      const times: number[] = [];
      for (let i = 0; i < 30 + CALLS; i++) {
        const key = nextKey(buyer);
        await before?.(key);
        const start = performance.now();
        await step(key);
        if (i >= 30) times.push(performance.now() - start);
        await after?.(key);
      }
      times.sort((a, b) => a - b);
      const p50 = quantile(times, 0.5);
      const p90 = quantile(times, 0.9);
      console.log(
        `${label.padEnd(34)} p50 ${p50.toFixed(2).padStart(6)} ms  p90 ${p90.toFixed(2).padStart(6)} ms`,
      );
      results.push({ phase: "steps", label, p50, p90 });
    };
    const take: Step = (key) => ledger.take(key, RESOURCE);
    const reserve: Step = (key) => ledger.reserve(key, RESOURCE, Date.now(), funds);
    const release: Step = (key) => ledger.finish(key, "released");
    console.log(`steps, one call at a time, ${CALLS} calls each`);
    await time("take (no effects)", take, { after: release });
    await time("reserve, nothing in flight", reserve, { after: release });
    // Payments of the same payer that are running: reserve must count them, and ask the chain about them.
    for (const key of Array.from({ length: IN_FLIGHT }, () => nextKey(buyer))) await take(key);
    await time(`reserve, ${IN_FLIGHT} in flight`, reserve, { after: release });
    await time("finish (settled)", (key) => ledger.finish(key, "settled"), { before: take });
    const channelId = await openChannel();
    await time("voucher (read, reserve, charge)", () => voucher(channelId), {});
    await devnet.stop();
  }

  if (phases.includes("together")) {
    // Each client of the child process has a channel of its own, as each buyer does.
    const channelIds: string[] = [];
    for (let i = 0; i < Math.max(...concurrencies); i++) channelIds.push(await openChannel());
    const server = http.createServer((req, res) => {
      const [kind, client] = (req.url ?? "").slice(1).split("/") as [Kind, string];
      const work =
        kind === "exact"
          ? (async () => {
              const key = nextKey();
              if (!(await ledger.take(key, RESOURCE))) throw new Error("a fresh payment's row was taken");
              await ledger.finish(key, "settled");
            })()
          : kind === "voucher"
            ? voucher(channelIds[Number(client)] as string)
            : Promise.resolve();
      work.then(
        () => res.end("ok"),
        (error: unknown) => {
          res.statusCode = 500;
          res.end(String(error));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const child = fork(fileURLToPath(import.meta.url), ["--client"], { execArgv: ["--import", "tsx"] });
    const ask = (message: unknown) =>
      new Promise<{ p50: number; p90: number; failed: number }>((resolve) => {
        child.once("message", resolve as (m: unknown) => void);
        child.send(message as object);
      });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    console.log(`together: ${REQUESTS} requests of each kind over HTTP, this process's CPU counted`);
    for (const concurrency of concurrencies) {
      for (const kind of KINDS) {
        await ask({ base, kind, concurrency, requests: Math.ceil(REQUESTS / 10) });
        const statements = counts.statements.length;
        // The PostgreSQL backends this process holds, sampled at the start and the end only (a sample reads all of
        // /proc, in this process): the pool's connections were opened by the warm-up.
        const meter = meterCpu({ bench: process.pid }, 3_600_000);
        const cpu = process.cpuUsage();
        const measured = await ask({ base, kind, concurrency, requests: REQUESTS });
        const used = process.cpuUsage(cpu);
        const count = meter.stop();
        if (measured.failed > 0) throw new Error(`${measured.failed} ${kind} requests failed`);
        const processMs = (used.user + used.system) / 1000 / REQUESTS;
        const backendsMs = (count.backends.bench ?? 0) / REQUESTS;
        const row = {
          phase: "together",
          kind,
          concurrency,
          cpuMs: processMs + backendsMs,
          processMs,
          backendsMs,
          serverOwnMs: count.postgresServer / REQUESTS,
          statements: (counts.statements.length - statements) / REQUESTS,
          p50: measured.p50,
          p90: measured.p90,
        };
        results.push(row);
        const split =
          dbKind === "postgres"
            ? ` (process ${processMs.toFixed(3)} + its backends ${backendsMs.toFixed(3)}; the server's own ${row.serverOwnMs.toFixed(3)} apart)`
            : "";
        console.log(
          `${`${kind}, ${concurrency} at once`.padEnd(20)} CPU ${row.cpuMs.toFixed(3)} ms a request${split}, ${row.statements.toFixed(2)} statements a request, p50 ${row.p50.toFixed(2)} ms, p90 ${row.p90.toFixed(2)} ms`,
        );
      }
    }
    child.send({ stop: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  console.log(JSON.stringify({ bench: "ledger", db: dbKind, results }));
  await close();
}

/** The child: sends what it is asked, `concurrency` at a time, and answers with the latencies. */
async function client(): Promise<void> {
  const { Agent, request } = await import("undici");
  const agent = new Agent({ connections: 64 });
  process.on(
    "message",
    async (m: { base: string; kind: Kind; concurrency: number; requests: number; stop?: true }) => {
      if (m.stop) {
        await agent.close();
        process.exit(0);
      }
      const times: number[] = [];
      let failed = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: m.concurrency }, async (_, client) => {
          while (next++ < m.requests) {
            const start = performance.now();
            const answer = await request(`${m.base}/${m.kind}/${client}`, { dispatcher: agent });
            await answer.body.text();
            if (answer.statusCode !== 200) failed++;
            times.push(performance.now() - start);
          }
        }),
      );
      times.sort((a, b) => a - b);
      process.send?.({ p50: quantile(times, 0.5), p90: quantile(times, 0.9), failed });
    },
  );
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
}

/** A channel as the SDK's server writes one after a deposit. */
function channelOf(n: number): Channel {
  return {
    channelId: `0x${n.toString(16).padStart(64, "0")}`,
    channelConfig: {
      payer: PAYER,
      payerAuthorizer: PAYER,
      receiver: RECEIVER,
      receiverAuthorizer: "0x3333333333333333333333333333333333333333",
      token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      withdrawDelay: 86_400,
      salt: `0x${"0".repeat(64)}`,
    },
    chargedCumulativeAmount: "0",
    signedMaxClaimable: "0",
    signature: "0x",
    balance: "1000000000000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: Date.now(),
    lastRequestTimestamp: Date.now(),
  };
}
