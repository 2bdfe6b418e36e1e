/**
 * HTTP load on a merchant host run as a user runs it (`devnet` for the chain and facilitator, `serve
 * --only utility` for the merchant): unpaid and malformed payment headers at high concurrency, paid calls
 * at moderate concurrency, then SIGTERM in the middle of a load. No answer may be a 5xx, no request
 * started before the signal may be cut off, and the process must be gone within 10 s.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { tempDir } from "../helpers/indexer.ts";
import { seeded } from "../helpers/rpc-proxy.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";
import { type Cli, percentile, rssMb, startCli } from "./child.ts";
import type { Scenario } from "./scenario.ts";

const FREE_PORTS = { X402M_FACILITATOR_PORT: "0", X402M_UTILITY_PORT: "0" };
const CALC = "/api/calc?expr=2%2B3";

interface Tally {
  statuses: Map<number, number>;
  errors: Map<string, number>;
  ms: number[];
}

const tally = (): Tally => ({ statuses: new Map(), errors: new Map(), ms: [] });
const count = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
const fiveXX = (t: Tally) => [...t.statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
const errorsOf = (t: Tally) => [...t.errors.values()].reduce((n, c) => n + c, 0);
const describe = (t: Tally) =>
  [...[...t.statuses].map(([s, n]) => `${s}x${n}`), ...[...t.errors].map(([e, n]) => `${e}x${n}`)].join(" ");

/** Runs `total` requests made by `make`, `concurrency` at a time, into `t`. */
async function load(
  total: number,
  concurrency: number,
  make: (i: number) => Promise<Response>,
  t: Tally,
  stop?: () => boolean,
) {
  let next = 0;
  const worker = async () => {
    while (next < total && !stop?.()) {
      const i = next++;
      const started = performance.now();
      try {
        const res = await make(i);
        await res.arrayBuffer();
        count(t.statuses, res.status);
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        count(t.errors, cause?.code ?? (error as Error).name);
      }
      t.ms.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Payment headers a careless or hostile client sends: none of them is a payment. */
function malformedHeader(i: number, random: () => number): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  switch (i % 6) {
    case 0:
      return crypto.randomBytes(1 + Math.floor(random() * 200)).toString("base64");
    case 1:
      return b64("{not json");
    case 2:
      return b64(JSON.stringify({ x402Version: 2, payload: { signature: "0x00" } }));
    case 3:
      return b64(JSON.stringify({ x402Version: 99, accepted: {}, payload: {} }));
    case 4:
      return "%%%not-base64%%%";
    default:
      return b64(
        JSON.stringify({
          x402Version: 2,
          accepted: { scheme: "exact", network: NETWORK },
          payload: { authorization: { value: "-1" }, signature: "0x" },
        }),
      ).repeat(8);
  }
}

async function startStack(dir: string): Promise<{
  devnet: Cli;
  serve: Cli;
  chain: { facilitator: string; buyers: { privateKey: `0x${string}` }[] };
  url: string;
}> {
  const devnet = startCli(
    ["devnet", "--port", "0", "--buyers", "8", "--data", path.join(dir, "devnet")],
    FREE_PORTS,
  );
  const chain = JSON.parse(await devnet.ready(90_000)) as {
    rpc: string;
    facilitator: string;
    buyers: { privateKey: `0x${string}` }[];
  };
  const serve = startCli(["serve", "--only", "utility", "--data", path.join(dir, "serve")], {
    ...FREE_PORTS,
    // The load comes from this machine, as no real client's would: the unpaid limit would answer it 429.
    X402M_UNPAID_LOOPBACK: "exempt",
    X402M_FACILITATOR_URL: chain.facilitator,
    X402M_RPC_URL: chain.rpc,
    X402M_UTILITY_PAY_TO: newMerchant(),
  });
  const url = (JSON.parse(await serve.ready(90_000)) as { utility: string }).utility;
  return { devnet, serve, chain, url };
}

export const httpLoad: Scenario = {
  name: "http-load",
  about:
    "serve --only utility under unpaid and malformed PAYMENT-SIGNATURE requests at high concurrency and paid calls at moderate concurrency, then SIGTERM under load. Goals: 0 5xx, every request started before SIGTERM answered, exit within 10 s.",
  async run({ seed, quick, say }) {
    const random = seeded(seed);
    const dir = tempDir("x402m-stress-http-");
    const { devnet, serve, chain, url } = await startStack(dir);
    const failures: string[] = [];
    const figures: Record<string, number | string> = {};
    try {
      const logBytes = () => Buffer.byteLength(serve.stderr());
      await fetch(`${url}${CALC}`).then((r) => r.arrayBuffer());
      figures["RSS idle (MB)"] = rssMb(serve.child.pid as number);

      const unpaid = tally();
      const n = quick ? 4_000 : 20_000;
      await load(n, 200, () => fetch(`${url}${CALC}`), unpaid);
      figures["unpaid: requests at 200 concurrent"] = n;
      figures["unpaid: p99 (ms)"] = Math.round(percentile(unpaid.ms, 99));
      if (unpaid.statuses.get(402) !== n)
        failures.push(`unpaid: not every answer a 402: ${describe(unpaid)}`);

      const malformed = tally();
      const logBefore = logBytes();
      await load(
        n,
        200,
        (i) => fetch(`${url}${CALC}`, { headers: { "payment-signature": malformedHeader(i, random) } }),
        malformed,
      );
      figures["malformed: requests at 200 concurrent"] = n;
      figures["malformed: p99 (ms)"] = Math.round(percentile(malformed.ms, 99));
      figures["malformed: answers"] = describe(malformed);
      figures["malformed: log bytes per 1,000"] = Math.round(((logBytes() - logBefore) * 1000) / n);
      const ok4xx = [...malformed.statuses].every(([s]) => s >= 400 && s < 500);
      if (!ok4xx || errorsOf(malformed) > 0)
        failures.push(`malformed: not every answer a 4xx: ${describe(malformed)}`);

      const paid = tally();
      const buyers = chain.buyers.map((b) =>
        wrapFetchWithPayment(
          fetch,
          new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(b.privateKey))),
        ),
      );
      const perBuyer = quick ? 3 : 10;
      await load(
        buyers.length * perBuyer,
        buyers.length,
        (i) => (buyers[i % buyers.length] as typeof fetch)(`${url}${CALC}`),
        paid,
      );
      figures["paid: calls at 8 concurrent"] = buyers.length * perBuyer;
      figures["paid: p50 / p99 (ms)"] =
        `${Math.round(percentile(paid.ms, 50))} / ${Math.round(percentile(paid.ms, 99))}`;
      if (paid.statuses.get(200) !== buyers.length * perBuyer)
        failures.push(`paid: not every call a 200: ${describe(paid)}`);
      figures["RSS after load (MB)"] = rssMb(serve.child.pid as number);
      for (const t of [unpaid, malformed, paid])
        if (fiveXX(t) > 0) failures.push(`${fiveXX(t)} answers were 5xx`);
      say(`load done: ${describe(unpaid)} / ${describe(malformed)} / ${describe(paid)}`);

      // SIGTERM while unpaid and paid requests are in flight: each request started before it must be answered.
      const before = tally();
      let signalled = false;
      const running = Promise.all([
        load(
          1_000_000,
          100,
          () => fetch(`${url}${CALC}`),
          before,
          () => signalled,
        ),
        load(
          1_000,
          buyers.length,
          (i) => (buyers[i % buyers.length] as typeof fetch)(`${url}${CALC}`),
          before,
          () => signalled,
        ),
      ]);
      await new Promise((r) => setTimeout(r, 1_500));
      signalled = true;
      const sent = performance.now();
      serve.child.kill("SIGTERM");
      const exit = await Promise.race([
        serve.exit,
        new Promise<"late">((r) => setTimeout(() => r("late"), 30_000)),
      ]);
      const exitMs = performance.now() - sent;
      await running;
      figures["SIGTERM under load: requests in flight or done"] = before.ms.length;
      figures["SIGTERM under load: cut off"] = errorsOf(before);
      figures["SIGTERM under load: time to exit (ms)"] = exit === "late" ? ">30000" : Math.round(exitMs);
      figures["SIGTERM under load: exit code"] = exit === "late" ? "none" : String(exit.code ?? exit.signal);
      if (errorsOf(before) > 0)
        failures.push(
          `SIGTERM: ${errorsOf(before)} requests started before it were cut off (${describe(before)})`,
        );
      if (fiveXX(before) > 0) failures.push(`SIGTERM: ${fiveXX(before)} answers were 5xx`);
      if (exit === "late" || exitMs > 10_000)
        failures.push(`SIGTERM: exit took ${Math.round(exitMs)} ms (goal 10 s)`);
      else if (exit.code !== 0) failures.push(`SIGTERM: exit code ${exit.code ?? exit.signal}`);
    } finally {
      serve.kill();
      devnet.child.kill("SIGTERM");
      await Promise.race([devnet.exit, new Promise((r) => setTimeout(r, 10_000))]);
      devnet.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return { figures, failures };
  },
};
