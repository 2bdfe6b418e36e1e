/**
 * The request log on a small Hono app: the request id (made, echoed, taken from the caller when well formed),
 * its context on every line written while the request is served, one line per request with its fields, a
 * streamed answer's line at the stream's end, the level setting, the HTTP metrics, and no secret in the log.
 */
import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { describe, expect, it, onTestFinished } from "vitest";
import { onError, onNotFound } from "../../src/common/http.ts";
import { listen } from "../../src/common/listen.ts";
import { log, setLogLevel } from "../../src/common/log.ts";
import { httpRequests } from "../../src/common/metrics.ts";
import { holdRequestLine, notePayment, requestLog } from "../../src/common/request-log.ts";
import { capturedLogLines } from "../helpers/log.ts";

type Line = Record<string, unknown> & { level: string; msg: string };

/** Every line written from now to the end of the test. */
function capture(): { raw: string[]; lines: () => Line[]; requests: () => Line[] } {
  const raw = capturedLogLines();
  const lines = () => raw.map((line) => JSON.parse(line) as Line);
  return { raw, lines, requests: () => lines().filter((line) => line.msg === "request") };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service of its own per test, so that its counts in the metrics are its own. */
function testApp() {
  const service = `test-${randomBytes(4).toString("hex")}`;
  const app = new Hono();
  app.onError(onError);
  app.notFound(onNotFound);
  app.use("*", requestLog({ service }));
  app.get("/items/:id", async (c) => {
    await sleep(Number(c.req.query("delay") ?? 0));
    log("warn", "looked an item up", { item: c.req.param("id") });
    return c.json({ id: c.req.param("id") });
  });
  app.get("/livez", (c) => c.json({ status: "ok" }));
  app.get("/busy", (c) => c.json({ error: { code: "too_many_requests", message: "later" } }, 429));
  app.get("/paid", (c) => {
    notePayment({ payer: "0xabc", scheme: "exact" });
    notePayment({ payer: undefined, amount: "1000", transaction: "0xfeed", network: "eip155:8453" });
    return c.json({ ok: true });
  });
  app.get("/redirect", () => Response.redirect("http://127.0.0.1:1/elsewhere", 302));
  app.get("/boom", () => {
    throw new Error("the handler broke");
  });
  return { app, service };
}

describe("the request id", () => {
  it("is made when the caller sends none, echoed in X-Request-Id, and on the request's line", async () => {
    const out = capture();
    const { app, service } = testApp();
    const response = await app.request("/items/7");
    const id = response.headers.get("x-request-id") ?? "";
    expect(id).toMatch(UUID);
    expect(out.requests()).toEqual([
      {
        level: "info",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        msg: "request",
        service,
        request_id: id,
        method: "GET",
        route: "/items/:id",
        path: "/items/7",
        status: 200,
        duration_ms: expect.any(Number),
      },
    ]);
  });

  it("is the caller's when well formed (a proxy's, a merchant's to its facilitator)", async () => {
    const out = capture();
    const { app } = testApp();
    for (const id of [
      "req-1",
      "0b5e6c1e-1f2a-4c3b-9d7e-8f9a0b1c2d3e",
      "Root=1-67891233-abcdef012345678912345678",
    ]) {
      const response = await app.request("/items/1", { headers: { "X-Request-Id": id } });
      expect(response.headers.get("x-request-id")).toBe(id);
    }
    expect(out.requests().map((l) => l.request_id)).toEqual([
      "req-1",
      "0b5e6c1e-1f2a-4c3b-9d7e-8f9a0b1c2d3e",
      "Root=1-67891233-abcdef012345678912345678",
    ]);
  });

  it("is a fresh one when the caller's is malformed: too long, or with what a log or header could misread", async () => {
    capture();
    const { app } = testApp();
    for (const bad of ["a".repeat(129), "two words", 'quo"te', "new\\nline", "<script>", "é"]) {
      const response = await app.request("/items/1", { headers: { "X-Request-Id": bad } });
      expect(response.headers.get("x-request-id"), bad).toMatch(UUID);
    }
  });

  it("is echoed on an answer whose headers cannot be changed", async () => {
    capture();
    const { app } = testApp();
    const response = await app.request("/redirect");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("http://127.0.0.1:1/elsewhere");
    expect(response.headers.get("x-request-id")).toMatch(UUID);
  });

  it("is on every line written while its request is served, and only its own, however requests interleave", async () => {
    const out = capture();
    const { app } = testApp();
    const responses = await Promise.all([
      app.request("/items/slow?delay=30"),
      app.request("/items/fast?delay=0"),
      app.request("/items/middle?delay=10"),
    ]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    const warnings = out.lines().filter((l) => l.msg === "looked an item up");
    expect(warnings).toHaveLength(3);
    for (const [i, item] of ["slow", "fast", "middle"].entries()) {
      expect(warnings.find((w) => w.item === item)?.request_id).toBe(ids[i]);
    }
  });
});

describe("the request's line", () => {
  it("is one per request, with the route's pattern, and `unmatched` where no route answered", async () => {
    const out = capture();
    const { app } = testApp();
    await app.request("/items/1");
    await app.request("/items/2", { method: "HEAD" });
    await app.request("/nowhere/at/all");
    await app.request("/boom");
    expect(out.requests().map((l) => [l.method, l.route, l.path, l.status])).toEqual([
      ["GET", "/items/:id", "/items/1", 200],
      ["HEAD", "/items/:id", "/items/2", 200],
      ["GET", "unmatched", "/nowhere/at/all", 404],
      ["GET", "/boom", "/boom", 500],
    ]);
  });

  it("carries the payment noted while the request was served; what is not known does not erase what is", async () => {
    const out = capture();
    const { app } = testApp();
    await app.request("/paid");
    expect(out.requests()[0]).toMatchObject({
      payer: "0xabc",
      scheme: "exact",
      amount: "1000",
      transaction: "0xfeed",
      network: "eip155:8453",
    });
  });

  it("names the client: the socket's peer", async () => {
    const out = capture();
    const { app } = testApp();
    const server = await listen(app.fetch, "127.0.0.1", 0);
    onTestFinished(() => server.close());
    await (await fetch(`${server.url}/items/3`)).text();
    expect(out.requests()[0]?.client).toBe("127.0.0.1");
  });

  it("of a streamed answer waits for the stream's end, and says how it ended", async () => {
    const out = capture();
    const { app } = testApp();
    app.get("/stream", () => {
      const release = holdRequestLine();
      let parts = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (parts++ < 3) return controller.enqueue(new TextEncoder().encode(`part ${parts}\n`));
          controller.close();
          release?.({ stream: "settled" });
        },
      });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    });
    const response = await app.request("/stream");
    expect(out.requests()).toEqual([]);
    expect(await response.text()).toBe("part 1\npart 2\npart 3\n");
    expect(out.requests()).toEqual([
      expect.objectContaining({ route: "/stream", status: 200, stream: "settled" }),
    ]);
  });

  it("is counted in the HTTP metrics by service, method, route pattern and status", async () => {
    capture();
    const { app, service } = testApp();
    await app.request("/items/1");
    await app.request("/items/2");
    await app.request("/nowhere");
    const counts = (await httpRequests.get()).values.filter((v) => v.labels.service === service);
    expect(counts.map((v) => [v.labels.method, v.labels.route, v.labels.status, v.value])).toEqual([
      ["GET", "/items/:id", "200", 2],
      ["GET", "unmatched", "404", 1],
    ]);
  });
});

