/**
 * HTTP to X's web API: the GraphQL queries (`/i/api/graphql/<queryId>/<Operation>`) and the media upload
 * (`upload.x.com/i/media/upload.json`), with the headers the web app sends (the public bearer token, the
 * `auth_token` and `ct0` cookies, `ct0` again as `x-csrf-token`), a time limit, a size cap, and X's
 * failures as the provider contract wants them:
 * - the operator's sessions are a pool used round-robin (`accounts.ts`); one answered 401/403 or
 *   rate-limited (429, or a `x-rate-limit-remaining: 0`) is rested until its `x-rate-limit-reset` and the
 *   next one tried; with none usable the call is a 503 with `Retry-After`;
 * - a caller's own session (mentions, uploads) is tried once: 401/403 is the caller's 401 `invalid_session`;
 * - anything else non-2xx, or not JSON, is a 502; no answer in time a 504.
 * Cookies never reach a message: every message is written here, and X's own text is scrubbed of them.
 */

import { randomBytes } from "node:crypto";
import { AppError, UpstreamError } from "../../../../common/errors.ts";
import { fetchWithin } from "../../../../common/fetch-within.ts";
import { timeoutSignal } from "../../../../common/timeout-signal.ts";
import {
  countUpstream,
  DEFAULT_UPSTREAM_MAX_BYTES,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  failure,
  noAnswerOutcome,
  readText,
  statusOutcome,
} from "../../../../merchant-kit/index.ts";
import type { CallerSession } from "../../provider.ts";
import { AccountPool, REFUSED_REST_MS, resetAt, type XAccount } from "./accounts.ts";
import {
  DEFAULT_QUERY_IDS,
  type FeatureSets,
  featureSets,
  featuresOf,
  fieldTogglesOf,
  type Operation,
  WEB_BEARER_TOKEN,
} from "./operations.ts";

export const PROVIDER = "X web API (x-web)";

export interface XWebOptions {
  /** Default `https://x.com`. */
  baseUrl?: string;
  /** Default `https://upload.x.com`. */
  uploadUrl?: string;
  /** Default: the public bearer token X's web app ships. */
  bearerToken?: string;
  /** The operator's own sessions, used round-robin. */
  accounts: XAccount[];
  queryIds?: Partial<Record<Operation, string>>;
  /** Feature switches sent with these values instead of the defaults (operations.ts). */
  features?: Readonly<Record<string, boolean>>;
  /** The time limit of one call, default 25 s. */
  timeoutMs?: number;
}

/** A GraphQL answer: X often answers 200 with `errors` beside a partial or empty `data`. */
export interface GraphQLAnswer {
  data: Record<string, unknown>;
  errors: { message: string; code?: number }[];
}

/** X's error codes in a 200 answer that mean the session, not the query. */
const AUTH_CODES = new Set([32, 89, 215, 239, 326, 353]);
const RATE_LIMIT_CODES = new Set([88]);

function unavailable(wait: number, why: string): UpstreamError {
  return new UpstreamError(`the ${PROVIDER} ${why}; try again in ${wait} s`, "upstream_rate_limited", 503, {
    "retry-after": String(wait),
  });
}

export const invalidSession = () =>
  new AppError(
    401,
    "invalid_session",
    "X did not accept the session's cookies (auth_token, ct0): sign in to x.com again and send the new ones",
  );

type Outcome =
  | { kind: "ok"; status: number; headers: Headers; text: string }
  | { kind: "refused"; headers: Headers }
  | { kind: "limited"; headers: Headers };

export class XWebClient {
  private readonly baseUrl: string;
  private readonly uploadUrl: string;
  private readonly bearer: string;
  private readonly queryIds: Record<Operation, string>;
  private readonly features: FeatureSets;
  private readonly timeoutMs: number;
  private readonly pool: AccountPool;
  /** Every secret a message must never hold: scrubbed from X's own text before it is quoted. */
  private readonly secrets: string[];

  constructor(options: XWebOptions) {
    this.baseUrl = (options.baseUrl ?? "https://x.com").replace(/\/+$/, "");
    this.uploadUrl = (options.uploadUrl ?? "https://upload.x.com").replace(/\/+$/, "");
    this.bearer = options.bearerToken ?? WEB_BEARER_TOKEN;
    this.queryIds = { ...DEFAULT_QUERY_IDS, ...options.queryIds };
    this.features = featureSets(options.features);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    this.pool = new AccountPool(options.accounts);
    this.secrets = options.accounts.flatMap((a) => [a.authToken, a.ct0]).filter((s) => s.length >= 4);
  }

