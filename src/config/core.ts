/**
 * The settings every process has, whatever it serves: where its data lives, where it listens and is
 * reached, the analytics database's limits, its log, its PostgreSQL, its limit of unpaid requests and its
 * metrics listener.
 */
import path from "node:path";
import { z } from "zod";
import { parseAddressRanges } from "../common/rate-limit.ts";
import { DEFAULT_PORT, DEFAULT_PORTS, portSetting } from "./ports.ts";
import { type Section, settingIn } from "./section.ts";
import { BaseUrl, commaList, Port, Size } from "./values.ts";

/** The metrics listener's port: as `Port`, or `off` (made null before parsing). */
const MetricsPort = z.coerce
  .number({ error: "a port from 0 to 65535, or off" })
  .int("a port from 0 to 65535, or off")
  .min(0, "a port from 0 to 65535, or off")
  .max(65535, "a port from 0 to 65535, or off");

const CoreSchema = z.object({
  /** Where the analytics database (DuckDB) lives. */
  dataDir: z.string().min(1),
  /** Base of the `page` and `badge` URLs written into reports; null = the server's own address. */
  publicUrl: BaseUrl.nullable(),
  host: z.string().min(1),
  /** The report service's port. */
  port: Port,
  /** The other services' ports (the merchant hosts' are in `merchants`); 0 picks a free one. */
  ports: z.object({
    facilitator: Port,
    devnet: Port,
    devnetArbitrum: Port,
    devnetSolana: Port,
    shops: Port,
  }),
  /** DuckDB memory limit, e.g. "1GB"; DuckDB spills to the data directory past it. */
  duckdbMemory: Size,
  duckdbThreads: z.coerce.number().int().min(1).max(256).nullable(),
  /**
   * The log's level (X402M_LOG_LEVEL): lines at it and above are written, `silent` writes none; a request's
   * line is `info`, a health check's `debug` (docs/observability-logs-health.md). Null: not set, the
   * command's own default (`info` for the servers). Applied by `startServices` (src/common/log.ts).
   */
  logLevel: z
    .enum(["debug", "info", "warn", "error", "silent"], { error: "one of debug, info, warn, error, silent" })
    .nullable(),
  /**
   * Merchant and facilitator state (PostgreSQL): a server when set (`DATABASE_URL`), else embedded
   * PGlite in `<dataDir>/postgres`.
   */
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).nullable(),
  /**
   * The per-client limit of unpaid requests on every host of the process: merchants, reports, the
   * facilitator's free routes (src/common/rate-limit.ts; docs/platform.md, "Limits on unpaid requests").
   * `perSecond` 0 turns it off. Loopback clients are exempt unless `limited`: a reverse proxy on the host
   * shows every client as 127.0.0.1, and limiting that one address would refuse them all together
   * (docs/platform.md); the demo's buyers and the tests run there too.
   */
  unpaidLimit: z.object({
    perSecond: z.coerce.number().min(0).max(100_000),
    burst: z.coerce.number().int().min(1).max(1_000_000),
    clients: z.coerce.number().int().min(1).max(10_000_000),
    loopback: z.enum(["exempt", "limited"]),
    trustedProxies: z.array(z.string()).superRefine((entries, ctx) => {
      try {
        parseAddressRanges(entries);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    }),
    forwardedHeader: z.enum(["x-forwarded-for", "forwarded"]),
  }),
  /**
   * Where the process's Prometheus metrics are served (src/services/metrics.ts, docs/metrics.md): the
   * operator's listener on `host`:`port` (X402M_METRICS_HOST, default 127.0.0.1; X402M_METRICS_PORT,
   * default 9464, 0 any free port, `off` none: null). With `token` (X402M_METRICS_TOKEN), `/metrics` needs
   * `Authorization: Bearer <token>`, and every service's public port answers it too; never printed.
   */
  metrics: z.object({
    port: MetricsPort.nullable(),
    /** The port is the default, not the operator's: when it is taken, any free one will do (and is named). */
    portDefaulted: z.boolean(),
    host: z.string().min(1),
    token: z
      .string()
      .regex(
        /^[A-Za-z0-9._~+/=-]{32,}$/,
        "at least 32 characters of letters, digits and -._~+/= (e.g. openssl rand -hex 32)",
      )
      .nullable(),
  }),
});

