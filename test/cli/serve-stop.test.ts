/**
 * `serve` under load, stopped: SIGTERM while paid writes are still arriving ends the process within
 * 10 s, and what it leaves agrees with what was paid: every settled insert is stored, nothing unpaid is.
 * And while it stops, every request already sent is answered (none is reset), new connections are
 * refused on every port at once, and keep-alive connections are closed, not cut.
 */
import net from "node:net";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
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
    expect(BigInt(rows.length)).toBe(paidInserts);
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
  startedAt: number;
  result: number | string;
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
    });
    const { reports, utility } = JSON.parse(await serve.line) as { reports: string; utility: string };

    // Free requests on keep-alive connections to both ports, without a pause, until a connection is refused.
    const targets = [
      `${reports}/healthz`,
      `${reports}/v1/schema/report.json`,
      `${utility}/healthz`,
      `${utility}/openapi.json`,
    ];
    const outcomes: Outcome[] = [];
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        while (loading) {
          const startedAt = Date.now();
          try {
            const response = await fetch(targets[i % targets.length] as string);
            await response.arrayBuffer();
            outcomes.push({ startedAt, result: response.status });
          } catch (error) {
            const cause = (error as { cause?: { code?: string } }).cause;
            outcomes.push({ startedAt, result: cause?.code ?? String(error) });
            if (cause?.code === "ECONNREFUSED") return;
          }
        }
      }),
    );

    // A slow client: its request to the report service has begun (half its headers) when the signal comes.
    const slowClient = rawRequest(reports);
    await slowClient.sendStart();

    const buyer = devnet.buyers[4] as { privateKey: `0x${string}` };
    const paying = wrapFetchWithPayment(
      fetch,
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

    const before = outcomes.filter((o) => o.startedAt < signalAt);

    expect(before.length).toBeGreaterThan(0);
    const failed = before.filter((o) => o.result !== 200);
    expect(failed, `${failed.length} of ${before.length} requests sent before SIGTERM failed`).toEqual([]);
    // Sent after: answered, or refused; never an HTTP error.
    expect(outcomes.filter((o) => typeof o.result === "number" && o.result !== 200)).toEqual([]);
  }, 120_000);
});
