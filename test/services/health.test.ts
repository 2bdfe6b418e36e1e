/**
 * Liveness apart from readiness on every service the composition root starts: with everything up, each
 * answers `/livez` and `/readyz` 200 and says what it checked; a merchant host whose facilitator is down, a
 * facilitator that cannot pay gas, a report service whose database is gone are live and not ready, and
 * say why. `/healthz` answers as it did.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { listen } from "../../src/common/listen.ts";
import { logLevel, setLogDestination, setLogLevel } from "../../src/common/log.ts";
import { addReadinessChecks, chainReadiness } from "../../src/facilitator/http.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { httpFacilitator } from "../../src/merchant-kit/payments/facilitators/failover.ts";
import { ReportService, reportReadiness, reportRoutes } from "../../src/reports/index.ts";
import { loadConfig } from "../../src/services/config.ts";
import { devnetFacilitatorOptions } from "../../src/services/facilitator.ts";
import { startServices } from "../../src/services/start.ts";
import { isolatedDatabaseOptions, openTestDatabase, SERVER_URL } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { GUARDED_ENDPOINTS, TEST_ENDPOINTS, testConfig, testMerchant } from "../helpers/merchant.ts";
import { newMerchant } from "../helpers/x402.ts";

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 0, blockTime: 0 });
  // The lines of the services started here (their warnings of failing checks) are not the tests' output.
  setLogDestination({ write: () => undefined });
}, 60_000);

afterAll(async () => {
  setLogDestination(undefined);
  await devnet.stop();
});

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An address nothing listens on. */
async function closedUrl(): Promise<string> {
  const server = await listen(() => new Response(), "127.0.0.1", 0);
  await server.close();
  return server.url;
}

describe("every service of the composition root", () => {
  it("is live and ready with everything up, and says what it checked", async () => {
    const db = await isolatedDatabaseOptions(SERVER_URL ? "postgres" : "pglite");
    onTestFinished(db.cleanup);
    const config = loadConfig({
      env: {
        X402M_DATA: db.dataDir,
        DATABASE_URL: db.databaseUrl ?? "",
        PORT: "0",
        X402M_FACILITATOR_PORT: "0",
        X402M_UTILITY_PAY_TO: newMerchant(),
        X402M_UTILITY_PORT: "0",
        X402M_METRICS_PORT: "off",
        X402M_LOG_LEVEL: "warn",
      },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    // X402M_LOG_LEVEL is applied to the process's logger: put back for the files that run after this one.
    const level = logLevel();
    onTestFinished(() => setLogLevel(level));
    const { urls } = await startServices({
      config,
      lifecycle,
      facilitator: devnetFacilitatorOptions(devnet, 20),
      merchants: ["utility"],
      reports: {},
    });
    const checked = {
      facilitator: ["database", "chain", "signer"],
      // The utility API offers channels: their unclaimed money is watched (ok while within the margin).
      utility: ["database", "facilitator", "chain", "channels"],
      reports: ["analytics"],
    };
    for (const [service, checks] of Object.entries(checked)) {
      const base = urls[service] as string;
      expect(await get(`${base}/livez`), service).toEqual({ status: 200, body: { status: "ok" } });
      const ready = await get(`${base}/readyz`);
      expect(ready.status, `${service}: ${JSON.stringify(ready.body)}`).toBe(200);
      expect(ready.body.status).toBe("ready");
      const answered = ready.body.checks as Record<string, { ok: boolean }>;
      expect(Object.keys(answered), service).toEqual(checks);
      for (const check of checks) expect(answered[check]?.ok, `${service} ${check}`).toBe(true);
      // As it was: probed by the readers (src/cli/readers.ts) and the existing monitors.
      const healthz = await get(`${base}/healthz`);
      expect([healthz.status, healthz.body.ok]).toEqual([200, true]);
    }
    const facilitator = (await get(`${urls.facilitator}/readyz`)).body.checks as Record<
      string,
      Record<string, unknown>
    >;
    expect(facilitator.chain?.block).toEqual(expect.any(Number));
    expect(facilitator.signer).toMatchObject({ address: devnet.facilitatorAccount.address });
  }, 120_000);
});

describe("a merchant host whose facilitator is down", () => {
  it("is live, and not ready, naming the facilitator; a guarded host names a chain it cannot read too", async () => {
    const { db, close } = await openTestDatabase(SERVER_URL ? "postgres" : "pglite");
    onTestFinished(close);
    const config = testConfig();
    const down = await closedUrl();
    for (const endpoints of [TEST_ENDPOINTS, GUARDED_ENDPOINTS]) {
      const app = await merchantApp(testMerchant(newMerchant(), "http://shop.test", endpoints), {
        services: { db, config },
        facilitator: httpFacilitator(down),
        payments: { ...config.payments, rpcUrl: down },
      });
      const live = await app.request("/livez");
      expect([live.status, await live.json()]).toEqual([200, { status: "ok" }]);
      const ready = await app.request("/readyz");
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as {
        status: string;
        checks: Record<string, Record<string, unknown>>;
      };
      expect(body.status).toBe("not_ready");
      expect(body.checks.database).toEqual({ ok: true });
      expect(body.checks.facilitator).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^cannot be reached: /),
        since: expect.any(String),
      });
      if (endpoints === TEST_ENDPOINTS) expect(body.checks).not.toHaveProperty("chain");
      else
        expect(body.checks.chain).toEqual({
          ok: false,
          reason: expect.stringMatching(/^the chain's RPC cannot be reached/),
        });
    }
  }, 60_000);
});

