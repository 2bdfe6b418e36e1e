import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { BASE_USDC } from "../chain/base.ts";
import { AppError } from "../common/errors.ts";
import { parseAddressRanges } from "../common/rate-limit.ts";
import { allowListPolicy } from "../merchant-kit/fetch/policy.ts";
import {
  COINBASE_FACILITATOR_URL,
  cdpKeySecret,
  parseHeaderLines,
} from "../merchant-kit/payments/facilitator-auth.ts";
import { parseRate } from "../merchants/inference/metering.ts";
import { ROUTES, settingInfix } from "../merchants/inference/tiers.ts";
import { DEFAULT_QUERY_IDS, FEATURE_SWITCHES } from "../merchants/social/providers/x-web/operations.ts";

/** "in,out": a route's per-token rates, dollars per million tokens, e.g. "0.05,0.08". */
const Rates = z.string().transform((value, ctx) => {
  const [input, output, ...rest] = value.split(",").map((r) => r.trim());
  try {
    if (input === undefined || output === undefined || rest.length > 0) throw new Error("");
    parseRate(input);
    parseRate(output);
    return { inputPerMillion: input, outputPerMillion: output };
  } catch {
    ctx.addIssue({
      code: "custom",
      message: `"${value}" is not two rates "input,output" in dollars per million tokens (e.g. "0.05,0.08")`,
    });
    return z.NEVER;
  }
});

const Port = z.coerce
  .number({ error: "a port from 0 to 65535" })
  .int("a port from 0 to 65535")
  .min(0, "a port from 0 to 65535")
  .max(65535, "a port from 0 to 65535");

/** The metrics listener's port: as `Port`, or `off` (made null before parsing). */
const MetricsPort = z.coerce
  .number({ error: "a port from 0 to 65535, or off" })
  .int("a port from 0 to 65535, or off")
  .min(0, "a port from 0 to 65535, or off")
  .max(65535, "a port from 0 to 65535, or off");

/**
 * The longest guidance paragraph a host may be given: with what the kit adds, the whole stays under the
 * 4,000 characters agents' discovery tools read inline (`@agentcash/discovery`'s L4_GUIDANCE_TOO_LONG).
 */
export const MAX_GUIDANCE_CHARS = 2000;

/**
 * The one validated configuration. Read once at start from flags and the environment;
 * every module receives the slice it needs as a parameter and never reads `process.env` itself.
 */
