import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { serve } from "@hono/node-server";

/**
 * What serves requests: a Hono app's `fetch`. `env` is `@hono/node-server`'s bindings (`incoming`, whose
 * socket says who is calling: src/common/rate-limit.ts), passed on to the app.
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono's `fetch` types its bindings per app.
export type Fetch = (request: Request, env?: any) => Response | Promise<Response>;

/** How long requests under way may take to finish once stopping starts, before their connections are cut. */
export const DEFAULT_DRAIN_MS = 5_000;

/**
 * How long a keep-alive connection must have been idle, once stopping starts, before it is closed. A client
 * that sends its next request on it meanwhile is answered (with `Connection: close`), where closing it at
 * once would reset that request: the client cannot tell "closed while idle" from "cut mid-request".
 */
export const IDLE_GRACE_MS = 300;

/**
 * Once stopping starts, the listener stays open until no connection has arrived for this long: a client
 * whose connection the kernel has completed is answered rather than reset with the listener.
 */
export const LISTEN_QUIET_MS = 100;

/** Connections the drain's cut spares (`spareFromCut`), by how many of their requests asked. */
const spared = new WeakMap<Socket, number>();

/** Spared connections the cut has passed over: closed once spared no more, after another drain at most. */
const overdue = new WeakSet<Socket>();

/**
 * Spares the connection of `incoming` (`@hono/node-server`'s `env.incoming`; none when not served by
 * `listen`) from the drain's cut until the result is called: a request whose payment is settling, so that
 * its client gets the answer and its receipt, not a reset after paying. Its stop is bounded elsewhere
 * (src/common/lifecycle.ts, `Unfinished`). Once spared no more, a connection the cut has passed over is
 * left `DEFAULT_DRAIN_MS` to send its answer (it says `Connection: close`), then closed.
 */
export function spareFromCut(incoming: { socket?: Socket } | undefined): () => void {
  const socket = incoming?.socket;
  if (!socket) return () => undefined;
  spared.set(socket, (spared.get(socket) ?? 0) + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (spared.get(socket) ?? 1) - 1;
    if (left > 0) {
      spared.set(socket, left);
      return;
    }
    spared.delete(socket);
    if (overdue.has(socket)) setTimeout(() => socket.destroy(), DEFAULT_DRAIN_MS).unref();
  };
}

export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:8403`. */
  url: string;
  port: number;
  /**
   * Starts stopping: answers every request under way or still arriving with `Connection: close`, refuses
   * new connections once none has come for `LISTEN_QUIET_MS` (at the latest half way through `drainMs`),
   * closes connections once idle for `IDLE_GRACE_MS`, and cuts what is left after `drainMs` (but for a
   * request that `spareFromCut` spares: a paid call settling). Returns at
   * once; `close()` waits for the end. Calling it again does nothing.
   */
  stopAccepting(drainMs?: number): void;
  /** `stopAccepting()`, then resolves once every connection has ended. */
  close(drainMs?: number): Promise<void>;
}

/**
 * Most bytes of a request's line and headers together, four times Node's default (16 KiB). A paid GET
 * carries its URL twice: in the request line, and inside `PAYMENT-SIGNATURE`, base64 (4/3 of its size) of
 * the payment payload that names the resource by its URL. `/api/qr`'s longest documented `data` (2,953
 * bytes at level L, each percent-encoded: about 8,900 characters) makes about 22 KiB of headers, which
 * Node's default refused with a 431 after the buyer had signed (issue 69).
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/** Loopback: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Serves `fetch` (a Hono app's) on host:port; port 0 picks a free one (read it from the result). */
export function listen(fetch: Fetch, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const serverOptions = { maxHeaderSize: MAX_HEADER_BYTES };
    const server = serve({ fetch, hostname: host, port, serverOptions }, (info) => {
      server.off("error", reject);
      const address = info.family === "IPv6" ? `[${info.address}]` : info.address;
      const stopping = drainer(server as Server);
      resolve({
        url: `http://${address}:${info.port}`,
        port: info.port,
        stopAccepting: (drainMs = DEFAULT_DRAIN_MS) => void stopping.start(drainMs),
        close: (drainMs = DEFAULT_DRAIN_MS) => stopping.start(drainMs),
      });
    });
    server.once("error", reject);
  });
}

/** A connection, the requests it is answering now, and since when it has answered none. */
interface Connection {
  busy: number;
  idleSince: number;
  /** The socket's `bytesRead` when it became idle: more since means a request is arriving. */
  readWhenIdle: number;
}