describe("the level", () => {
  it("filters: warn keeps warnings and drops request lines; debug adds health checks' and 429s' lines; silent writes none", async () => {
    const out = capture();
    const { app } = testApp();
    await app.request("/livez");
    await app.request("/busy");
    expect(out.lines()).toEqual([]);

    setLogLevel("warn");
    await app.request("/items/1");
    expect(out.lines().map((l) => [l.level, l.msg])).toEqual([["warn", "looked an item up"]]);

    setLogLevel("debug");
    await app.request("/livez");
    await app.request("/busy");
    expect(out.lines().slice(-2)).toMatchObject([
      { level: "debug", msg: "request", route: "/livez", status: 200 },
      { level: "debug", msg: "request", route: "/busy", status: 429 },
    ]);

    setLogLevel("silent");
    const before = out.raw.length;
    await app.request("/items/1");
    log("error", "not even this");
    expect(out.raw.length).toBe(before);
  });
});

describe("secrets", () => {
  it("a payment signature and an Authorization header are nowhere in the log, even logged by mistake", async () => {
    const out = capture();
    const { app } = testApp();
    const signature = `sig-${randomBytes(16).toString("hex")}`;
    const bearer = `Bearer tok-${randomBytes(16).toString("hex")}`;
    app.get("/careless", (c) => {
      // What no code here does: the net under the rule (src/common/log.ts).
      log("warn", "careless", {
        authorization: c.req.header("authorization"),
        "payment-signature": c.req.header("payment-signature"),
        headers: {
          "x-payment": c.req.header("payment-signature"),
          authorization: c.req.header("authorization"),
        },
      });
      return c.json({ ok: true });
    });
    for (const path of ["/items/1", "/careless", "/nowhere"]) {
      await app.request(path, {
        headers: { "PAYMENT-SIGNATURE": signature, "X-PAYMENT": signature, Authorization: bearer },
      });
    }
    const all = out.raw.join("");
    expect(out.requests().map((l) => l.status)).toEqual([200, 200, 404]);
    expect(out.lines().find((l) => l.msg === "careless")).toMatchObject({
      authorization: "[redacted]",
      "payment-signature": "[redacted]",
      headers: { "x-payment": "[redacted]", authorization: "[redacted]" },
    });
    expect(all).not.toContain(signature);
    expect(all).not.toContain(bearer.slice("Bearer ".length));
  });
});
