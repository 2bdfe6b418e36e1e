/**
 * The metrics of a running stack, read back from `/metrics`: the facilitator and a merchant host started
 * by the composition root on a devnet, known calls made, and every counter moved by exactly what they
 * did, in an exposition `promtool check metrics` accepts. Then where the metrics are served: the
 * operator's listener on loopback, a public port only with the operator's token.
 */
import crypto from "node:crypto";
import os from "node:os";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { devnetChain, startDevnet } from "../../src/chain/devnet/index.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { receiptCost } from "../../src/facilitator/outcome.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { loadConfig } from "../../src/services/config.ts";
import { devnetFacilitatorOptions, startServices } from "../../src/services/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { listenSupportedOnly, TEST_ENDPOINTS, testMerchant } from "../helpers/merchant.ts";
import { delta, matching, promtoolComplaints, scrape } from "../helpers/metrics.ts";
import { NETWORK, newMerchant, recordingFetch } from "../helpers/x402.ts";

const kind = process.env.DATABASE_URL ? "postgres" : "pglite";

/** A stack's configuration: every port free, the metrics listener's too. */
async function configured(env: Record<string, string> = {}) {
  const db = await isolatedDatabaseOptions(kind);
  onTestFinished(db.cleanup);
  return loadConfig({
    env: {
      X402M_DATA: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? "",
      PORT: "0",
      X402M_FACILITATOR_PORT: "0",
      X402M_METRICS_PORT: "0",
      ...env,
    },
  });
}

/** A merchant host of the test endpoints under a name of its own: its counts are this test's alone. */
function shop(name: string, payTo: `0x${string}`) {
  return {
    name,
    port: 0,
    build: async (url: string, kit: Parameters<typeof merchantApp>[1]) => {
      const merchant = { ...testMerchant(payTo, url, TEST_ENDPOINTS), name };
      return { fetch: (await merchantApp(merchant, kit)).fetch, merchants: [merchant] };
    },
  };
}

