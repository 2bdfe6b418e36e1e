/**
 * The social-data API's part of the configuration (`social`): where its data comes from, and each remote
 * provider's sessions, keys and addresses.
 */
import { z } from "zod";
import type { Section } from "../../config/section.ts";
import { BaseUrl, commaList, namedValues } from "../../config/values.ts";
import { DEFAULT_QUERY_IDS, FEATURE_SWITCHES } from "./providers/x-web/operations.ts";

/**
 * Where the social-data API's data comes from (src/merchants/social/provider.ts), X402M_SOCIAL_PROVIDER:
 * `archive` (the default: the PostgreSQL archive in the merchants' database, filled by
 * `x402-merchants social import`), `x-web` (X's web GraphQL API with the operator's X sessions) or
 * `twitterapi` (twitterapi.io with the operator's key).
 */
const SocialSchema = z
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
      url: BaseUrl.optional(),
      uploadUrl: BaseUrl.optional(),
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
      url: BaseUrl.optional(),
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
  });

const SocialSection = z.object({ social: SocialSchema });

export type SocialSettings = z.infer<typeof SocialSchema>;

export const socialSection: Section<typeof SocialSection> = {
  schema: SocialSection,
  read: ({ env }) => ({
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
  }),
  settingOf: (path) => socialSetting(path.slice(1)),
};

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
