import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { serve } from "@hono/node-server";

/** What serves requests: a Hono app's `fetch`. */
export type Fetch = (request: Request) => Response | Promise<Response>;

/** How long requests under way may take to finish once stopping starts, before their connections are cut. */
export const DEFAULT_DRAIN_MS = 5_000;

/**
 * How long a keep-alive connection must have been idle, once stopping starts, before it is closed. A client
 * that sends its next request on it meanwhile is answered (with `Connection: close`), where closing it at
 * once would reset that request: the client cannot tell "closed while idle" from "cut mid-request".
 */
export const IDLE_GRACE_MS = 300;

export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:8403`. */
  url: string;
  port: number;
  /**
   * Starts stopping: refuses new connections, answers every request under way or still arriving on an
   * open connection with `Connection: close`, closes connections once idle for `IDLE_GRACE_MS`, and cuts
   * what is left after `drainMs`. Returns at once; `close()` waits for the end. Calling it again does nothing.
   */
  stopAccepting(drainMs?: number): void;
  /** `stopAccepting()`, then resolves once every connection has ended. */
  close(drainMs?: number): Promise<void>;
}

/** Serves `fetch` (a Hono app's) on host:port; port 0 picks a free one (read it from the result). */
export function listen(fetch: Fetch, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }, (info) => {
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
 * answer given once the listener is closed says `Connection: close`, so each connection ends after its
 * current request, and a connection idle for the grace is closed.
 */
function drainer(server: Server): { start(drainMs: number): Promise<void> } {
  const connections = new Map<Socket, Connection>();
  let closedAt: number | undefined;
  server.on("connection", (socket: Socket) => {
    connections.set(socket, { busy: 0, idleSince: Date.now(), readWhenIdle: 0 });
    socket.once("close", () => connections.delete(socket));
  });
  const unanswered = new Set<ServerResponse>();
  // Before the app's listener: a Hono route can answer synchronously, headers and all.
  server.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (connection) connection.busy++;
    if (closedAt !== undefined) response.shouldKeepAlive = false;
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
        const cut = setTimeout(() => {
          for (const socket of connections.keys()) socket.destroy();
        }, drainMs);
        cut.unref();
        let sweep: NodeJS.Timeout | undefined;
        // The listener closes after one full turn of the event loop: connections the kernel has already
        // completed (their client is sending) are accepted and answered rather than reset with the
        // listener. net's close, not http's, which would also destroy idle connections at once.
        setImmediate(() =>
          setImmediate(() => {
            NetServer.prototype.close.call(server, () => {
              clearInterval(sweep);
              clearTimeout(cut);
              resolve();
            });
            // Only now do answers say `Connection: close`: a client told earlier would reconnect into
            // the listener's queue, and be reset with it instead of refused. Answers already sent said
            // keep-alive; their connection is closed once idle.
            closedAt = Date.now();
            for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
            unanswered.clear();
            sweep = setInterval(() => setImmediate(closeIdle), IDLE_GRACE_MS / 4);
            sweep.unref();
          }),
        );
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
      if (idle && now - Math.max(c.idleSince, closedAt as number) >= IDLE_GRACE_MS) socket.destroy();
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
    (request) => (app ? app(request) : new Response("starting", { status: 503 })),
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
