/**
 * Liveness and readiness (src/common/health.ts): a check's probe is shared and kept, a probe that does not
 * answer leaves the last answer standing until it times out, changes of state are logged, `/readyz` is 503
 * with the failing check's reason, and neither route is refused by the unpaid limit.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { type CheckFn, cachedCheck, healthRoutes } from "../../src/common/health.ts";
import { limitUnpaid, UnpaidLimit } from "../../src/common/rate-limit.ts";
import { capturedLogLines } from "../helpers/log.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function captured(): () => Record<string, unknown>[] {
  const raw = capturedLogLines();
  return () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A probe that answers as told, counting its runs. */
function scripted() {
  let runs = 0;
  let answer: () => Promise<unknown> = async () => undefined;
  return {
    probe: () => {
      runs++;
      return answer();
    },
    runs: () => runs,
    set: (next: () => Promise<unknown>) => {
      answer = next;
    },
  };
}

describe("cachedCheck", () => {
  it("runs one probe for callers together and keeps its answer, with its details", async () => {
    const probe = scripted();
    probe.set(async () => ({ block: 12 }));
    const check = cachedCheck("test", probe.probe, { keepMs: 60_000 });
    const answers = await Promise.all([check(), check(), check()]);
    expect(await check()).toEqual({ ok: true, block: 12 });
    expect(answers).toEqual([
      { ok: true, block: 12 },
      { ok: true, block: 12 },
      { ok: true, block: 12 },
    ]);
    expect(probe.runs()).toBe(1);
  });

  it("says why it fails, in a line, and says so once it is ok again", async () => {
    const lines = captured();
    const probe = scripted();
    const check = cachedCheck("the store", probe.probe, { keepMs: 0 });
    expect(await check()).toEqual({ ok: true });
    probe.set(async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:5432\n    at somewhere");
    });
    expect(await check()).toEqual({ ok: false, reason: "connect ECONNREFUSED 127.0.0.1:5432" });
    expect(await check()).toEqual({ ok: false, reason: "connect ECONNREFUSED 127.0.0.1:5432" });
    probe.set(async () => undefined);
    expect(await check()).toEqual({ ok: true });
    expect(lines().map((l) => [l.level, l.msg, l.check, l.reason])).toEqual([
      ["warn", "readiness check failing", "the store", "connect ECONNREFUSED 127.0.0.1:5432"],
      ["info", "readiness check ok again", "the store", undefined],
    ]);
    expect(lines()[0]?.error).toMatch(/^Error: connect ECONNREFUSED 127\.0\.0\.1:5432 \(at /);
  });

  it("answers at once while a probe hangs: the last answer, or none yet; the probe fails at its time-out", async () => {
    captured();
    const probe = scripted();
    probe.set(() => new Promise(() => undefined));
    const check = cachedCheck("hanging", probe.probe, { keepMs: 60_000, waitMs: 10, timeoutMs: 100 });
    expect(await check()).toEqual({ ok: false, reason: "no answer yet after 10 ms" });
    await sleep(150);
    expect(await check()).toEqual({ ok: false, reason: "no answer within 100 ms" });

    // A dependency that answered keeps its standing while a slow probe runs (a busy PGlite).
    const slow = scripted();
    const kept = cachedCheck("slow", slow.probe, { keepMs: 0, waitMs: 10, timeoutMs: 60_000 });
    expect(await kept()).toEqual({ ok: true });
    slow.set(() => new Promise(() => undefined));
    expect(await kept()).toEqual({ ok: true });
    expect(slow.runs()).toBe(2);
  });
});

describe("/livez and /readyz", () => {
  function app(checks: Record<string, CheckFn>) {
    const app = new Hono();
    healthRoutes(app, checks);
    // A limit that refuses this client's second request: never the health checks.
    const limit = new UnpaidLimit({
      perSecond: 0.001,
      burst: 1,
      clients: 10,
      loopback: "limited",
      trustedProxies: [],
      forwardedHeader: "x-forwarded-for",
    });
    app.use("*", limitUnpaid(limit));
    app.get("/page", (c) => c.text("page"));
    const env = { incoming: { socket: { remoteAddress: "203.0.113.9" } } };
    return (path: string) => app.fetch(new Request(`http://host${path}`), env);
  }
  const ok: CheckFn = async () => ({ ok: true, block: 7 });
  const down: CheckFn = async () => ({ ok: false, reason: "cannot be reached: fetch failed" });

  it("/livez answers ok whatever the checks say; /readyz is 200 ready when every check is ok", async () => {
    const get = app({ database: ok, chain: ok });
    const live = await get("/livez");
    expect([live.status, await live.json()]).toEqual([200, { status: "ok" }]);
    const ready = await get("/readyz");
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect([ready.status, await ready.json()]).toEqual([
      200,
      { status: "ready", checks: { database: { ok: true, block: 7 }, chain: { ok: true, block: 7 } } },
    ]);
  });

  it("/readyz is 503 not_ready with the failing check's reason; neither is refused by the unpaid limit", async () => {
    captured();
    const get = app({ database: ok, facilitator: down });
    expect((await get("/page")).status).toBe(200);
    expect((await get("/page")).status).toBe(429);
    for (let i = 0; i < 3; i++) {
      expect((await get("/livez")).status).toBe(200);
      const ready = await get("/readyz");
      expect([ready.status, await ready.json()]).toEqual([
        503,
        {
          status: "not_ready",
          checks: {
            database: { ok: true, block: 7 },
            facilitator: { ok: false, reason: "cannot be reached: fetch failed" },
          },
        },
      ]);
    }
  });
});
