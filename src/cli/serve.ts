import type { Analytics } from "../analytics/duckdb.ts";
import { openDatabase } from "../common/db/index.ts";
import { listenWithUrl } from "../common/listen.ts";
import {
  type Config,
  ConfigError,
  MERCHANT_HOSTS,
  type MerchantHost,
  merchantEnvPrefix,
} from "../config/config.ts";
import { dataLayout } from "../config/layout.ts";
import type { IndexerOptions } from "../indexer/index.ts";
import { reportRoutes } from "../reports/http.ts";
import { ReportService } from "../reports/service.ts";
import { configFrom, type Flags, openAnalytics, UsageError } from "./args.ts";
import { quietSdkLogs } from "./sdk-logs.ts";

export type ServiceName = "reports" | MerchantHost;
export const SERVICE_NAMES: readonly ServiceName[] = [
  "reports",
  ...(Object.keys(MERCHANT_HOSTS) as MerchantHost[]),
];

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
 * each service to its base URL when ready; stops on SIGINT/SIGTERM. With `--rpc URL` (and the `index`
 * flags), the indexer follows that chain into the analytics database in the same process (DuckDB has one writing
 * process), so the reports stay current while they are served.
 */
export async function runServe(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("serve takes no arguments");
  const config = configFrom(flags);
  const services = chooseServices(flags.only, config);
  const merchants = services.filter((s): s is MerchantHost => s !== "reports");
  if (flags.rpc !== undefined && !services.includes("reports")) {
    throw new UsageError("--rpc indexes into the report service's analytics: serve reports too");
  }
  // Loaded on demand, like `index`: the indexer is only for --rpc.
  const follow = flags.rpc === undefined ? undefined : await import("./indexer.ts");
  const indexerOptions = follow?.indexerOptionsFrom(flags, { follow: true });
  for (const name of merchants) {
    if (!config.merchants[name]?.payTo) {
      throw new ConfigError(`${name} needs its wallet: set ${merchantEnvPrefix(name)}PAY_TO`);
    }
  }

  // Stdout carries the one ready line.
  quietSdkLogs();
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close();
  };
  const urls: Record<string, string> = {};
  let indexer: Promise<unknown> | undefined;
  try {
    if (services.includes("reports")) {
      const analytics = await openAnalytics(config);
      closers.push(async () => analytics.close());
      const server = await listenWithUrl(
        async (url) =>
          reportRoutes(new ReportService(analytics, { publicUrl: config.publicUrl ?? url }), {
            notice: () => analyticsNotice(analytics),
          }).fetch,
        config.host,
        config.port,
      );
      closers.push(() => server.close());
      urls.reports = server.url;
      if (indexerOptions) indexer = (await startFollowing(analytics, indexerOptions, closers)).running;
    }
    if (merchants.length > 0) {
      const db = await openDatabase({
        pgliteDir: dataLayout(config.dataDir).pglite.merchants,
        databaseUrl: config.databaseUrl,
      });
      closers.push(() => db.close());
      // Loaded on demand: the x402 packages and mathjs would slow every other command's start.
      const { serveMerchant } = await import("../services/merchant.ts");
      for (const name of merchants) {
        const server = await serveMerchant(name, config, db);
        closers.push(() => server.close());
        urls[name] = server.url;
      }
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  process.stdout.write(`${JSON.stringify(urls)}\n`);

  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  try {
    // An indexer that gives up (the RPC keeps failing) stops the whole command: stale reports served
    // as current would mislead.
    await Promise.race([stopped, ...(indexer ? [indexer] : [])]);
  } finally {
    await closeAll();
  }
  return 0;
}

/** Runs the indexer in follow mode on its own connection to `analytics`; its closer stops it first. */
async function startFollowing(
  analytics: Analytics,
  options: Omit<IndexerOptions, "analytics" | "signal" | "onEvent">,
  closers: (() => Promise<void>)[],
): Promise<{ running: Promise<unknown> }> {
  const { runIndexer, createReporter } = await import("../indexer/index.ts");
  const connection = await analytics.fork();
  const controller = new AbortController();
  const reporter = createReporter();
  const running = runIndexer({
    ...options,
    analytics: connection,
    signal: controller.signal,
    onEvent: (event) => reporter.onEvent(event),
  });
  running.catch(() => undefined);
  closers.push(async () => {
    controller.abort();
    await running.catch(() => undefined);
    reporter.stop();
    connection.close();
  });
  return { running };
}

/** The banner a demo analytics database asks for (`meta.notice`, set by the demo), if any. */
export async function analyticsNotice(analytics: Analytics): Promise<string | undefined> {
  return (await analytics.one<{ value: string }>("SELECT value FROM meta WHERE key = 'notice'"))?.value;
}