export const ConfigSchema = z.object({
  /** Where the analytics database (DuckDB) lives. */
  dataDir: z.string().min(1),
  /** Base of the `page` and `badge` URLs written into reports; null = the server's own address. */
  publicUrl: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ""))
    .nullable(),
  host: z.string().min(1),
  /** The report service's port. */
  port: Port,
  /** The other services' ports (the merchant hosts' are in `merchants`); 0 picks a free one. */
  ports: z.object({ facilitator: Port, devnet: Port, shops: Port }),
  /** DuckDB memory limit, e.g. "1GB"; DuckDB spills to the data directory past it. */
  duckdbMemory: z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, "a size such as 1GB"),
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
   * The key the standalone facilitator (`x402-merchants facilitator`) settles with: it pays the gas.
   * Only from the environment, never a flag (flags show in process lists); never printed.
   */
  facilitatorKey: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte private key in hex, 0x-prefixed")
    .nullable(),
  /**
   * Payees the facilitator settles for without an API key (X402M_FACILITATOR_PAYEES, comma-separated),
   * lower-case; the merchants served in its own process are added to them (docs/facilitator.md).
   */
  facilitatorPayees: z.array(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, "wallet addresses separated by commas")
      .transform((a) => a.toLowerCase() as `0x${string}`),
  ),
  /** How the merchant APIs are paid: network, token and facilitator. */
  payments: z.object({
    /** CAIP-2 network of the `exact` scheme; Base is `eip155:8453` (the devnet is Base too). */
    network: z.string().regex(/^eip155:\d+$/, "a CAIP-2 EVM network such as eip155:8453"),
    asset: z.object({
      address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, "a token address"),
      /** EIP-712 domain name and version of the token: a wrong name breaks every signature. */
      name: z.string().min(1),
      version: z.string().min(1),
      decimals: z.coerce.number().int().min(0).max(36),
    }),
    /** The facilitator's base URL (verify, settle, supported). */
    facilitatorUrl: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
    /**
     * The facilitators the merchant hosts verify and settle through, in the order they are tried when one
     * is down or refuses (src/merchant-kit/payments/facilitators.ts; docs/platform.md, "Facilitators"):
     * X402M_FACILITATOR_URL's (the same as `facilitatorUrl`), then X402M_FACILITATOR_2_URL .. _9_URL. Each
     * sends its static headers (X402M_FACILITATOR[_n]_HEADERS: `Name: value` lines separated by `\n`)
     * and, with `auth: "cdp"` (X402M_FACILITATOR[_n]_AUTH=cdp, the default for Coinbase's URL), a JWT
     * signed with `cdp` per request. Headers may hold keys: never printed.
     */
    facilitators: z
      .array(
        z.object({
          url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
          headers: z.string().transform((text, ctx) => {
            try {
              return parseHeaderLines(text);
            } catch (error) {
              ctx.addIssue({ code: "custom", message: (error as Error).message });
              return z.NEVER;
            }
          }),
          auth: z.enum(["none", "cdp"], { error: '"cdp" (a JWT signed with CDP_API_KEY_*) or "none"' }),
        }),
      )
      .min(1),
    /** The Coinbase CDP API key (CDP_API_KEY_ID, CDP_API_KEY_SECRET) the `cdp` facilitators sign with; never printed. */
    cdp: z
      .object({
        apiKeyId: z.string().min(1, "CDP_API_KEY_ID is required with CDP_API_KEY_SECRET"),
        apiKeySecret: z
          .string()
          .min(1, "CDP_API_KEY_SECRET is required with CDP_API_KEY_ID")
          .transform((secret, ctx) => {
            try {
              return cdpKeySecret(secret);
            } catch (error) {
              ctx.addIssue({ code: "custom", message: (error as Error).message });
              return z.NEVER;
            }
          }),
      })
      .nullable(),
    /**
     * JSON-RPC of the payments' chain, where merchants read a payer's balance before work that writes or
     * costs upstream (src/merchant-kit/payments/payment-ledger.ts).
     */
    rpcUrl: z.url({ protocol: /^https?$/ }),
  }),
  /**
   * DNS servers the utility API's DNS and e-mail endpoints ask (`ip` or `ip:port`); empty = the system's.
   * Production should name public resolvers: the host's own may answer private split-horizon names.
   */
  dnsServers: z.array(
    z
      .string()
      .regex(/^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[?[0-9a-fA-F:]+\]?(:\d{1,5})?)$/, "an IP or IP:port"),
  ),
  /**
   * What the utility API may fetch although it is not public (loopback, private ranges): host names, IP
   * addresses and CIDR ranges, opened on purpose by the operator (docs/platform.md, "Fetching callers'
   * URLs"). Empty: public addresses only.
   */
  fetchAllow: z.array(z.string()).superRefine((entries, ctx) => {
    try {
      allowListPolicy(entries);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
    }
  }),
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
  /** Upstreams of the provider-backed utility endpoints; null = not configured (the endpoint answers 503). */
  providers: z.object({
    language: z
      .object({
        dialect: z.enum(["anthropic", "openai"]),
        url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
        key: z.string(),
        model: z.string().min(1, "X402M_LLM_MODEL is required with X402M_LLM_URL"),
        timeoutMs: z.coerce.number().int().min(1_000).max(120_000).optional(),
      })
      .nullable(),
    search: z
      .object({
        backend: z.enum(["searxng", "brave", "tavily"]),
        url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
        key: z.string().optional(),
      })
      .nullable(),
    image: z
      .object({
        url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
        key: z.string(),
        model: z.string().min(1),
      })
      .nullable(),
    /** The hosted engine of `/api/vectorize` (Vectorizer.AI); null = the local engine only. */
    vectorizer: z
      .object({
        apiId: z.string().min(1),
        apiSecret: z.string().min(1, "X402M_VECTORIZER_SECRET is required with X402M_VECTORIZER_ID"),
        url: z.url({ protocol: /^https?$/ }).optional(),
        mode: z.enum(["production", "preview", "test", "test_preview"]).optional(),
      })
      .nullable(),
  }),
  /**
   * The inference merchant's engines and, per route (`default`, `t1` .. `t15`, src/merchants/inference/tiers.ts),
   * the model it answers as and its per-token rates. A route with a GGUF model file (X402M_INFERENCE_DEFAULT_GGUF,
   * X402M_INFERENCE_TIER_<n>_GGUF) runs it on this host (node-llama-cpp, one thread), answering as its model
   * name or the file's. Else, with `upstream` (X402M_INFERENCE_LLM_URL, any OpenAI-compatible `/v1` base URL,
   * and X402M_INFERENCE_LLM_KEY), a route is served by it when its model is set (X402M_INFERENCE_DEFAULT_MODEL,
   * X402M_INFERENCE_TIER_<n>_MODEL), and then needs its rates ("in,out" in dollars per million tokens:
   * X402M_INFERENCE_DEFAULT_RATES, X402M_INFERENCE_TIER_<n>_RATES), which meter the /upto routes. Else, with
   * `engine: "offline"` (X402M_INFERENCE_ENGINE=offline: the demo, the tests), the route runs the offline engine
   * (no model), answering as `offline-<alias>` at rates derived from its price. Else it has no engine and
   * answers 503 before any payment: selling an echo at a model's price is a choice, never a default.
   */
  inference: z
    .object({
      /** The engine of the routes no model serves: `offline`, or none. */
      engine: z.enum(["offline"], { error: 'the only value is "offline" (unset: no engine)' }).nullable(),
      upstream: z
        .object({
          url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
          key: z.string(),
          timeoutMs: z.coerce.number().int().min(1_000).max(300_000).optional(),
        })
        .nullable(),
      routes: z.record(
        z.string(),
        z.object({
          model: z.string().min(1).nullable(),
          rates: Rates.nullable(),
          /** A GGUF model file this route runs locally (node-llama-cpp), before any upstream. */
          gguf: z.string().min(1).nullable().default(null),
        }),
      ),
      /**
       * The audio routes' OpenAI-compatible upstream (X402M_INFERENCE_AUDIO_URL, `.../v1`, and
       * X402M_INFERENCE_AUDIO_KEY), used beside the offline engines (Debian's flite, espeak-ng and
       * pocketsphinx, when installed), and the models it is asked for.
       */
      audio: z
        .object({
          upstream: z
            .object({
              url: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, "")),
              key: z.string(),
              timeoutMs: z.coerce.number().int().min(1_000).max(300_000).optional(),
            })
            .nullable(),
          speechModel: z.string().min(1),
          transcriptionModel: z.string().min(1),
        })
        .default({ upstream: null, speechModel: "tts-1", transcriptionModel: "whisper-1" }),
    })
    .superRefine((inference, ctx) => {
      if (!inference.upstream) return;
      for (const [alias, route] of Object.entries(inference.routes))
        if (route.model !== null && route.rates === null)
          ctx.addIssue({
            code: "custom",
            path: ["routes", alias, "rates"],
            message: 'an upstream model needs its rates, "input,output" in dollars per million tokens',
          });
    }),
  /**
   * Where the social-data API's data comes from (src/merchants/social/provider.ts), X402M_SOCIAL_PROVIDER:
   * `archive` (the default: the PostgreSQL archive in the merchants' database, filled by
   * `x402-merchants social import`), `x-web` (X's web GraphQL API with the operator's X sessions) or
   * `twitterapi` (twitterapi.io with the operator's key).
   */
  social: z
    .object({
      provider: z.enum(["archive", "x-web", "twitterapi"], {
        error: "one of archive, x-web, twitterapi",
      }),
      /** The key `next_token` is signed with (X402M_SOCIAL_TOKEN_SECRET); null: one kept in the database. */
      tokenSecret: z.string().min(32, "at least 32 characters (e.g. openssl rand -hex 32)").nullable(),
      /** Time limit of one upstream call (X402M_SOCIAL_TIMEOUT_MS). */
      timeoutMs: z.coerce.number().int().min(1_000).max(120_000).optional(),
      /** How long a remote provider's lookups are kept and served again (X402M_SOCIAL_CACHE_SECONDS); 0 = not kept. */
      cacheSeconds: z.coerce.number().int().min(0).max(3_600),
      xWeb: z.object({
        /**
         * The operator's X web sessions, `auth_token:ct0` pairs separated by commas (X402M_SOCIAL_X_ACCOUNTS):
         * used in turn, each rested while X rate-limits it.
         */
        accounts: z.array(z.object({ authToken: z.string().min(1), ct0: z.string().min(1) })),
        url: z
          .url({ protocol: /^https?$/ })
          .transform((u) => u.replace(/\/+$/, ""))
          .optional(),
        uploadUrl: z
          .url({ protocol: /^https?$/ })
          .transform((u) => u.replace(/\/+$/, ""))
          .optional(),
        bearerToken: z.string().min(1).optional(),
        /** Query ids that replace the defaults when X's web release rotates them (`Operation=id,...`). */
        queryIds: z.record(
          z.string(),
          z.string().regex(/^[\w-]+$/, "a query id such as AWbeRIdkLtqTRN7yL_H8yw"),
        ),
        /**
         * Feature switches sent with these values instead of the defaults (`name=true|false,...`, X402M_SOCIAL_X_FEATURES),
         * when X's web release changes what a switch must be. Only switches the web app sends: a misspelt
         * name would otherwise change nothing, silently.
         */
        features: z
          .record(z.string(), z.string())
          .superRefine((features, ctx) => {
            for (const [name, value] of Object.entries(features)) {
              const message = !FEATURE_SWITCHES.has(name)
                ? `no X feature switch ${name}: only the switches the web app sends can be set (src/merchants/social/providers/x-web/operations.ts)`
                : value !== "true" && value !== "false"
                  ? `${name} takes true or false, not "${value}"`
                  : undefined;
              if (message) ctx.addIssue({ code: "custom", message });
            }
          })
          .transform((features) =>
            Object.fromEntries(Object.entries(features).map(([name, value]) => [name, value === "true"])),
          ),
      }),
      twitterapi: z.object({
        key: z.string().nullable(),
        url: z
          .url({ protocol: /^https?$/ })
          .transform((u) => u.replace(/\/+$/, ""))
          .optional(),
        /** The proxy twitterapi.io's uploads require (`http://user:pass@host:port`); none: uploads answer 501. */
        proxy: z.url({ protocol: /^(https?|socks5)$/ }).optional(),
      }),
    })
    .superRefine((social, ctx) => {
      if (social.provider === "x-web" && social.xWeb.accounts.length === 0)
        ctx.addIssue({
          code: "custom",
          path: ["xWeb", "accounts"],
          message: "the x-web provider needs at least one X session, auth_token:ct0",
        });
      const unknown = Object.keys(social.xWeb.queryIds).filter((op) => !Object.hasOwn(DEFAULT_QUERY_IDS, op));
      if (unknown.length > 0)
        ctx.addIssue({
          code: "custom",
          path: ["xWeb", "queryIds"],
          message: `no X operation ${unknown.join(", ")}; known: ${Object.keys(DEFAULT_QUERY_IDS).join(", ")}`,
        });
      if (social.provider === "twitterapi" && !social.twitterapi.key)
        ctx.addIssue({
          code: "custom",
          path: ["twitterapi", "key"],
          message: "the twitterapi provider needs its key",
        });
    }),
  /**
   * Who runs the merchant hosts, in each one's OpenAPI document (`info.contact`): registries and agent
   * platforms reach the operator there, and some verify a host's ownership by its email
   * (src/merchant-kit/host-info.ts). Null: no email, and each host's reference page as its URL.
   */
  contact: z.object({
    email: z.email("an email address").nullable(),
    url: z.url({ protocol: /^https?$/ }).nullable(),
  }),
  /** Per merchant host: who is paid, where buyers reach it, which port it listens on. */
  merchants: z.record(
    z.string(),
    z.object({
      /** The wallet the merchant's payments go to; null = not configured (the host cannot start). */
      payTo: z
        .string()
        .regex(/^0x[0-9a-fA-F]{40}$/, "a wallet address")
        .transform((a) => a.toLowerCase() as `0x${string}`)
        .nullable(),
      /** Public base URL of the host (listings, OpenAPI, resource URLs); null = its own address. */
      publicUrl: z
        .url({ protocol: /^https?$/ })
        .transform((u) => u.replace(/\/+$/, ""))
        .nullable(),
      port: Port,
      /**
       * The host's own paragraph of guidance for agents (`info.x-guidance`, `/llms.txt`); null: its
       * catalogue's. The kit adds how to pay and where its documents are.
       */
      guidance: z
        .string()
        .trim()
        .min(1)
        .max(MAX_GUIDANCE_CHARS, `at most ${MAX_GUIDANCE_CHARS} characters`)
        .nullable(),
    }),
  ),
});

