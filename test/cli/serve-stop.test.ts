/**
 * `serve` under load, stopped: SIGTERM while paid writes are still arriving ends the process within
 * 10 s, and what it leaves agrees with what was paid: every settled insert is stored, nothing unpaid is.
 * And while it stops, every request it had received is answered (none is reset), new connections are
 * refused on every port at once, and keep-alive connections are closed, not cut.
 */
import net from "node:net";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Agent } from "undici";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { openDatabase } from "../../src/common/db/index.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { useDevnet } from "../helpers/chain.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { useFacilitatorOnDevnet } from "../helpers/facilitator.ts";
import { startFixtureServer } from "../helpers/fixtures/index.ts";
import { eventually, startCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const ROWS = 1000;

/**
 * The chain and the facilitator the two `serve`s pay through, shared: what is tested is each `serve` process
 * stopping, which stays each test's own. The first test pays with buyers 0-3 to a payee of its own, the
 * second with buyer 4 to another, so neither reads what the other moved.
 */
const chain = useDevnet({ buyers: 5 });
const facilitator = useFacilitatorOnDevnet(chain);

describe("serve, stopped under load", () => {
  it("exits within 10 s of SIGTERM during heavy paid writes, keeping exactly the paid ones", async () => {
    const { devnet, miner } = chain;
    const facilitatorUrl = facilitator.url;

    const payTo = newMerchant();
    // serve never starts a facilitator: the merchants' cluster is the only one it opens.
    const { dataDir: data, cleanup } = await isolatedDatabaseOptions("pglite", "merchants");
    onTestFinished(cleanup);
    const serve = startCli(["serve", "--only", "reports,utility", "--data", data], {
      PORT: "0",
      X402M_FACILITATOR_URL: facilitatorUrl,
      X402M_RPC_URL: devnet.rpc,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_PORT: "0",
    });
    const { utility } = JSON.parse(await serve.line) as { utility: string };

    const insert = (buyer: number, batch: number) =>
      wrapFetchWithPayment(
        fetch,
        new x402Client().register(
          NETWORK,
          new ExactEvmClient(
            privateKeyToAccount((devnet.buyers[buyer] as { privateKey: `0x${string}` }).privateKey),
          ),
        ),
      )(`${utility}/api/store/insert`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          collection: `load${batch}`,
          rows: Array.from({ length: ROWS }, (_, i) => ({ i, text: "x".repeat(80), batch })),
        }),
      }).then(
        (r) => r.status,
        () => "cut",
      );

    // A first wave completes; a second is still arriving when the signal comes.
    const first = await Promise.all(Array.from({ length: 8 }, (_, i) => insert(i % 4, i)));
    expect(first.every((s) => s === 200)).toBe(true);
    const second = Promise.all(Array.from({ length: 16 }, (_, i) => insert(i % 4, 100 + i)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stoppedAt = Date.now();
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    const stopMs = Date.now() - stoppedAt;
    expect(stopMs, serve.stderr()).toBeLessThan(10_000);
    const statuses = [...first, ...(await second)];

    // What the merchant was paid and what it stored agree, insert for insert.
    await miner.pending();
    const paidInserts = (await usdcReader(devnet.rpc).balanceOf(payTo)) / 1000n;
    const db = await openDatabase({ pgliteDir: dataLayout(data).pglite.merchants, databaseUrl: null });
    onTestFinished(() => db.close());
    const { rows } = await db.query<{ row_count: bigint }>("SELECT row_count FROM utility_state_collections");
    expect(rows.every((r) => Number(r.row_count) === ROWS)).toBe(true);
    // The server's own account of its stop (a drain cut short past its grace shows there) if they disagree.
    expect(BigInt(rows.length), serve.stderr()).toBe(paidInserts);
    expect(rows.length).toBeGreaterThanOrEqual(statuses.filter((s) => s === 200).length);
  }, 90_000);
});

/** Whether a new TCP connection to `url`'s port is refused (the listener is closed). */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

/**
 * A request written by hand on its own connection: `sendStart` sends the request line and half the
 * headers, `sendRest` the end of them, and resolves with everything received once the server has closed
 * the connection (or with what came before 5 s passed).
 */