describe("metrics", () => {
  it("count what known calls did, exactly, in an exposition promtool accepts", async () => {
    const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
    onTestFinished(() => devnet.stop());
    const miner = startMiner(devnet);
    onTestFinished(() => miner.stop());
    const config = await configured();
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const merchant = `metrics-${crypto.randomBytes(4).toString("hex")}`;
    const services = await startServices({
      config,
      lifecycle,
      facilitator: devnetFacilitatorOptions(devnet, 20),
      hosts: [shop(merchant, newMerchant())],
    });
    const url = services.urls[merchant] as string;
    const metrics = services.urls.metrics as string;

    const buyer = devnet.buyers[0] as (typeof devnet.buyers)[0];
    const recorded = recordingFetch();
    const paying = wrapFetchWithPayment(
      recorded.fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    const before = (await scrape(metrics)).samples;

    // Two paid calls (each asked unpaid first, as a buyer's client does), and one whose handler fails.
    const receipts: string[] = [];
    for (const text of ["one", "two"]) {
      const answer = await paying(`${url}/api/echo?text=${text}`);
      expect(answer.status).toBe(200);
      receipts.push(
        decodePaymentResponseHeader(answer.headers.get("PAYMENT-RESPONSE") as string).transaction,
      );
    }
    expect((await paying(`${url}/api/fail`)).status).toBe(502);
    // A replayed payment (the first call's signature again): the facilitator refuses it.
    const replay = await fetch(`${url}/api/echo?text=one`, {
      headers: { "PAYMENT-SIGNATURE": recorded.signatures[0] as string },
    });
    expect(replay.status).toBe(402);
    // Bad input, a malformed payment, and a plain unpaid call.
    expect((await fetch(`${url}/api/echo`)).status).toBe(400);
    const malformed = await fetch(`${url}/api/echo?text=hi`, { headers: { "PAYMENT-SIGNATURE": "%%%" } });
    expect(malformed.status).toBe(400);
    expect((await fetch(`${url}/api/echo?text=hi`)).status).toBe(402);

    const { text, samples: after } = await scrape(metrics);
    const moved = (name: string, labels: Record<string, string> = {}) => delta(before, after, name, labels);
    const paid = (route: string, outcome: string) =>
      moved("x402m_paid_requests_total", { merchant, route, scheme: "exact", outcome });
    expect(paid("/api/echo", "settled")).toBe(2);
    expect(paid("/api/fail", "released")).toBe(1);
    // Nothing else of this merchant's moved.
    const paidNow = matching(after, "x402m_paid_requests_total", { merchant });
    expect([...paidNow.values()].reduce((a, b) => a + b, 0)).toBe(3);

    const refused = (reason: string) => moved("x402m_refusals_total", { merchant, reason });
    expect(refused("payment_required")).toBe(4);
    expect(refused("payment_invalid")).toBe(1);
    expect(refused("invalid_input")).toBe(1);
    expect(refused("invalid_payment_signature")).toBe(1);
    const refusedNow = matching(after, "x402m_refusals_total", { merchant });
    expect([...refusedNow.values()].reduce((a, b) => a + b, 0)).toBe(7);

    // The merchant's side of its facilitator: four verifications, two settlements.
    expect(moved("x402m_verify_seconds_count", { result: "valid" })).toBe(3);
    expect(moved("x402m_verify_seconds_count", { result: "invalid" })).toBe(1);
    expect(moved("x402m_settle_seconds_count", { outcome: "settled" })).toBe(2);
    expect(moved("x402m_settlements_total", { outcome: "settled", reason: "none" })).toBe(2);
    // The facilitator's side: the same calls, the replay's reason named.
    const v2 = { x402_version: "2" };
    expect(moved("x402m_facilitator_verifications_total", { result: "valid", reason: "none", ...v2 })).toBe(
      3,
    );
    expect(
      moved("x402m_facilitator_verifications_total", {
        result: "invalid",
        reason: "invalid_exact_evm_nonce_already_used",
        ...v2,
      }),
    ).toBe(1);
    expect(moved("x402m_facilitator_verify_seconds_count", { result: "valid" })).toBe(3);
    expect(moved("x402m_facilitator_settlements_total", { outcome: "settled", reason: "none", ...v2 })).toBe(
      2,
    );
    expect(moved("x402m_facilitator_settle_seconds_count", { outcome: "settled" })).toBe(2);

    // Its gas: what the two settlement transactions' receipts say they cost; its signer's balance now.
    const chain = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
    let cost = 0n;
    for (const hash of receipts)
      cost += receiptCost(await chain.getTransactionReceipt({ hash: hash as `0x${string}` }));
    expect(cost).toBeGreaterThan(0n);
    // A sample is a float64: once the process's total passes 2^53 wei (about 0.009 ETH, other tests' gas in
    // the same process included), its last digits are rounded, so the difference is exact to that rounding.
    const gasTotal = after.get("x402m_facilitator_gas_spent_wei_total") ?? 0;
    const rounding = Math.max(1, 4 * gasTotal * Number.EPSILON);
    expect(Math.abs(moved("x402m_facilitator_gas_spent_wei_total") - Number(cost))).toBeLessThanOrEqual(
      rounding,
    );
    const signer = devnet.facilitatorAccount.address;
    expect(after.get(`x402m_facilitator_signer_balance_wei{signer=${JSON.stringify(signer)}}`)).toBe(
      Number(await chain.getBalance({ address: signer })),
    );
    // The process's own.
    expect(after.get("x402m_process_cpu_seconds_total")).toBeGreaterThan(0);

    // Served on loopback only; a public port has no /metrics without the operator's token.
    expect(metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    // Every line as Prometheus's own linter wants it (Debian's prometheus package: CI installs it and sets
    // X402M_TEST_REQUIRE_PROMTOOL=1, so that its absence fails there).
    const complaints = await promtoolComplaints(text);
    if (complaints !== undefined) expect(complaints).toBe("");
  }, 90_000);

  it("are served on a public port, and on the operator's listener, only with the operator's token", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const token = crypto.randomBytes(24).toString("hex");
    const config = await configured({
      X402M_FACILITATOR_URL: facilitator.url,
      X402M_METRICS_TOKEN: token,
      // Two unpaid requests, then the limit (this test's client is on loopback).
      X402M_UNPAID_RPS: "0.001",
      X402M_UNPAID_BURST: "2",
      X402M_UNPAID_LOOPBACK: "limited",
    });
    const name = `metrics-${crypto.randomBytes(4).toString("hex")}`;
    const services = await startServices({ config, lifecycle, hosts: [shop(name, newMerchant())] });

    const publicMetrics = `${services.urls[name]}/metrics`;
    const without = await fetch(publicMetrics);
    expect(without.status).toBe(401);
    expect(without.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await without.json()).toMatchObject({ error: { code: "unauthorized" } });
    const wrong = await fetch(publicMetrics, { headers: { Authorization: `Bearer ${token.slice(0, -1)}x` } });
    expect(wrong.status).toBe(401);
    const right = await scrape(publicMetrics, { Authorization: `Bearer ${token}` });
    expect(right.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(right.text).toContain("# TYPE x402m_refusals_total counter");
    // The operator's listener, on loopback, asks for it too, and serves nothing but /metrics.
    const operator = services.urls.metrics as string;
    expect(operator).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(operator)).status).toBe(401);
    const own = await scrape(operator, { Authorization: `Bearer ${token}` });
    expect(own.text).toContain("x402m_process_cpu_seconds_total");
    const other = await fetch(operator.replace(/\/metrics$/, "/"));
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: "not_found" } });
    // /metrics is no unpaid request of the port's: the rest of it is as it was, its limit included.
    const before = (await scrape(operator, { Authorization: `Bearer ${token}` })).samples;
    const echo = `${services.urls[name]}/api/echo?text=hi`;
    expect([(await fetch(echo)).status, (await fetch(echo)).status, (await fetch(echo)).status]).toEqual([
      402, 402, 429,
    ]);
    const after = (await scrape(publicMetrics, { Authorization: `Bearer ${token}` })).samples;
    const refused = (reason: string) =>
      delta(before, after, "x402m_refusals_total", { merchant: name, reason });
    expect(refused("payment_required")).toBe(2);
    expect(refused("unpaid_limit")).toBe(1);
  }, 60_000);

  it("is no listener at all with X402M_METRICS_PORT=off", async () => {
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    // Nothing but the metrics listener is started: no database, the data directory unused.
    const env = { X402M_DATA: os.tmpdir(), PORT: "0" };
    const off = await startServices({
      config: loadConfig({ env: { ...env, X402M_METRICS_PORT: "off" } }),
      lifecycle,
    });
    expect(off.urls).toEqual({});
    const on = await startServices({
      config: loadConfig({ env: { ...env, X402M_METRICS_PORT: "0" } }),
      lifecycle,
    });
    expect(Object.keys(on.urls)).toEqual(["metrics"]);
  });
});