export type Config = z.infer<typeof ConfigSchema>;

/**
 * Every service's default port, in one place: anvil's usual 8545 for the devnet, then the service's own
 * from 8402 up. The merchant hosts' follow in `MERCHANT_HOSTS`.
 */
export const DEFAULT_PORTS = {
  reports: 8402,
  facilitator: 8403,
  shops: 8406,
  devnet: 8545,
  /** The operator's metrics listener: the OpenTelemetry Prometheus exporter's usual port. */
  metrics: 9464,
} as const;
export const DEFAULT_PORT = DEFAULT_PORTS.reports;
export const DEFAULT_PUBLIC_URL = `http://127.0.0.1:${DEFAULT_PORT}`;
/** The devnet's facilitator (`bin/x402-merchants devnet`). */
export const DEFAULT_FACILITATOR_URL = `http://127.0.0.1:${DEFAULT_PORTS.facilitator}`;

/**
 * The merchant hosts and their default ports. An alias host (spec 4.2.3) lists some endpoints of another
 * merchant under its own host name; its wallet defaults to that merchant's.
 */
export const MERCHANT_HOSTS = {
  utility: { port: 8404, payToFrom: null },
  "utility-alias": { port: 8405, payToFrom: "utility" },
  /** 8406 is the demo's shops (`DEFAULT_PORTS.shops`). */
  inference: { port: 8407, payToFrom: null },
  social: { port: 8408, payToFrom: null },
  /** The paid proxy (spec 4.2.3): `/pay/<agent_id>`, paid to the social-data API's wallet unless set. */
  "social-proxy": { port: 8409, payToFrom: "social" },
} as const satisfies Record<string, { port: number; payToFrom: string | null }>;