export type CoreSettings = z.infer<typeof CoreSchema>;

/**
 * The unpaid limit's defaults (docs/platform.md says why): a person or an agent stays far below 20
 * unpaid requests a second, and a page's burst of documents and challenges below 100; 100,000 clients
 * remembered cost about 20 MB.
 */
export const DEFAULT_UNPAID_LIMIT = { perSecond: 20, burst: 100, clients: 100_000 } as const;

const SETTINGS: Record<string, string> = {
  dataDir: "--data / X402M_DATA",
  publicUrl: "--public-url / X402M_PUBLIC_URL",
  host: "--host / X402M_HOST",
  port: "--port / PORT",
  duckdbMemory: "X402M_DUCKDB_MEMORY",
  duckdbThreads: "X402M_DUCKDB_THREADS",
  logLevel: "X402M_LOG_LEVEL",
  databaseUrl: "DATABASE_URL",
  "unpaidLimit.perSecond": "X402M_UNPAID_RPS",
  "unpaidLimit.burst": "X402M_UNPAID_BURST",
  "unpaidLimit.clients": "X402M_UNPAID_CLIENTS",
  "unpaidLimit.loopback": "X402M_UNPAID_LOOPBACK",
  "unpaidLimit.trustedProxies": "X402M_TRUSTED_PROXIES",
  "unpaidLimit.forwardedHeader": "X402M_FORWARDED_HEADER",
  "metrics.port": "X402M_METRICS_PORT",
  "metrics.host": "X402M_METRICS_HOST",
  "metrics.token": "X402M_METRICS_TOKEN",
};

export const coreSection: Section<typeof CoreSchema> = {
  schema: CoreSchema,
  read: ({ flags, env }) => ({
    dataDir: path.resolve(flags.data ?? env.X402M_DATA ?? "data"),
    publicUrl: flags.publicUrl ?? env.X402M_PUBLIC_URL ?? null,
    host: flags.host ?? env.X402M_HOST ?? "127.0.0.1",
    port: flags.port ?? env.PORT ?? String(DEFAULT_PORT),
    ports: {
      facilitator: env.X402M_FACILITATOR_PORT || String(DEFAULT_PORTS.facilitator),
      devnet: env.X402M_DEVNET_PORT || String(DEFAULT_PORTS.devnet),
      devnetArbitrum: env.X402M_DEVNET_ARBITRUM_PORT || String(DEFAULT_PORTS.devnetArbitrum),
      devnetSolana: env.X402M_DEVNET_SOLANA_PORT || String(DEFAULT_PORTS.devnetSolana),
      shops: env.X402M_SHOPS_PORT || String(DEFAULT_PORTS.shops),
    },
    duckdbMemory: env.X402M_DUCKDB_MEMORY ?? "1GB",
    duckdbThreads: env.X402M_DUCKDB_THREADS ?? null,
    logLevel: env.X402M_LOG_LEVEL?.trim().toLowerCase() || null,
    databaseUrl: env.DATABASE_URL || null,
    unpaidLimit: {
      perSecond: env.X402M_UNPAID_RPS || String(DEFAULT_UNPAID_LIMIT.perSecond),
      burst: env.X402M_UNPAID_BURST || String(DEFAULT_UNPAID_LIMIT.burst),
      clients: env.X402M_UNPAID_CLIENTS || String(DEFAULT_UNPAID_LIMIT.clients),
      loopback: env.X402M_UNPAID_LOOPBACK || "exempt",
      trustedProxies: commaList(env.X402M_TRUSTED_PROXIES),
      forwardedHeader: (env.X402M_FORWARDED_HEADER || "x-forwarded-for").toLowerCase(),
    },
    metrics: {
      port:
        env.X402M_METRICS_PORT?.trim().toLowerCase() === "off"
          ? null
          : env.X402M_METRICS_PORT || String(DEFAULT_PORTS.metrics),
      portDefaulted: !env.X402M_METRICS_PORT,
      host: env.X402M_METRICS_HOST || "127.0.0.1",
      token: env.X402M_METRICS_TOKEN || null,
    },
  }),
  settingOf: (path) => (path[0] === "ports" && path[1] ? portSetting(path[1]) : settingIn(SETTINGS, path)),
};
