/**
 * The metrics each part counts, part by part, read back from the process's registry: the upstream
 * calls and tokens, the JSON-RPC client, the indexer's events, the report builds, the signer's balance;
 * and how `/metrics` is guarded (the token, its settings). test/services/metrics.test.ts reads a whole
 * stack's.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Hono } from "hono";
import { describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { listen } from "../../src/common/listen.ts";
import { bounded, register, watchSignerBalance } from "../../src/common/metrics.ts";
import { bearerMatches, metricsAnswer, withMetrics } from "../../src/common/metrics-server.ts";
import { ConfigError } from "../../src/config/config-error.ts";
import { countEvent } from "../../src/indexer/counted.ts";
import { RpcClient } from "../../src/indexer/rpc/client.ts";
import { countingTokens, type LanguageProvider } from "../../src/merchant-kit/language/index.ts";
import { upstreamJson } from "../../src/merchant-kit/upstream.ts";
import { ReportService } from "../../src/reports/index.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startMetricsListener } from "../../src/services/metrics.ts";
import { addr, checkpoint, END, ndjsonFile, repeat } from "../helpers/data.ts";
import { delta, parseExposition, type Samples } from "../helpers/metrics.ts";

const now = async (): Promise<Samples> => parseExposition(await register.metrics());
const unique = (prefix: string) => `${prefix}-${crypto.randomBytes(4).toString("hex")}`;

describe("upstream calls", () => {
  it("are counted by provider and outcome, whatever their answer", async () => {
    const app = new Hono()
      .get("/ok", (c) => c.json({ ok: true }))
      .get("/down", (c) => c.json({ error: { message: "down" } }, 500))
      .get("/busy", (c) => c.json({}, 429))
      .get("/slow", async (c) => {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        return c.json({});
      });
    const server = await listen(app.fetch, "127.0.0.1", 0);
    onTestFinished(() => server.close(0));
    const closed = await listen(() => new Response(), "127.0.0.1", 0);
    await closed.close(0);
    const provider = unique("test provider");
    const call = (url: string, timeoutMs?: number) =>
      upstreamJson({ provider, url, timeoutMs }).catch(() => null);

    const before = await now();
    await call(`${server.url}/ok`);
    await call(`${server.url}/ok`);
    await call(`${server.url}/down`);
    await call(`${server.url}/busy`);
    await call(`${server.url}/slow`, 1_000);
    await call(`${closed.url}/ok`);
    const after = await now();
    const outcome = (o: string) =>
      delta(before, after, "x402m_upstream_calls_total", { provider, outcome: o });
    expect(
      ["ok", "failed", "rate_limited", "timeout", "unreachable", "aborted"].map((o) => [o, outcome(o)]),
    ).toEqual([
      ["ok", 2],
      ["failed", 1],
      ["rate_limited", 1],
      ["timeout", 1],
      ["unreachable", 1],
      ["aborted", 0],
    ]);
  });

  it("count the tokens a language model reports, whole answers and streams", async () => {
    const provider = unique("test model");
    const model: LanguageProvider = countingTokens(provider, {
      dialect: "openai",
      complete: async () => ({
        id: "1",
        model: "m",
        text: "hi",
        stopReason: "end_turn",
        stopSequence: null,
        usage: { inputTokens: 7, outputTokens: 3 },
      }),
      async *stream() {
        yield { type: "start", id: "2", model: "m", inputTokens: 11 };
        yield { type: "text", text: "hello" };
        yield { type: "stop", stopReason: "end_turn", stopSequence: null, outputTokens: 5 };
      },
    });
    const before = await now();
    await model.complete({ messages: [], maxTokens: 10 } as never);
    const events = [];
    for await (const event of model.stream({ messages: [], maxTokens: 10 } as never)) events.push(event.type);
    expect(events).toEqual(["start", "text", "stop"]);
    const after = await now();
    expect(delta(before, after, "x402m_upstream_tokens_total", { provider, kind: "input" })).toBe(18);
    expect(delta(before, after, "x402m_upstream_tokens_total", { provider, kind: "output" })).toBe(8);
  });
});

describe("the JSON-RPC client", () => {
  it("counts each call of a batch under its method, and the answers' bytes", async () => {
    const answers: string[] = [];
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as { id: number }[] | { id: number };
      const text = JSON.stringify(
        Array.isArray(body)
          ? body.map((c) => ({ jsonrpc: "2.0", id: c.id, result: "0x1" }))
          : { jsonrpc: "2.0", id: body.id, result: "0x2" },
      );
      answers.push(text);
      return new Response(text, { headers: { "content-type": "application/json" } });
    };
    const client = new RpcClient({ url: "http://rpc.test", fetch });
    // Methods of their own: the counts are this test's.
    const [one, two] = [unique("test_one"), unique("test_two")].map((m) => m.replace(/-/g, "_"));
    const before = await now();
    await client.batch([1, 2, 3].map((n) => ({ method: one as string, params: [n] })));
    await client.call(two as string, []);
    await client.batch([
      { method: one as string, params: [] },
      { method: two as string, params: [] },
    ]);
    const after = await now();
    const calls = (method: string) => delta(before, after, "x402m_rpc_calls_total", { method });
    const bytes = (method: string) => delta(before, after, "x402m_rpc_response_bytes_total", { method });
    expect([calls(one as string), calls(two as string)]).toEqual([4, 2]);
    expect([bytes(one as string), bytes(two as string)]).toEqual([
      (answers[0] as string).length,
      (answers[1] as string).length,
    ]);
    // The mixed batch's answer: counted under `mixed`, as every other mixed batch of the process.
    expect(bytes("mixed")).toBe((answers[2] as string).length);
  });
});

describe("the indexer's events", () => {
  it("count blocks, payments and reorgs, and set how far behind the head it is", async () => {
    const before = await now();
    const batch = { logs: 0, candidates: 0, transfers: 0, history: 0, bridges: 0, time: 0, target: 0 };
    countEvent({ type: "batch", from: 101, to: 150, head: 170, payments: 4, ...batch });
    countEvent({ type: "batch", from: 151, to: 160, head: 171, payments: 1, ...batch });
    countEvent({ type: "reorg", checkpoint: 160, ancestor: 155, ancestorTime: 0 });
    const mid = await now();
    expect(delta(before, mid, "x402m_indexer_blocks_total")).toBe(60);
    expect(delta(before, mid, "x402m_indexer_payments_total")).toBe(5);
    expect(delta(before, mid, "x402m_indexer_reorgs_total")).toBe(1);
    expect(mid.get("x402m_indexer_head_lag_blocks")).toBe(11);
    countEvent({ type: "caught_up", block: 160, head: 162 });
    expect((await now()).get("x402m_indexer_head_lag_blocks")).toBe(2);
  });
});

describe("report builds", () => {
  it("are timed by kind: a window's build, then the reads that find it built", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-metrics-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const analytics = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    onTestFinished(() => analytics.close());
    const merchant = addr("merchant");
    await importNdjson(
      analytics,
      ndjsonFile([...repeat(3, { payer: addr("buyer"), payTo: merchant, amount: 1_000_000 }), checkpoint()]),
    );
    const service = new ReportService(analytics, { publicUrl: "https://reports.test" });
    const count = (samples: Samples, kind: string) =>
      samples.get(`x402m_report_build_seconds_count{kind=${JSON.stringify(kind)}}`) ?? 0;
    const before = await now();
    await service.report(merchant, END);
    await service.report(merchant, END);
    await service.leaderboard(END);
    const after = await now();
    expect(
      ["window", "report", "leaderboard", "evidence"].map((k) => count(after, k) - count(before, k)),
    ).toEqual([1, 2, 1, 0]);
  });
});

describe("the facilitator signer's balance", () => {
  it("is read at scrape time, and the last one read stands while the RPC does not answer", async () => {
    const signer = `0x${crypto.randomBytes(20).toString("hex")}`;
    const key = `x402m_facilitator_signer_balance_wei{signer=${JSON.stringify(signer)}}`;
    let read: () => Promise<bigint> = async () => 1234n;
    const unwatch = watchSignerBalance(signer, () => read());
    onTestFinished(unwatch);
    expect((await now()).get(key)).toBe(1234);
    read = async () => 5678n;
    expect((await now()).get(key)).toBe(5678);
    read = () => new Promise(() => undefined);
    expect((await now()).get(key)).toBe(5678);
    unwatch();
    expect((await now()).has(key)).toBe(false);
  });
});

describe("/metrics", () => {
  it("compares the bearer token whole, in its own scheme", () => {
    const token = "a".repeat(40);
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer  ${token} `, token)).toBe(true);
    for (const wrong of [
      undefined,
      "",
      "Bearer",
      `Bearer ${token}a`,
      `Bearer ${token.slice(1)}`,
      `Basic ${token}`,
      token,
    ])
      expect(bearerMatches(wrong, token)).toBe(false);
    expect(bearerMatches("Bearer ", "")).toBe(false);
  });

  it("is answered ahead of a public app only with a token set, for that path alone", async () => {
    const app = (request: Request) => new Response(`app ${new URL(request.url).pathname}`, { status: 404 });
    expect(withMetrics(app, null)).toBe(app);
    const token = "b".repeat(40);
    const guarded = withMetrics(app, token);
    const ask = (url: string, init?: RequestInit) => Promise.resolve(guarded(new Request(url, init)));
    expect((await ask("http://h/metrics")).status).toBe(401);
    expect(
      (await ask("http://h/metrics?x=1", { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    expect(await (await ask("http://h/metricsx")).text()).toBe("app /metricsx");
    expect(await (await ask("http://h/api/metrics")).text()).toBe("app /api/metrics");
    const head = await metricsAnswer(new Request("http://h/metrics", { method: "HEAD" }), null);
    expect([head.status, await head.text()]).toEqual([200, ""]);
    const post = await metricsAnswer(new Request("http://h/metrics", { method: "POST" }), null);
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });

  it("is configured by its port (a number, 0, or off), its host and its token", () => {
    expect(loadConfig({ env: {} }).metrics).toEqual({
      port: 9464,
      portDefaulted: true,
      host: "127.0.0.1",
      token: null,
    });
    expect(loadConfig({ env: { X402M_METRICS_PORT: "0" } }).metrics).toMatchObject({
      port: 0,
      portDefaulted: false,
    });
    expect(loadConfig({ env: { X402M_METRICS_PORT: "Off" } }).metrics.port).toBeNull();
    expect(loadConfig({ env: { X402M_METRICS_HOST: "10.0.0.5" } }).metrics.host).toBe("10.0.0.5");
    expect(() => loadConfig({ env: { X402M_METRICS_PORT: "metrics" } })).toThrow(
      "invalid X402M_METRICS_PORT: a port from 0 to 65535, or off",
    );
    const token = crypto.randomBytes(32).toString("hex");
    expect(loadConfig({ env: { X402M_METRICS_TOKEN: token } }).metrics.token).toBe(token);
    const short = "too-short-a-token";
    let refusal: unknown;
    try {
      loadConfig({ env: { X402M_METRICS_TOKEN: short } });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toMatch(/^invalid X402M_METRICS_TOKEN: at least 32 characters/);
    expect((refusal as Error).message).not.toContain(short);
  });
});

describe("the operator's listener on a port another process holds", () => {
  async function heldPort() {
    const holder = await listen(() => new Response("held"), "127.0.0.1", 0);
    onTestFinished(() => holder.close());
    return Number(new URL(holder.url).port);
  }

  it("takes a free port when the port was the default, and names it", async () => {
    const port = await heldPort();
    const config = loadConfig({ env: {} });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const url = await startMetricsListener(
      { ...config, metrics: { ...config.metrics, port, portDefaulted: true } },
      lifecycle,
    );
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(url ?? "").port).not.toBe(String(port));
    expect((await fetch(url ?? "")).status).toBe(200);
  });

  it("refuses to start when the operator chose that port", async () => {
    const port = await heldPort();
    const config = loadConfig({ env: { X402M_METRICS_PORT: String(port) } });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    await expect(startMetricsListener(config, lifecycle)).rejects.toThrow(
      `the metrics port ${port} is in use`,
    );
  });
});

describe("bounded labels", () => {
  it("keep the values seen, up to their number, and call the rest other", () => {
    const label = bounded(2);
    expect(["a", "b", "c", "a", "bad value", "b"].map(label)).toEqual(["a", "b", "other", "a", "other", "b"]);
  });
});
