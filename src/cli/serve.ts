import { UsageError } from "../common/errors.ts";
import { Lifecycle, untilSignal } from "../common/lifecycle.ts";
import { MERCHANT_HOST_NAMES, type MerchantHost } from "../config/ports.ts";
import type { Config } from "../services/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { quietSdkLogs } from "./sdk-logs.ts";

export type ServiceName = "reports" | MerchantHost;
export const SERVICE_NAMES: readonly ServiceName[] = ["reports", ...MERCHANT_HOST_NAMES];

/**
 * The services `--only a,b` names; without it, the report service and every merchant host whose wallet
 * is configured.
 */
export function chooseServices(only: string | undefined, config: Config): ServiceName[] {
  if (only === undefined) {
    return SERVICE_NAMES.filter((name) => name === "reports" || config.merchants[name]?.payTo);
  }
  const names = only
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !SERVICE_NAMES.includes(n as ServiceName));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(
      `--only takes a list of ${SERVICE_NAMES.join(", ")}; not "${unknown.join(",") || only}"`,
    );
  }
  return [...new Set(names)] as ServiceName[];
}

/**
 * Serves the report service and the merchant hosts, each on its own port. Prints one JSON line mapping
 * each service to its base URL, and `metrics` to the operator's `/metrics` (docs/metrics.md), when ready; stops
 * on SIGINT/SIGTERM. With `--rpc URL` (and the `index` flags), the indexer follows that chain (`--chain`) into the
 * analytics database in the same process (DuckDB has one writing process), so the reports stay current while
 * they are served, and so does one indexer for each chain `X402M_RPC_URL_<CHAIN>` gives an RPC; through an RPC
 * outage each waits (`--outage-retry-max SECONDS` between attempts, default 60) and catches up after.
 */
export async function runServe(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("serve takes no arguments");
  const config = configFrom(flags);
  const services = chooseServices(flags.only, config);
  const merchants = services.filter((s): s is MerchantHost => s !== "reports");
  if (flags.rpc !== undefined && !services.includes("reports")) {
    throw new UsageError("--rpc indexes into the report service's analytics database: serve reports too");
  }
  if (flags.chain !== undefined && flags.rpc === undefined) {
    throw new UsageError("--chain names the chain --rpc serves: give --rpc URL too");
  }
  // The chains to follow: --rpc's, and each given X402M_RPC_URL_<SLUG>, when the report service is served here
  // (a merchant host alone indexes nothing, whatever the environment it shares with the report unit says).
  const rpcs = services.includes("reports") ? config.follow.rpc : {};
  const following = flags.rpc !== undefined || Object.keys(rpcs).length > 0;
  // Loaded on demand: the indexer is only for a chain to follow, the x402 packages and mathjs only for merchants.
  const follow = following ? await import("./indexer.ts") : undefined;
  const indexers = follow?.followOptionsFrom(flags, rpcs) ?? [];
  const outageMaxMs = follow?.outageRetryMaxMs(flags);
  if (flags["outage-retry-max"] !== undefined && !follow) {
    throw new UsageError(
      "--outage-retry-max is for the indexers of serve --rpc URL or X402M_RPC_URL_<CHAIN>",
    );
  }
  // start.ts and merchants.ts, not the services' index: that also loads the facilitator, which serve never starts.
  const { startServices } = await import("../services/start.ts");
  const { payToOf } = await import("../services/merchants.ts");
  for (const name of merchants) payToOf(config, name);

  // Stdout carries the one ready line.
  quietSdkLogs();
  const lifecycle = new Lifecycle();
  const stopped = untilSignal();
  try {
    // A progress reporter per chain: each line names its chain when several are followed.
    const { createReporter } = following
      ? await import("../indexer/index.ts")
      : { createReporter: undefined };
    const started = await startServices({
      config,
      lifecycle,
      merchants,
      reports: services.includes("reports")
        ? {
            follow: indexers.map((indexer) => {
              const reporter = createReporter?.(
                process.stderr,
                indexers.length > 1 ? { chain: indexer.chain?.slug } : {},
              );
              lifecycle.add("progress", () => reporter?.stop());
              return {
                ...indexer,
                outage: outageMaxMs === undefined ? undefined : { maxMs: outageMaxMs },
                onEvent: (event) => reporter?.onEvent(event),
              };
            }),
          }
        : undefined,
    });
    // One line in the order the services were named: reports first; then where the metrics are, unless
    // X402M_METRICS_PORT is off.
    const urls: Record<string, string | undefined> = Object.fromEntries(
      services.map((name) => [name, started.urls[name]]),
    );
    if (started.urls.metrics) urls.metrics = started.urls.metrics;
    process.stdout.write(`${JSON.stringify(urls)}\n`);
    // An RPC outage does not stop it: the indexer waits for the RPC while the reports are served, and
    // /healthz says how far behind they are. An indexer that fails otherwise stops the command.
    await Promise.race([stopped, started.failed]);
  } finally {
    await lifecycle.close();
  }
  return 0;
}