/**
 * The graceful stop of an HTTP server. Node's own `close()` closes idle keep-alive connections at once,
 * resetting a request that is on its way on one of them, and leaves busy ones open for as long as their
 * client keeps sending: under load they never become idle and end only when cut, mid-request. Here every
 * answer given once stopping starts says `Connection: close`, so each connection ends after its current
 * request, a connection idle for the grace is closed, and the listener closes once connections stop coming.
 */
function drainer(server: Server): { start(drainMs: number): Promise<void> } {
  const connections = new Map<Socket, Connection>();
  let stoppingSince: number | undefined;
  let lastConnection = 0;
  server.on("connection", (socket: Socket) => {
    lastConnection = Date.now();
    connections.set(socket, { busy: 0, idleSince: Date.now(), readWhenIdle: 0 });
    socket.once("close", () => connections.delete(socket));
  });
  const unanswered = new Set<ServerResponse>();
  // Before the app's listener: a Hono route can answer synchronously, headers and all.
  server.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (connection) connection.busy++;
    if (stoppingSince !== undefined) response.shouldKeepAlive = false;
    else unanswered.add(response);
    response.once("close", () => {
      unanswered.delete(response);
      if (!connection) return;
      connection.busy--;
      connection.idleSince = Date.now();
      connection.readWhenIdle = request.socket.bytesRead;
    });
  });
  let done: Promise<void> | undefined;
  return {
    start(drainMs) {
      done ??= new Promise<void>((resolve) => {
        const stopAt = Date.now();
        const cut = setTimeout(() => {
          for (const socket of connections.keys()) {
            if (spared.has(socket)) overdue.add(socket);
            else socket.destroy();
          }
        }, drainMs);
        cut.unref();
        // From now on every answer says `Connection: close`, those under way included: each connection ends
        // after its current request. Answers already sent said keep-alive; their connection is closed once
        // idle for the grace.
        stoppingSince = stopAt;
        for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
        unanswered.clear();
        const sweep = setInterval(() => setImmediate(closeIdle), IDLE_GRACE_MS / 4);
        sweep.unref();
        const closeListener = () =>
          NetServer.prototype.close.call(server, () => {
            clearInterval(sweep);
            clearTimeout(cut);
            resolve();
          });
        // The listener closes once no connection has come for `LISTEN_QUIET_MS` (at the latest half way
        // through the drain): closing it resets every connection the kernel has completed but the process
        // has not yet accepted, and their clients' requests with them. A client told `Connection: close`
        // reconnects for its next request and is answered too. net's close, not http's, which would also
        // destroy idle connections at once. Checked after the event loop has accepted what was waiting
        // (setImmediate follows the poll phase).
        const whenQuiet = setInterval(
          () =>
            setImmediate(() => {
              const now = Date.now();
              if (now - Math.max(lastConnection, stopAt) < LISTEN_QUIET_MS && now - stopAt < drainMs / 2)
                return;
              clearInterval(whenQuiet);
              closeListener();
            }),
          LISTEN_QUIET_MS / 4,
        );
        whenQuiet.unref();
      });
      return done;
    },
  };

  /**
   * Closes the connections idle for the grace. Run after the event loop has read its sockets
   * (setImmediate follows the poll phase): a request that arrived while the loop was busy is seen, not
   * mistaken for an idle connection because the loop lagged behind the clock. A request whose first
   * bytes have come (a slow client's headers) is under way too, though no "request" event said so yet.
   */
  function closeIdle(): void {
    const now = Date.now();
    for (const [socket, c] of connections) {
      const idle = c.busy === 0 && socket.bytesRead === c.readWhenIdle;
      if (idle && now - Math.max(c.idleSince, stoppingSince as number) >= IDLE_GRACE_MS) socket.destroy();
    }
  }
}

/**
 * Like `listen`, for an app that needs its own base URL (links, resource URLs), which a port of 0 only
 * gives after listening: requests get a 503 until `build(url)` has resolved.
 */
export async function listenWithUrl(
  build: (url: string) => Promise<Fetch>,
  host: string,
  port: number,
): Promise<Listening> {
  let app: Fetch | undefined;
  const server = await listen(
    (request, env) => (app ? app(request, env) : new Response("starting", { status: 503 })),
    host,
    port,
  );
  try {
    app = await build(server.url);
  } catch (error) {
    await server.close();
    throw error;
  }
  return server;
}
