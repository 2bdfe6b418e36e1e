/**
 * The operator's metrics listener: `GET /metrics` on X402M_METRICS_HOST:X402M_METRICS_PORT (127.0.0.1:9464
 * by default), never on a public address unless the operator says so (docs/metrics.md).
 */
import { AppError } from "../common/errors.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { isLoopback } from "../common/listen.ts";
import { log } from "../common/log.ts";
import { collectProcessMetrics } from "../common/metrics.ts";
import { METRICS_PATH, metricsFetch } from "../common/metrics-server.ts";
import type { Config } from "./config.ts";
import { listenOn } from "./listen.ts";

/**
 * Starts the listener, unless the port is `off` (then undefined); resolves to its `/metrics` URL. Closed
 * last (`add`, not `addServer`): a scrape while the process stops still sees its final figures.
 */
export async function startMetricsListener(
  config: Config,
  lifecycle: Lifecycle,
): Promise<string | undefined> {
  const { port, host, token } = config.metrics;
  if (port === null) return undefined;
  if (!isLoopback(host) && token === null) {
    log("warn", "metrics served beyond loopback without a token: anyone who reaches them can read them", {
      host,
    });
  }
  collectProcessMetrics();
  const server = await listenOn("metrics", metricsFetch(token), host, port).catch((error) => {
    // Only the default gives way: a second process on the host (a facilitator beside `serve`) still starts,
    // and its ready line names where its metrics went. A port the operator chose stays an error.
    if (!(error instanceof AppError && error.code === "port_in_use" && config.metrics.portDefaulted))
      throw error;
    log("warn", "the default metrics port is taken: serving metrics on a free port instead", {
      port,
      setting: "X402M_METRICS_PORT",
    });
    return listenOn("metrics", metricsFetch(token), host, 0);
  });
  lifecycle.add("metrics http", () => server.close());
  return `${server.url}${METRICS_PATH}`;
}