describe("a facilitator", () => {
  it("whose settling account holds no ETH is live and not ready, and says so; its database and chain are ok", async () => {
    const { db, close } = await openTestDatabase("pglite");
    onTestFinished(close);
    const key = generatePrivateKey();
    const facilitator = await devnetFacilitator(devnet, db, { privateKey: key });
    onTestFinished(() => facilitator.close());
    addReadinessChecks(facilitator.app, chainReadiness(devnet.rpc, facilitator.address));
    expect((await facilitator.app.request("/livez")).status).toBe(200);
    const ready = await facilitator.app.request("/readyz");
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: "not_ready",
      checks: {
        database: { ok: true },
        chain: { ok: true, block: expect.any(Number) },
        signer: { ok: false, reason: `the settling account ${facilitator.address} holds no ETH to pay gas` },
      },
    });
  }, 60_000);
});

describe("a report service", () => {
  it("whose analytics database is gone is live and not ready; with its database, ready, its indexer's lag in the body", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-health-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const analytics = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    const reports = new ReportService(analytics, { publicUrl: "http://reports.test" });
    const lagging = {
      health: () => ({
        state: "waiting_for_rpc" as const,
        indexed_block: 100,
        indexed_block_time: null,
        chain_head: 190,
        chain_head_seen_at: null,
        lag_blocks: 90,
        lag_seconds: 180,
        reorg_depth: 60,
        rpc: { ok: false, failing_since: null, last_error: "HTTP 502", last_error_at: null, retries: 3 },
      }),
      degraded: () => true,
      done: Promise.resolve(),
      stop: async () => undefined,
    };
    const up = reportRoutes(reports, {
      ready: reportReadiness(analytics, [{ chain: "base", follower: () => lagging }]),
    });
    const ready = await up.request("/readyz");
    expect([ready.status, await ready.json()]).toEqual([
      200,
      {
        status: "ready",
        checks: {
          analytics: { ok: true },
          indexer: {
            ok: true,
            degraded: true,
            state: "waiting_for_rpc",
            indexed_block: 100,
            chain_head: 190,
            lag_blocks: 90,
            lag_seconds: 180,
            rpc_ok: false,
          },
        },
      },
    ]);

    analytics.close();
    const gone = reportRoutes(reports, { ready: reportReadiness(analytics) });
    expect((await gone.request("/livez")).status).toBe(200);
    const notReady = await gone.request("/readyz");
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      status: "not_ready",
      checks: { analytics: { ok: false, reason: expect.any(String) } },
    });
  }, 60_000);
});
