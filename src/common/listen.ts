import { serve } from "@hono/node-server";

/** What serves requests: a Hono app's `fetch`. */
export type Fetch = (request: Request) => Response | Promise<Response>;

/** How long `close()` lets requests under way finish before cutting their connections. */
export const DEFAULT_DRAIN_MS = 5_000;

export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:8403`. */
  url: string;
  port: number;
  /**
   * Stops accepting, drops idle keep-alive connections, lets requests under way finish for up to
   * `drainMs`, then cuts what is left; resolves once the server is closed.
   */
  close(drainMs?: number): Promise<void>;
}

/** Serves `fetch` (a Hono app's) on host:port; port 0 picks a free one (read it from the result). */
export function listen(fetch: Fetch, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }, (info) => {
      server.off("error", reject);
      const address = info.family === "IPv6" ? `[${info.address}]` : info.address;
      const http = server as unknown as {
        closeIdleConnections?: () => void;
        closeAllConnections?: () => void;
      };
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${address}:${info.port}`,
        port: info.port,
        close(drainMs = DEFAULT_DRAIN_MS) {
          closing ??= new Promise<void>((done) => {
            const cut = setTimeout(() => http.closeAllConnections?.(), drainMs);
            cut.unref();
            server.close(() => {
              clearTimeout(cut);
              done();
            });
            // Keep-alive connections of past clients would hold close() open until they time out.
            http.closeIdleConnections?.();
          });
          return closing;
        },
      });
    });
    server.once("error", reject);
  });
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
