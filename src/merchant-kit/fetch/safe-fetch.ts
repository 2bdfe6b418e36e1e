import type { ReadableStream } from "node:stream/web";
import { Headers, Response, fetch as undiciFetch } from "undici";
import { abortable } from "../../common/abortable.ts";
import { capBody } from "./capped-body.ts";
import { FetchError, isFetchError } from "./fetch-errors.ts";
import { createPinnedAgent } from "./pinned-agent.ts";
import { type FetchPolicy, type ResolvedPolicy, resolvePolicy } from "./policy.ts";
import { parseTarget, type Target } from "./target.ts";
import { type VettedAddresses, vetTarget } from "./vet.ts";

/** Per-call request and limits; the limits override the policy's for this call only. */
export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string> | Array<[string, string]> | Headers;
  /** Bytes or text only: a redirect (307/308) may have to send it again. */
  body?: string | Uint8Array;
  /** The caller's own cancellation; its reason is rethrown as is. */
  signal?: AbortSignal;
  followRedirects?: boolean;
  maxRedirects?: number;
  maxBytes?: number;
  timeoutMs?: number;
}

/** One redirect answered (and, when following, followed). */
export interface RedirectHop {
  url: string;
  status: number;
  /** The absolute URL the `Location` header pointed to. */
  location: string;
}

export interface SafeFetchResult {
  /**
   * The final response (or the 3xx itself when redirects are not followed). Its body is capped:
   * reading past `maxBytes` fails with `too_large`, past the time limit with `timeout`.
   */
  response: Response;
  /** The URL the response came from, after redirects. */
  url: string;
  redirects: RedirectHop[];
  /** The vetted address the final request connected to (the first of the host's addresses). */
  address: string;
}

export type SafeFetch = (url: string | URL, init?: SafeFetchInit) => Promise<SafeFetchResult>;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** Sent only to the origin the caller named; dropped when a redirect leaves it. */
const ORIGIN_BOUND_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/**
 * A fetch for URLs a caller gave us. It resolves the host itself, refuses private, loopback,
 * link-local, CGNAT, multicast, reserved, metadata and IPv6 special addresses (and IPv4 embedded
 * in IPv6), connects only to the address it checked, follows redirects itself re-checking every
 * hop, and caps redirects, body size and total time. Failures are `FetchError`s with a stable code.
 * See docs/platform.md, "Fetching callers' URLs".
 *
 * @example
 * const fetchUrl = createSafeFetch({ maxBytes: 1_000_000 });
 * const { response, url, redirects } = await fetchUrl("https://example.com/");
 * const html = await response.text(); // throws FetchError("too_large") past 1 MB
 */
export function createSafeFetch(policy: FetchPolicy = {}): SafeFetch {
  const resolved = resolvePolicy(policy);
  return async function safeFetch(url, init = {}) {
    return runSafeFetch(url, init, resolved);
  };
}

/** One-off form of `createSafeFetch(policy)(url, init)`. */
export async function safeFetch(
  url: string | URL,
  policy: FetchPolicy = {},
  init: SafeFetchInit = {},
): Promise<SafeFetchResult> {
  return runSafeFetch(url, init, resolvePolicy(policy));
}

async function runSafeFetch(
  input: string | URL,
  init: SafeFetchInit,
  policy: ResolvedPolicy,
): Promise<SafeFetchResult> {
  const follow = init.followRedirects ?? policy.followRedirects;
  const maxRedirects = init.maxRedirects ?? policy.maxRedirects;
  const maxBytes = init.maxBytes ?? policy.maxBytes;
  const timeoutMs = init.timeoutMs ?? policy.timeoutMs;

  init.signal?.throwIfAborted();
  // Our own controller: the timer and the caller's signal both abort it, and we know which did.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new FetchError("timeout", `no complete answer within ${timeoutMs} ms`));
    // A body nobody reads would otherwise hold its socket: the time limit releases everything.
    cleanup();
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(init.signal?.reason);
  init.signal?.addEventListener("abort", onCallerAbort, { once: true });
  const pinned = createPinnedAgent(policy);
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    clearTimeout(timer);
    init.signal?.removeEventListener("abort", onCallerAbort);
    pinned.agent.destroy().catch(() => {});
  };
  const translate = (error: unknown): unknown => {
    if (timedOut) return new FetchError("timeout", `no complete answer within ${timeoutMs} ms`);
    if (init.signal?.aborted) return init.signal.reason;
    if (isFetchError(error)) return error;
    return new FetchError("fetch_failed", `fetching ${host} failed: ${describe(error)}`, { cause: error });
  };

  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  if (!headers.has("user-agent")) headers.set("user-agent", policy.userAgent);
  const redirects: RedirectHop[] = [];
  // Within one call a host is resolved once: a later hop back to it cannot be rebound either.
  const vetted = new Map<string, VettedAddresses>();
  let host = "the URL";

  try {
    let target: Target = parseTarget(input);
    for (;;) {
      host = target.host;
      let addresses = vetted.get(target.host);
      if (!addresses) {
        addresses = await abortable(vetTarget(target, policy), controller.signal);
        vetted.set(target.host, addresses);
        pinned.pin(target.host, addresses);
      }
      const response = await undiciFetch(target.url, {
        method,
        headers,
        body,
        redirect: "manual",
        signal: controller.signal,
        dispatcher: pinned.agent,
      });
      const location = response.headers.get("location");
      if (follow && REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => {});
        if (redirects.length >= maxRedirects) {
          throw new FetchError("too_many_redirects", `more than ${maxRedirects} redirects`);
        }
        const next = parseTarget(location, target.url);
        redirects.push({ url: target.url.href, status: response.status, location: next.url.href });
        // What browsers do: 303 (and 301/302 after POST) turn into a GET without a body.
        if ((response.status === 303 && method !== "HEAD") || (response.status <= 302 && method === "POST")) {
          method = "GET";
          body = undefined;
          headers.delete("content-type");
          headers.delete("content-length");
        }
        if (next.url.origin !== target.url.origin)
          for (const name of ORIGIN_BOUND_HEADERS) headers.delete(name);
        target = next;
        continue;
      }
      const length = response.headers.get("content-length");
      const capped =
        response.body && !NULL_BODY_STATUSES.has(response.status)
          ? capBodyFor(response.body, maxBytes, length, translate, cleanup)
          : null;
      if (!capped) {
        await response.body?.cancel().catch(() => {});
        cleanup();
      }
      return {
        response: new Response(capped, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        }),
        url: target.url.href,
        redirects,
        address: addresses[0].address,
      };
    }
  } catch (error) {
    cleanup();
    throw translate(error);
  }
}

function capBodyFor(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  length: string | null,
  translate: (error: unknown) => unknown,
  done: () => void,
): ReadableStream<Uint8Array> {
  const declared = length !== null && /^\d+$/.test(length) ? Number(length) : null;
  return capBody(body, { maxBytes, declaredLength: declared, translate, done });
}

/** undici reports "fetch failed" with the reason in `cause`: surface the code people can act on. */
function describe(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