export type MerchantHost = keyof typeof MERCHANT_HOSTS;

/** `utility-alias` -> `X402M_UTILITY_ALIAS_`: the prefix of a host's environment variables. */
export function merchantEnvPrefix(host: string): string {
  return `X402M_${host.toUpperCase().replace(/-/g, "_")}_`;
}

/** Where a service's port is set, for messages such as "port 8404 is in use: set ...". */
export function portSetting(service: string): string {
  switch (service) {
    case "reports":
      return "PORT or --port";
    case "facilitator":
    case "devnet":
    case "shops":
    case "metrics":
      return `X402M_${service.toUpperCase()}_PORT`;
    default:
      return `${merchantEnvPrefix(service)}PORT`;
  }
}

/**
 * The unpaid limit's defaults (docs/platform.md says why): a person or an agent stays far below 20
 * unpaid requests a second, and a page's burst of documents and challenges below 100; 100,000 clients
 * remembered cost about 20 MB.
 */
export const DEFAULT_UNPAID_LIMIT = { perSecond: 20, burst: 100, clients: 100_000 } as const;

/** Hosted search backends' own addresses; SearXNG has none (X402M_SEARCH_URL names the instance). */
const SEARCH_DEFAULT_URLS: Record<string, string> = {
  brave: "https://api.search.brave.com",
  tavily: "https://api.tavily.com",
};