  graphqlUrl(operation: Operation, variables: Record<string, unknown>): string {
    const params = new URLSearchParams({
      variables: JSON.stringify(variables),
      features: JSON.stringify(featuresOf(operation, this.features)),
    });
    const toggles = fieldTogglesOf(operation);
    if (toggles) params.set("fieldToggles", JSON.stringify(toggles));
    return `${this.baseUrl}/i/api/graphql/${this.queryIds[operation]}/${operation}?${params}`;
  }

  /**
   * One GraphQL query, as the operator's sessions or, given `session`, as the caller. Answers `data` and
   * `errors`; the caller of this decides whether an empty `data` is "not found" or nonsense.
   */
  async graphql(
    operation: Operation,
    variables: Record<string, unknown>,
    signal: AbortSignal,
    session?: CallerSession,
  ): Promise<GraphQLAnswer> {
    const url = this.graphqlUrl(operation, variables);
    const text = await this.send(url, { method: "GET" }, signal, session);
    const extra = session ? [session.authToken, session.ct0 ?? ""] : [];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamError(
        `the ${PROVIDER} answered ${operation} with something that is not JSON`,
        "upstream_invalid",
      );
    }
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new UpstreamError(
        `the ${PROVIDER} answered ${operation} with an unexpected shape`,
        "upstream_invalid",
      );
    const { data, errors } = body as { data?: unknown; errors?: unknown };
    const list = Array.isArray(errors)
      ? errors.map((e) => ({
          message: this.scrub(String((e as { message?: unknown })?.message ?? ""), extra),
          code:
            typeof (e as { code?: unknown })?.code === "number" ? (e as { code: number }).code : undefined,
        }))
      : [];
    return {
      data: typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {},
      errors: list,
    };
  }

  /** A POST to the upload host as the caller; the answer's JSON, or undefined for an empty answer. */
  async upload(
    query: Record<string, string>,
    body: FormData | undefined,
    signal: AbortSignal,
    session: CallerSession,
  ): Promise<unknown> {
    const url = `${this.uploadUrl}/i/media/upload.json?${new URLSearchParams(query)}`;
    const text = await this.send(url, { method: "POST", body }, signal, session);
    if (text.trim() === "") return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new UpstreamError(
        `the ${PROVIDER} answered the media upload with something that is not JSON`,
        "upstream_invalid",
      );
    }
  }

  /** X's own words for a failure, without any cookie and not too long. */
  scrub(message: string, extra: readonly string[] = []): string {
    let out = message;
    for (const secret of [...this.secrets, ...extra.filter((s) => s.length >= 4)])
      out = out.replaceAll(secret, "[redacted]");
    return out.slice(0, 200);
  }

  private headers(account: XAccount): Record<string, string> {
    return {
      authorization: `Bearer ${this.bearer}`,
      cookie: `auth_token=${account.authToken}; ct0=${account.ct0}`,
      "x-csrf-token": account.ct0,
      "x-twitter-auth-type": "OAuth2Session",
      "x-twitter-active-user": "yes",
      "x-twitter-client-language": "en",
      accept: "*/*",
      "user-agent":
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    };
  }

  /** The body of a 2xx answer, after the session handling described at the top. */
  private async send(
    url: string,
    init: { method: "GET" | "POST"; body?: FormData | undefined },
    callerSignal: AbortSignal,
    session: CallerSession | undefined,
  ): Promise<string> {
    const timeout = timeoutSignal(this.timeoutMs);
    const signal = AbortSignal.any([callerSignal, timeout]);
    const call = { provider: PROVIDER, url: "", signal: callerSignal };
    const attempt = async (account: XAccount): Promise<Outcome> => {
      const asked = { answered: false };
      try {
        return await this.once(url, init, account, signal, asked);
      } catch (error) {
        if (!asked.answered) countUpstream(PROVIDER, noAnswerOutcome(callerSignal, timeout));
        throw failure(call, error, timeout, this.timeoutMs);
      }
    };

    if (session) {
      // The caller's cookies: used for this one request only. Without ct0, a fresh one (X checks that the
      // cookie and the header agree).
      const account = { authToken: session.authToken, ct0: session.ct0 ?? randomBytes(16).toString("hex") };
      const outcome = await attempt(account);
      if (outcome.kind === "refused") throw invalidSession();
      if (outcome.kind === "limited") {
        const wait = Math.min(3_600, Math.max(1, Math.ceil((resetAt(outcome.headers) - Date.now()) / 1000)));
        throw unavailable(wait, "is rate limiting this session");
      }
      return this.checked(outcome, [account.authToken, account.ct0]);
    }

    if (this.pool.accounts.length === 0)
      throw unavailable(3_600, "has no session configured (x-web accounts)");
    const tried = new Set<number>();
    for (;;) {
      const index = this.pool.take(tried);
      if (index === undefined) throw unavailable(this.pool.waitSeconds(), "has no usable session right now");
      if (index === "busy") {
        await this.pool.freed(signal).catch((error: unknown) => {
          throw failure(call, error, timeout, this.timeoutMs);
        });
        continue;
      }
      tried.add(index);
      let outcome: Outcome;
      try {
        outcome = await attempt(this.pool.accounts[index] as XAccount);
      } finally {
        this.pool.release(index);
      }
      if (outcome.kind === "refused") {
        this.pool.rest(index, Date.now() + REFUSED_REST_MS);
        continue;
      }
      if (outcome.kind === "limited") {
        this.pool.rest(index, resetAt(outcome.headers));
        continue;
      }
      if (outcome.headers.get("x-rate-limit-remaining")?.trim() === "0")
        this.pool.rest(index, resetAt(outcome.headers));
      try {
        return this.checked(outcome);
      } catch (error) {
        if (error instanceof SessionTrouble) {
          this.pool.rest(index, error.limited ? resetAt(outcome.headers) : Date.now() + REFUSED_REST_MS);
          continue;
        }
        throw error;
      }
    }
  }

  /** One request; its status sorted into what the session handling needs. */
  private async once(
    url: string,
    init: { method: "GET" | "POST"; body?: FormData | undefined },
    account: XAccount,
    signal: AbortSignal,
    asked: { answered: boolean },
  ): Promise<Outcome> {
    const response = await fetchWithin(url, {
      method: init.method,
      headers: this.headers(account),
      body: init.body,
      signal,
      redirect: "manual",
    });
    asked.answered = true;
    countUpstream(PROVIDER, statusOutcome(response.status));
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      return { kind: "refused", headers: response.headers };
    }
    if (response.status === 429) {
      await response.body?.cancel();
      return { kind: "limited", headers: response.headers };
    }
    const text = await readText(response, DEFAULT_UPSTREAM_MAX_BYTES, { provider: PROVIDER });
    return { kind: "ok", status: response.status, headers: response.headers, text };
  }

  /** A 2xx body, else a 502 naming the status and X's own message. */
  private checked(outcome: Extract<Outcome, { kind: "ok" }>, callerSecrets?: readonly string[]): string {
    const caller = callerSecrets !== undefined;
    const { status, text } = outcome;
    const xErrors = errorsOf(text);
    if (status >= 200 && status < 300) {
      // X says a session problem in a 200 too, with no data.
      const onlyErrors = xErrors.length > 0 && !/"data"\s*:\s*\{\s*"/.test(text);
      if (onlyErrors && xErrors.some((e) => e.code !== undefined && RATE_LIMIT_CODES.has(e.code))) {
        if (caller) throw unavailable(60, "is rate limiting this session");
        throw new SessionTrouble(true);
      }
      if (onlyErrors && xErrors.some((e) => e.code !== undefined && AUTH_CODES.has(e.code))) {
        if (caller) throw invalidSession();
        throw new SessionTrouble(false);
      }
      return text;
    }
    const said = xErrors[0]?.message ? `: ${this.scrub(xErrors[0].message, callerSecrets)}` : "";
    const hint = status === 404 || status === 400 ? " (its query ids or features may have changed)" : "";
    throw new UpstreamError(`the ${PROVIDER} answered HTTP ${status}${said}${hint}`, "upstream_failed");
  }
}

/** A session problem X reported inside a 200 answer: the pool rests that account and tries the next. */
class SessionTrouble extends Error {
  constructor(readonly limited: boolean) {
    super("session trouble");
  }
}

function errorsOf(text: string): { message: string; code?: number }[] {
  try {
    const body = JSON.parse(text) as { errors?: { message?: unknown; code?: unknown }[] };
    if (!Array.isArray(body?.errors)) return [];
    return body.errors.map((e) => ({
      message: typeof e?.message === "string" ? e.message : "",
      ...(typeof e?.code === "number" && { code: e.code }),
    }));
  } catch {
    return [];
  }
}
