/**
 * `serve --rpc` through an RPC outage longer than the indexer's retries: the reports keep being served,
 * `/healthz` says the indexer waits and since when, the log has a line per change rather than per
 * attempt, and once the RPC is back the indexer catches up with what was paid meanwhile.
 */
import fs from "node:fs";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { facilitatorOnDevnet, startShop } from "../helpers/facilitator.ts";
import { GENESIS, startTestDevnet, tempDir } from "../helpers/indexer.ts";
import { startCli } from "../helpers/process.ts";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

/** Longer than the old limit: the RPC client's 8 attempts gave up after about 10 s, and serve with it. */
const OUTAGE_MS = 12_000;

interface Health {
  ok: boolean;
  status: "ok" | "degraded";
  indexer: {
    state: string;
    indexed_block: number | null;
    indexed_block_time: string | null;
    chain_head: number | null;
    lag_blocks: number | null;
    lag_seconds: number | null;
    rpc: { ok: boolean; failing_since: string | null; last_error: string | null };
  };
}

describe("serve --rpc, through an RPC outage", () => {
  it("keeps serving reports, reports the lag in /healthz, and catches up when the RPC is back", async () => {
    const devnet = await startTestDevnet({ buyers: 1 });
    onTestFinished(() => devnet.stop());
    const { url: facilitatorUrl } = await facilitatorOnDevnet(devnet);
    const merchant = newMerchant();
    const shop = await startShop(facilitatorUrl, merchant, {
      "/weather": { price: "$0.01", description: "Current weather", body: ({ city }) => ({ city, t: 21 }) },
    });
    onTestFinished(() => shop.close());
    const buyer = devnet.buyers[0] as { privateKey: `0x${string}` };
    const paying = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    const pay = async () => expect((await paying(`${shop.url}/weather?city=Lisbon`)).status).toBe(200);

    // The indexer reaches the chain through a proxy the test can switch off.
    let down = false;
    let attemptsWhileDown = 0;
    const behave = () => {
      if (!down) return { kind: "forward" } as const;
      attemptsWhileDown++;
      return { kind: "status", status: 503, body: "<html>maintenance</html>" } as const;
    };
    let proxy: RpcProxy = await startRpcProxy(devnet.rpc, behave);
    onTestFinished(() => proxy.close());
    const proxyPort = Number(new URL(proxy.url).port);

    await pay();
    // A data directory alone: the report service opens no PostgreSQL, so no PGlite cluster to copy into it.
    const dataDir = tempDir("x402m-serve-outage-");
    onTestFinished(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const serve = startCli(
      [
        "serve",
        "--only",
        "reports",
        "--data",
        dataDir,
        "--rpc",
        proxy.url,
        "--facilitator",
        devnet.facilitatorAccount.address,
        "--from-block",
        String(GENESIS),
        "--reorg-depth",
        "0",
        "--poll-ms",
        "100",
        "--funding-lookback",
        "0",
        // The outage outlasts the indexer's retries of one request within a second, not after minutes.
        "--rpc-attempts",
        "2",
        "--outage-retry-max",
        "0.5",
      ],
      { PORT: "0" },
    );
    const { reports } = JSON.parse(await serve.line) as { reports: string };
    const reportTx = async () => {
      const response = await fetch(`${reports}/v1/reports/base/${merchant}`);
      return response.ok ? ((await response.json()) as { tx: number }).tx : -response.status;
    };
    const health = async () => {
      const response = await fetch(`${reports}/healthz`);
      expect(response.status).toBe(200);
      return (await response.json()) as Health;
    };
    await expect.poll(reportTx, { timeout: 60_000, interval: 200 }).toBe(1);
    await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 200 }).toBe("ok");
    const before = await health();
    expect(before.indexer).toMatchObject({ state: "following", rpc: { ok: true }, lag_blocks: 0 });

    // The outage: 503s, then refused connections, for longer than the old limit.
    const logBefore = serve.stderr().length;
    down = true;
    const outageStart = Date.now();
    let paidDuringOutage = false;
    const answers: number[] = [];
    let answersBeforePaying = 0;
    const healths: Health[] = [];
    while (Date.now() - outageStart < OUTAGE_MS) {
      expect(serve.child.exitCode, serve.stderr()).toBeNull();
      answers.push(await reportTx());
      if (!paidDuringOutage) answersBeforePaying++;
      healths.push(await health());
      if (!paidDuringOutage && Date.now() - outageStart > OUTAGE_MS / 2) {
        await proxy.close();
        await pay();
        paidDuringOutage = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(serve.child.exitCode, serve.stderr()).toBeNull();
    // Served throughout, from what was indexed before: on both sides of the payment (which takes seconds on a
    // busy machine, so the count of answers is not fixed).
    expect(answersBeforePaying).toBeGreaterThanOrEqual(5);
    expect(answers.length - answersBeforePaying).toBeGreaterThanOrEqual(1);
    expect(answers.every((tx) => tx === 1)).toBe(true);
    const last = healths.at(-1) as Health;
    expect(last.status).toBe("degraded");
    expect(last.indexer.state).toBe("waiting_for_rpc");
    expect(last.indexer.rpc.ok).toBe(false);
    expect(last.indexer.rpc.last_error).toBeTruthy();
    expect(Date.parse(last.indexer.rpc.failing_since as string)).toBeLessThanOrEqual(
      Date.now() - OUTAGE_MS + 1_000,
    );
    expect(last.indexer.indexed_block).toBe(before.indexer.indexed_block);
    expect(last.indexer.lag_seconds).toBeGreaterThanOrEqual(before.indexer.lag_seconds as number);
    // One line per change (failing, then waiting), not one per attempt.
    // The test's own reads each write a request line: the indexer's lines are the others.
    const outageLog = serve
      .stderr()
      .slice(logBefore)
      .split("\n")
      .filter((line) => line && !line.includes('"msg":"request"'));
    expect(attemptsWhileDown).toBeGreaterThan(5);
    expect(outageLog.length, outageLog.join("\n")).toBeLessThanOrEqual(3);

    // Back: the indexer finds the RPC, says so once, and indexes the payment made meanwhile.
    down = false;
    proxy = await startRpcProxy(devnet.rpc, behave, { port: proxyPort });
    await expect.poll(reportTx, { timeout: 30_000, interval: 200 }).toBe(2);
    await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 200 }).toBe("ok");
    const after = await health();
    expect(after.indexer).toMatchObject({ state: "following", rpc: { ok: true, failing_since: null } });
    expect(after.indexer.indexed_block).toBeGreaterThan(before.indexer.indexed_block as number);
    expect(serve.stderr().slice(logBefore)).toContain("rpc answers again");

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
  }, 180_000);
});