function rawRequest(base: string) {
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return {
    async sendStart() {
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`);
    },
    async sendRest() {
      socket.write("Accept: application/json\r\n\r\n");
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      socket.destroy();
      return received;
    },
  };
}

/** What one request of the load came to: its HTTP status, or the code of the error that ended it. */
interface Outcome {
  id: string;
  result: number | string;
}

/** A request the server answered, as its request log says (src/common/request-log.ts). */
interface Answered {
  status: number;
  /** When it arrived, by the server's clock (the line's time less its duration). */
  arrivedAt: number;
}

/** The server's request lines (`X402M_LOG_LEVEL=debug`: the health checks' too) by request id. */
function answeredById(stderr: string): Map<string, Answered> {
  const answered = new Map<string, Answered>();
  for (const text of stderr.split("\n")) {
    if (!text.startsWith("{")) continue;
    const line = JSON.parse(text) as {
      msg?: string;
      request_id?: string;
      status?: number;
      time?: string;
      duration_ms?: number;
    };
    if (line.msg !== "request" || line.request_id === undefined) continue;
    answered.set(line.request_id, {
      status: line.status as number,
      arrivedAt: Date.parse(line.time as string) - (line.duration_ms as number),
    });
  }
  return answered;
}

describe("serve, stopped while answering", () => {
  it("answers every request sent before SIGTERM, refuses new connections, and exits within 10 s", async () => {
    const { devnet } = chain;
    const facilitatorUrl = facilitator.url;
    // The upstream a paid ping waits on: it answers once the test has seen both ports refuse (a fixed delay
    // raced the shutdown on a busy machine), or after 20 s at most.
    let reached: () => void = () => undefined;
    const upstreamReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const upstream = await startFixtureServer({
      routes: {
        "/slow": (_request, res) => {
          reached();
          const answer = () => {
            if (!res.headersSent) res.writeHead(200, { "content-type": "text/plain" }).end("slow");
          };
          const cap = setTimeout(answer, 20_000);
          void released.then(() => {
            clearTimeout(cap);
            answer();
          });
        },
      },
    });
    onTestFinished(() => upstream.close());

    const { dataDir: data, cleanup } = await isolatedDatabaseOptions("pglite", "merchants");
    onTestFinished(cleanup);
    const serve = startCli(["serve", "--only", "reports,utility", "--data", data], {
      PORT: "0",
      X402M_FACILITATOR_URL: facilitatorUrl,
      X402M_RPC_URL: devnet.rpc,
      X402M_UTILITY_PAY_TO: newMerchant(),
      X402M_UTILITY_PORT: "0",
      X402M_FETCH_ALLOW: "127.0.0.1",
      // Every request's line, the health checks' included: which requests the server received, and when.
      X402M_LOG_LEVEL: "debug",
    });
    const { reports, utility } = JSON.parse(await serve.line) as { reports: string; utility: string };

    // Free requests on keep-alive connections to both ports, without a pause, until a connection is refused.
    // Not the merchant's /healthz: it asks the facilitator, which runs in this process, and answers 503 while
    // that is starved by the load (an answer about the facilitator, not about stopping).
    const targets = [
      `${reports}/healthz`,
      `${reports}/v1/schema/report.json`,
      `${utility}/llms.txt`,
      `${utility}/openapi.json`,
    ];
    const outcomes: Outcome[] = [];
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        for (let n = 0; loading; n++) {
          // Named, so that the server's request log says whether it received this request.
          const id = `load-${i}-${n}`;
          try {
            const response = await fetch(targets[i % targets.length] as string, {
              headers: { "X-Request-Id": id },
            });
            await response.arrayBuffer();
            outcomes.push({ id, result: response.status });
          } catch (error) {
            const cause = (error as { cause?: { code?: string } }).cause;
            outcomes.push({ id, result: cause?.code ?? String(error) });
            if (cause?.code === "ECONNREFUSED") return;
          }
        }
      }),
    );

    // A slow client: its request to the report service has begun (half its headers) when the signal comes.
    const slowClient = rawRequest(reports);
    await slowClient.sendStart();

    const buyer = devnet.buyers[4] as { privateKey: `0x${string}` };
    // A connection per request: its 402 and its paid retry cross no keep-alive time-out of the server, which a
    // client starved for 5 s between the two meets as a reset before any stop.
    const ownConnections = new Agent({ pipelining: 0 });
    onTestFinished(() => ownConnections.close());
    const paying = wrapFetchWithPayment(
      ((input, init) => fetch(input, { ...init, dispatcher: ownConnections } as RequestInit)) as typeof fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    const slowPaid = paying(`${utility}/api/ping?url=${encodeURIComponent(`${upstream.url}slow`)}`);
    slowPaid.catch(() => undefined);
    await upstreamReached;

    const signalAt = Date.now();
    serve.child.kill("SIGTERM");
    let slowDone = false;
    const paid = slowPaid.finally(() => {
      slowDone = true;
    });
    // Both ports stop taking connections while the paid request is still being answered.
    const bothRefused = await eventually(
      async () => (await refused(reports)) && (await refused(utility)),
      10_000,
    );
    expect(bothRefused, serve.stderr()).toBe(true);
    // Still under way: the shutdown neither dropped nor cut short the request it had taken.
    expect(slowDone).toBe(false);
    // The slow client ends its headers once the listeners are closed, in the middle of the stop: a fixed second
    // after the signal could come before the stop began on a busy machine, and waited for nothing on a quiet one.
    const slowAnswer = slowClient.sendRest();
    release();

    // The slow client's request is answered in full, and its connection then closed by the server.
    const answer = await slowAnswer;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain("connection: close");

    const response = await paid;
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(((await response.json()) as { up: boolean }).up).toBe(true);

    expect(await serve.exited).toBe(0);
    const exitMs = Date.now() - signalAt;
    expect(exitMs, serve.stderr()).toBeLessThan(10_000);
    loading = false;
    await load;

    // Which requests arrived is the server's word, not this process's clock: a request this process began before
    // the signal may leave it much later on a busy machine, on a connection the server has since closed as idle
    // (src/common/listen.ts, IDLE_GRACE_MS), or by its keep-alive time-out; the server never had it to answer.
    const answered = answeredById(serve.stderr());
    const before = outcomes.filter((o) => (answered.get(o.id)?.arrivedAt ?? Infinity) < signalAt);
    expect(before.length).toBeGreaterThan(0);
    // Every request the server received, before the signal or during the stop, reached its client whole, as
    // answered: none was cut or reset, and each was a 200.
    const received = outcomes.filter((o) => answered.has(o.id));
    const lost = received.filter((o) => o.result !== answered.get(o.id)?.status || o.result !== 200);
    expect(
      lost,
      `${lost.length} of ${received.length} requests the server received were not answered whole`,
    ).toEqual([]);
    // The others never reached it: refused, or their connection closed; never an HTTP error.
    expect(outcomes.filter((o) => !answered.has(o.id) && typeof o.result === "number")).toEqual([]);
  }, 120_000);
});