export interface ConfigInput {
  /** Command-line values; undefined means "not given". */
  flags?: Partial<Record<"data" | "publicUrl" | "host" | "port", string | undefined>>;
  env?: Record<string, string | undefined>;
}

export class ConfigError extends AppError {
  constructor(message: string) {
    super(500, "bad_configuration", message);
  }
}

/** The process's configuration: the one place `process.env` is read. */
export function loadConfigFromProcess(flags: ConfigInput["flags"] = {}): Config {
  return loadConfig({ flags, env: process.env });
}

/** Flags win over the environment, the environment over the defaults. */
export function loadConfig({ flags = {}, env = {} }: ConfigInput = {}): Config {
  const facilitators = facilitatorsOf(env);
  const raw = {
    dataDir: path.resolve(flags.data ?? env.X402M_DATA ?? "data"),
    publicUrl: flags.publicUrl ?? env.X402M_PUBLIC_URL ?? null,
    host: flags.host ?? env.X402M_HOST ?? "127.0.0.1",
    port: flags.port ?? env.PORT ?? String(DEFAULT_PORT),
    ports: {
      facilitator: env.X402M_FACILITATOR_PORT || String(DEFAULT_PORTS.facilitator),
      devnet: env.X402M_DEVNET_PORT || String(DEFAULT_PORTS.devnet),
      shops: env.X402M_SHOPS_PORT || String(DEFAULT_PORTS.shops),
    },
    duckdbMemory: env.X402M_DUCKDB_MEMORY ?? "1GB",
    duckdbThreads: env.X402M_DUCKDB_THREADS ?? null,
    logLevel: env.X402M_LOG_LEVEL?.trim().toLowerCase() || null,
    databaseUrl: env.DATABASE_URL || null,
    facilitatorKey: facilitatorKeyOf(env),
    facilitatorPayees: commaList(env.X402M_FACILITATOR_PAYEES),
    dnsServers: commaList(env.X402M_DNS_SERVERS),
    fetchAllow: commaList(env.X402M_FETCH_ALLOW),
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
    providers: {
      language: env.X402M_LLM_URL
        ? {
            dialect: env.X402M_LLM_DIALECT ?? "openai",
            url: env.X402M_LLM_URL,
            key: env.X402M_LLM_KEY ?? "",
            model: env.X402M_LLM_MODEL ?? "",
            timeoutMs: env.X402M_LLM_TIMEOUT_MS,
          }
        : null,
      search: env.X402M_SEARCH_BACKEND
        ? {
            backend: env.X402M_SEARCH_BACKEND,
            url: env.X402M_SEARCH_URL ?? SEARCH_DEFAULT_URLS[env.X402M_SEARCH_BACKEND] ?? "",
            key: env.X402M_SEARCH_KEY,
          }
        : null,
      image: env.X402M_IMAGE_KEY
        ? {
            url: env.X402M_IMAGE_URL ?? "https://api.openai.com/v1",
            key: env.X402M_IMAGE_KEY,
            model: env.X402M_IMAGE_MODEL ?? "gpt-image-1",
          }
        : null,
      vectorizer: env.X402M_VECTORIZER_ID
        ? {
            apiId: env.X402M_VECTORIZER_ID,
            apiSecret: env.X402M_VECTORIZER_SECRET ?? "",
            url: env.X402M_VECTORIZER_URL,
            mode: env.X402M_VECTORIZER_MODE,
          }
        : null,
    },
    inference: {
      engine: env.X402M_INFERENCE_ENGINE || null,
      upstream: env.X402M_INFERENCE_LLM_URL
        ? {
            url: env.X402M_INFERENCE_LLM_URL,
            key: env.X402M_INFERENCE_LLM_KEY ?? "",
            timeoutMs: env.X402M_INFERENCE_LLM_TIMEOUT_MS,
          }
        : null,
      audio: {
        upstream: env.X402M_INFERENCE_AUDIO_URL
          ? {
              url: env.X402M_INFERENCE_AUDIO_URL,
              key: env.X402M_INFERENCE_AUDIO_KEY ?? "",
              timeoutMs: env.X402M_INFERENCE_AUDIO_TIMEOUT_MS,
            }
          : null,
        speechModel: env.X402M_INFERENCE_SPEECH_MODEL || "tts-1",
        transcriptionModel: env.X402M_INFERENCE_TRANSCRIPTION_MODEL || "whisper-1",
      },
      routes: Object.fromEntries(
        ROUTES.map((route) => {
          const prefix = `X402M_INFERENCE_${settingInfix(route)}_`;
          return [
            route.alias,
            {
              model: env[`${prefix}MODEL`] || null,
              rates: env[`${prefix}RATES`] || null,
              gguf: env[`${prefix}GGUF`] || null,
            },
          ];
        }),
      ),
    },
    social: {
      provider: env.X402M_SOCIAL_PROVIDER || "archive",
      tokenSecret: env.X402M_SOCIAL_TOKEN_SECRET || null,
      timeoutMs: env.X402M_SOCIAL_TIMEOUT_MS || undefined,
      cacheSeconds: env.X402M_SOCIAL_CACHE_SECONDS || "60",
      xWeb: {
        accounts: commaList(env.X402M_SOCIAL_X_ACCOUNTS).map((pair) => {
          const [authToken = "", ct0 = ""] = pair.split(":").map((part) => part.trim());
          return { authToken, ct0 };
        }),
        url: env.X402M_SOCIAL_X_URL || undefined,
        uploadUrl: env.X402M_SOCIAL_X_UPLOAD_URL || undefined,
        bearerToken: env.X402M_SOCIAL_X_BEARER || undefined,
        queryIds: namedValues(env.X402M_SOCIAL_X_QUERY_IDS),
        features: namedValues(env.X402M_SOCIAL_X_FEATURES),
      },
      twitterapi: {
        key: env.X402M_SOCIAL_TWITTERAPI_KEY || null,
        url: env.X402M_SOCIAL_TWITTERAPI_URL || undefined,
        proxy: env.X402M_SOCIAL_TWITTERAPI_PROXY || undefined,
      },
    },
    payments: {
      network: env.X402M_NETWORK ?? "eip155:8453",
      asset: {
        address: env.X402M_ASSET ?? BASE_USDC,
        name: env.X402M_ASSET_NAME ?? "USD Coin",
        version: env.X402M_ASSET_VERSION ?? "2",
        decimals: env.X402M_ASSET_DECIMALS ?? "6",
      },
      facilitatorUrl: facilitators[0]?.url,
      facilitators,
      cdp:
        env.CDP_API_KEY_ID || env.CDP_API_KEY_SECRET
          ? { apiKeyId: env.CDP_API_KEY_ID ?? "", apiKeySecret: env.CDP_API_KEY_SECRET ?? "" }
          : null,
      rpcUrl: env.X402M_RPC_URL ?? `http://127.0.0.1:${DEFAULT_PORTS.devnet}`,
    },
    contact: { email: env.X402M_CONTACT_EMAIL || null, url: env.X402M_CONTACT_URL || null },
    merchants: Object.fromEntries(
      Object.entries(MERCHANT_HOSTS).map(([host, defaults]) => {
        const prefix = merchantEnvPrefix(host);
        const fallback = defaults.payToFrom
          ? env[`${merchantEnvPrefix(defaults.payToFrom)}PAY_TO`]
          : undefined;
        return [
          host,
          {
            payTo: env[`${prefix}PAY_TO`] || fallback || null,
            publicUrl: env[`${prefix}URL`] || null,
            port: env[`${prefix}PORT`] ?? String(defaults.port),
            guidance: env[`${prefix}GUIDANCE`] || null,
          },
        ];
      }),
    ),
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? settingOf(issue.path.map(String)) : "configuration";
    throw new ConfigError(`invalid ${where}: ${issue?.message}`);
  }
  return parsed.data;
}

