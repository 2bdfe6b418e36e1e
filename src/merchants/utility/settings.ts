/**
 * The utility API's part of the configuration (its alias host's too): the DNS servers its DNS and e-mail
 * endpoints ask, what it may fetch although not public, and the upstreams of its provider-backed endpoints.
 */
import { z } from "zod";
import type { Section } from "../../config/section.ts";
import { BaseUrl, commaList } from "../../config/values.ts";
import { allowListPolicy } from "../../merchant-kit/index.ts";
import { DEFAULT_PAGE_BUDGET } from "./pages/budget.ts";

const UtilitySchema = z.object({
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
   * What a page endpoint's call (scrape, summarize, seo/metadata, seo/alt-check) may spend reading its page
   * in a worker, per $0.001 of its price: milliseconds of the worker's CPU (and five times that of wall
   * clock; the worker is terminated past either) and MB of heap (the worker's cap). Past any of them the call
   * is refused, 422 `too_complex`, not charged.
   */
  pageBudget: z.object({
    cpuMs: z.coerce.number().int().min(100).max(600_000),
    heapMb: z.coerce.number().int().min(64).max(16_384),
  }),
  /** Upstreams of the provider-backed utility endpoints; null = not configured (the endpoint answers 503). */
  providers: z.object({
    language: z
      .object({
        dialect: z.enum(["anthropic", "openai"]),
        url: BaseUrl,
        key: z.string(),
        model: z.string().min(1, "X402M_LLM_MODEL is required with X402M_LLM_URL"),
        timeoutMs: z.coerce.number().int().min(1_000).max(120_000).optional(),
      })
      .nullable(),
    search: z
      .object({
        backend: z.enum(["searxng", "brave", "tavily"]),
        url: BaseUrl,
        key: z.string().optional(),
      })
      .nullable(),
    image: z
      .object({
        url: BaseUrl,
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
});

export type UtilitySettings = z.infer<typeof UtilitySchema>;

/** Hosted search backends' own addresses; SearXNG has none (X402M_SEARCH_URL names the instance). */
const SEARCH_DEFAULT_URLS: Record<string, string> = {
  brave: "https://api.search.brave.com",
  tavily: "https://api.tavily.com",
};

export const utilitySection: Section<typeof UtilitySchema> = {
  schema: UtilitySchema,
  read: ({ env }) => ({
    dnsServers: commaList(env.X402M_DNS_SERVERS),
    fetchAllow: commaList(env.X402M_FETCH_ALLOW),
    pageBudget: {
      cpuMs: env.X402M_PAGE_CPU_MS ?? DEFAULT_PAGE_BUDGET.cpuMs,
      heapMb: env.X402M_PAGE_HEAP_MB ?? DEFAULT_PAGE_BUDGET.heapMb,
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
  }),
  settingOf: ([head, provider, field]) => {
    if (head === "dnsServers") return "X402M_DNS_SERVERS";
    if (head === "fetchAllow") return "X402M_FETCH_ALLOW";
    if (head === "pageBudget") return provider === "heapMb" ? "X402M_PAGE_HEAP_MB" : "X402M_PAGE_CPU_MS";
    if (provider === "language")
      return `X402M_LLM_${field === "timeoutMs" ? "TIMEOUT_MS" : (field ?? "URL").toUpperCase()}`;
    if (provider === "search") return `X402M_SEARCH_${(field ?? "backend").toUpperCase()}`;
    if (provider === "image") return `X402M_IMAGE_${(field ?? "key").toUpperCase()}`;
    return undefined;
  },
};
