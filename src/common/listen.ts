import { serve } from "@hono/node-server";

export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:8403`. */
  url: string;
  port: number;
  /** Stops accepting, drops idle keep-alive connections, and resolves once the server is closed. */
  close(): Promise<void>;
}

/** Serves `fetch` (a Hono app's) on host:port; port 0 picks a free one (read it from the result). */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }, (info) => {
      server.off("error", reject);
      const address = info.family === "IPv6" ? `[${info.address}]` : info.address;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${address}:${info.port}`,
        port: info.port,
        close() {
          closing ??= new Promise<void>((done) => {
            server.close(() => done());
            // Keep-alive connections of past clients would hold close() open until they time out.
            (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
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
  build: (url: string) => Promise<(request: Request) => Response | Promise<Response>>,
  host: string,
  port: number,
): Promise<Listening> {
  let app: ((request: Request) => Response | Promise<Response>) | undefined;
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