/**
 * The facilitator's signing key: X402M_FACILITATOR_KEY, or the content of the file X402M_FACILITATOR_KEY_FILE
 * names (whitespace trimmed), never both. A refusal names the setting, never the content.
 */
function facilitatorKeyOf(env: Record<string, string | undefined>): string | null {
  const file = env.X402M_FACILITATOR_KEY_FILE;
  if (!file) return env.X402M_FACILITATOR_KEY || null;
  if (env.X402M_FACILITATOR_KEY) {
    throw new ConfigError(
      "both X402M_FACILITATOR_KEY and X402M_FACILITATOR_KEY_FILE are set: pick one (the file keeps the key out of the environment)",
    );
  }
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8").trim();
  } catch (error) {
    throw new ConfigError(
      `invalid X402M_FACILITATOR_KEY_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
    );
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(content)) {
    throw new ConfigError(
      `invalid X402M_FACILITATOR_KEY_FILE: ${file} must hold a 32-byte private key in hex, 0x-prefixed, and nothing else`,
    );
  }
  return content;
}

/** The most facilitators the merchants try in turn (X402M_FACILITATOR_URL, then _2_ .. _9_). */
export const MAX_FACILITATORS = 9;

/** The prefix of the n-th facilitator's settings (from 1): `X402M_FACILITATOR_`, `X402M_FACILITATOR_2_`... */
export function facilitatorEnvPrefix(n: number): string {
  return n === 1 ? "X402M_FACILITATOR_" : `X402M_FACILITATOR_${n}_`;
}

/**
 * The facilitators' raw settings, in order. The first's URL defaults to Coinbase's when a CDP key is set,
 * else to the devnet's; its auth to `cdp` for Coinbase's host. Numbered ones follow without gaps.
 */
function facilitatorsOf(env: Record<string, string | undefined>) {
  const list = [];
  for (let n = 1; n <= MAX_FACILITATORS; n++) {
    const prefix = facilitatorEnvPrefix(n);
    const url =
      n === 1
        ? (env.X402M_FACILITATOR_URL ??
          (env.CDP_API_KEY_ID ? COINBASE_FACILITATOR_URL : DEFAULT_FACILITATOR_URL))
        : env[`${prefix}URL`];
    if (!url) {
      const later = Array.from({ length: MAX_FACILITATORS - n + 1 }, (_, i) => facilitatorEnvPrefix(n + i));
      const stray = later
        .flatMap((p) => ["URL", "HEADERS", "AUTH"].map((f) => `${p}${f}`))
        .find((k) => env[k]);
      if (stray)
        throw new ConfigError(
          `invalid ${stray}: set ${prefix}URL first (facilitators are numbered 2, 3, ... in order)`,
        );
      break;
    }
    const auth = env[`${prefix}AUTH`] || (/^https:\/\/api\.cdp\.coinbase\.com\//.test(url) ? "cdp" : "none");
    if (auth === "cdp" && !env.CDP_API_KEY_ID && !env.CDP_API_KEY_SECRET)
      throw new ConfigError(
        `invalid ${prefix}${env[`${prefix}AUTH`] ? "AUTH" : "URL"}: ${url} signs its requests with a CDP API key: set CDP_API_KEY_ID and CDP_API_KEY_SECRET${env[`${prefix}AUTH`] ? "" : ` (or ${prefix}AUTH=none)`}`,
      );
    list.push({ url, headers: env[`${prefix}HEADERS`] ?? "", auth });
  }
  return list;
}

/** A comma-separated setting's entries, trimmed, empty ones dropped. */
function commaList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** A `name=value,...` setting's pairs, trimmed; a pair without `=` has an empty value (refused by its schema). */
function namedValues(value: string | undefined): Record<string, string> {
  return Object.fromEntries(
    commaList(value).map((pair) => {
      const at = pair.indexOf("=");
      return at < 0 ? [pair, ""] : [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

/** The flag or environment variable behind a configuration path, so an error names what to change. */
function settingOf(path: readonly string[]): string {
  const [head, second, third] = path;
  const fixed: Record<string, string> = {
    dataDir: "--data / X402M_DATA",
    publicUrl: "--public-url / X402M_PUBLIC_URL",
    host: "--host / X402M_HOST",
    port: "--port / PORT",
    duckdbMemory: "X402M_DUCKDB_MEMORY",
    duckdbThreads: "X402M_DUCKDB_THREADS",
    logLevel: "X402M_LOG_LEVEL",
    databaseUrl: "DATABASE_URL",
    facilitatorKey: "X402M_FACILITATOR_KEY",
    facilitatorPayees: "X402M_FACILITATOR_PAYEES",
    dnsServers: "X402M_DNS_SERVERS",
    fetchAllow: "X402M_FETCH_ALLOW",
    "unpaidLimit.perSecond": "X402M_UNPAID_RPS",
    "unpaidLimit.burst": "X402M_UNPAID_BURST",
    "unpaidLimit.clients": "X402M_UNPAID_CLIENTS",
    "unpaidLimit.loopback": "X402M_UNPAID_LOOPBACK",
    "unpaidLimit.trustedProxies": "X402M_TRUSTED_PROXIES",
    "unpaidLimit.forwardedHeader": "X402M_FORWARDED_HEADER",
    "contact.email": "X402M_CONTACT_EMAIL",
    "contact.url": "X402M_CONTACT_URL",
    "metrics.port": "X402M_METRICS_PORT",
    "metrics.host": "X402M_METRICS_HOST",
    "metrics.token": "X402M_METRICS_TOKEN",
    "payments.network": "X402M_NETWORK",
    "payments.facilitatorUrl": "X402M_FACILITATOR_URL",
    "payments.rpcUrl": "X402M_RPC_URL",
    "payments.asset": `X402M_ASSET${third && third !== "address" ? `_${third.toUpperCase()}` : ""}`,
    "providers.language": `X402M_LLM_${third === "timeoutMs" ? "TIMEOUT_MS" : (third ?? "URL").toUpperCase()}`,
    "providers.search": `X402M_SEARCH_${(third ?? "backend").toUpperCase()}`,
    "providers.image": `X402M_IMAGE_${(third ?? "key").toUpperCase()}`,
  };
  if (head === "payments" && second === "facilitators")
    return `${facilitatorEnvPrefix(Number(third ?? 0) + 1)}${(path[3] ?? "url").toUpperCase()}`;
  if (head === "payments" && second === "cdp")
    return third === "apiKeyId" ? "CDP_API_KEY_ID" : "CDP_API_KEY_SECRET";
  const setting = fixed[`${head}.${second}`] ?? fixed[head ?? ""];
  if (setting) return setting;
  if (head === "inference" && second === "audio") {
    if (third === "upstream") {
      const field = path[3] === "timeoutMs" ? "TIMEOUT_MS" : (path[3] ?? "url").toUpperCase();
      return `X402M_INFERENCE_AUDIO_${field}`;
    }
    return third === "speechModel" ? "X402M_INFERENCE_SPEECH_MODEL" : "X402M_INFERENCE_TRANSCRIPTION_MODEL";
  }
  if (head === "inference" && second === "engine") return "X402M_INFERENCE_ENGINE";
  if (head === "inference" && second === "upstream")
    return `X402M_INFERENCE_LLM_${third === "timeoutMs" ? "TIMEOUT_MS" : (third ?? "URL").toUpperCase()}`;
  if (head === "inference" && second === "routes" && third) {
    const route = ROUTES.find((r) => r.alias === third);
    if (route) return `X402M_INFERENCE_${settingInfix(route)}_${(path[3] ?? "rates").toUpperCase()}`;
  }
  if (head === "social") return socialSetting(path.slice(1));
  if (head === "ports" && second) return portSetting(second);
  if (head === "merchants" && second) {
    const field: Record<string, string> = { payTo: "PAY_TO", publicUrl: "URL", guidance: "GUIDANCE" };
    return `${merchantEnvPrefix(second)}${field[third ?? ""] ?? "PORT"}`;
  }
  return path.join(".");
}

/** The environment variable behind a `social` configuration path. */
function socialSetting([first, second]: readonly string[]): string {
  if (first === "xWeb") {
    const x: Record<string, string> = {
      accounts: "X402M_SOCIAL_X_ACCOUNTS",
      url: "X402M_SOCIAL_X_URL",
      uploadUrl: "X402M_SOCIAL_X_UPLOAD_URL",
      bearerToken: "X402M_SOCIAL_X_BEARER",
      queryIds: "X402M_SOCIAL_X_QUERY_IDS",
      features: "X402M_SOCIAL_X_FEATURES",
    };
    return x[second ?? ""] ?? "X402M_SOCIAL_X_ACCOUNTS";
  }
  if (first === "twitterapi") return `X402M_SOCIAL_TWITTERAPI_${(second ?? "key").toUpperCase()}`;
  const fixed: Record<string, string> = {
    provider: "X402M_SOCIAL_PROVIDER",
    tokenSecret: "X402M_SOCIAL_TOKEN_SECRET",
    timeoutMs: "X402M_SOCIAL_TIMEOUT_MS",
    cacheSeconds: "X402M_SOCIAL_CACHE_SECONDS",
  };
  return fixed[first ?? ""] ?? "X402M_SOCIAL_PROVIDER";
}
