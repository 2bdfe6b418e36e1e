import net from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  IDLE_GRACE_MS,
  LISTEN_QUIET_MS,
  listen,
  MAX_HEADER_BYTES,
  spareFromCut,
} from "../../src/common/listen.ts";

/** A raw HTTP/1.1 connection: what it sends and everything it receives, and when the server closed it. */
async function connect(url: string) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  onTestFinished(() => void socket.destroy());
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
  });
  socket.on("error", () => undefined);
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())));
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  return {
    write: (text: string) => socket.write(text),
    received: () => received,
    closed,
  };
}

const answers = (text: string) => text.match(/^HTTP\/1\.1 \d+/gm) ?? [];

/** Resolves once `check` holds (polled every 10 ms), or fails after 3 s. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 3_000;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("listen's stop", () => {
  it("answers a request under way and a slow client's half-sent one, each with Connection: close", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await listen(
      async (request) => {
        if (new URL(request.url).pathname === "/slow") await held;
        return new Response("ok");
      },
      "127.0.0.1",
      0,
    );
    const busy = await connect(server.url);
    busy.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    // A slow client: half its headers are in when stopping starts.
    const slow = await connect(server.url);
    slow.write("GET /fast HTTP/1.1\r\nHost: x\r\n");
    await new Promise((resolve) => setTimeout(resolve, 50));

    const closing = server.close();
    await new Promise((resolve) => setTimeout(resolve, IDLE_GRACE_MS * 2));
    slow.write("\r\n");
    release();
    await closing;

    for (const client of [busy, slow]) {
      await client.closed;
      expect(answers(client.received())).toEqual(["HTTP/1.1 200"]);
      expect(client.received()).toMatch(/\r\nConnection: close\r\n/i);
    }
  });

  it("answers a connection that comes as stopping starts, refuses new ones once they stop coming, and closes an idle keep-alive connection after the grace", async () => {
    const server = await listen(() => new Response("ok"), "127.0.0.1", 0);
    const idle = await connect(server.url);
    idle.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await until(() => answers(idle.received()).length === 1);
    expect(idle.received()).toMatch(/\r\nConnection: keep-alive\r\n/i);

    const stoppedAt = Date.now();
    server.stopAccepting();
    // A client that connected just then (closing the listener would reset it with its request).
    const late = await connect(server.url);
    late.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await late.closed;
    expect(answers(late.received())).toEqual(["HTTP/1.1 200"]);
    expect(late.received()).toMatch(/\r\nConnection: close\r\n/i);

    // Well past the quiet time with no one connecting: the listener is closed.
    await new Promise((resolve) => setTimeout(resolve, LISTEN_QUIET_MS * 10));
    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect(server.port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code));
    });
    expect(refused).toBe("ECONNREFUSED");

    await server.close();
    const closedAfter = (await idle.closed) - stoppedAt;
    expect(closedAfter).toBeGreaterThanOrEqual(IDLE_GRACE_MS - 20);
    expect(closedAfter).toBeLessThan(3_000);
  });
});

describe("listen's cut", () => {
  it("cuts a request still running after the drain, but not one spared (a paid call settling), which is answered", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await listen(
      async (request, env) => {
        const spare = new URL(request.url).pathname === "/spared";
        const end = spare ? spareFromCut(env?.incoming) : () => undefined;
        await held;
        end();
        return new Response("ok");
      },
      "127.0.0.1",
      0,
    );
    const spared = await connect(server.url);
    spared.write("GET /spared HTTP/1.1\r\nHost: x\r\n\r\n");
    const running = await connect(server.url);
    running.write("GET /running HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 50));

    const drainMs = 100;
    const closing = server.close(drainMs);
    await running.closed;
    expect(running.received()).toBe("");
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    release();
    await closing;
    await spared.closed;
    expect(answers(spared.received())).toEqual(["HTTP/1.1 200"]);
    expect(spared.received()).toMatch(/\r\nConnection: close\r\n/i);
  });
});

describe("listen's request headers", () => {
  it("takes a request line and headers up to MAX_HEADER_BYTES together, and answers 431 past them", async () => {
    const server = await listen(
      (request) => new Response(String(new URL(request.url).search.length)),
      "127.0.0.1",
      0,
    );
    onTestFinished(() => server.close(100));
    // A paid GET's URL twice: in the request line, and base64 inside a header, as PAYMENT-SIGNATURE carries it.
    const query = `?data=${"7".repeat(20_000)}`;
    const signature = Buffer.from(`{"resource":{"url":"${server.url}/${query}"}}`).toString("base64");
    const within = await fetch(`${server.url}/${query}`, { headers: { "payment-signature": signature } });
    expect(within.status).toBe(200);
    expect(await within.text()).toBe(String(query.length));
    const past = await fetch(`${server.url}/`, { headers: { "x-filler": "x".repeat(MAX_HEADER_BYTES) } });
    expect(past.status).toBe(431);
  });
});
