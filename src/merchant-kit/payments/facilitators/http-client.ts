/**
 * A facilitator over HTTP, as `@x402/core`'s `HTTPFacilitatorClient` speaks to it, made with undici's
 * `request` on a keep-alive `Agent` instead of Node's `fetch`.
 *
 * Why not the SDK's client: per `/verify` and `/settle` it builds a WHATWG `Request` and `Response` with their
 * `ReadableStream`s, and walks the payload and the requirements through a JSON round trip (`toJsonSafe`) before
 * stringifying them again: 9.2% of `serve`'s CPU per paid exact request in the profile of docs/benchmarks-log.md
 * (2026-11-29, 11:48-12:40 UTC), the largest share left that is not the ledger's.
 *
 * What stays the SDK's (x402 2.27.0; test/merchant-kit/payments/facilitators/http-client.test.ts runs both clients
 * against one server and compares): the paths (`POST {url}/verify`, `POST {url}/settle`, `GET {url}/supported`, the
 * URL's trailing slashes dropped), the body byte for byte, the headers in their order (`Content-Type`, then the
 * path's auth headers from `createAuthHeaders`, which may not be a flat object, then fetch's own `accept`,
 * `accept-language`, `sec-fetch-mode`, `user-agent`, `accept-encoding` where not given), redirects followed
 * (undici's redirect handler: 301/302/303 turn a POST into a GET, `Authorization` dropped across origins), gzip,
 * deflate and br answers decoded; what is thrown (`VerifyError` / `SettleError` for a non-2xx answer in a
 * verify / settle response's shape, `Error("Facilitator verify failed (500): ...")` for another,
 * `FacilitatorResponseError` for a 2xx that is not JSON or not in the SDK's schema, `FacilitatorTimeoutError`
 * when a call, its answer's body included, outlasts its time-out, fetch's `TypeError("fetch failed")` with the
 * network error as its cause); `/supported` asked three times at most on 429, waiting as `Retry-After` says;
 * the answers as the SDK's schemas leave them (unknown fields dropped, nulls read as absent), with
 * `extensionResponses` from the `EXTENSION-RESPONSES` header.
 *
 * What differs: the SDK prints that header's outcomes with `console.log`, which the commands drop anyway
 * (src/cli/sdk-logs.ts); and each call's time-out is a timer cleared when the call ends, where the SDK's
 * `AbortSignal.timeout` stays armed for its whole length (90 s a settlement) after the answer.
 */
import zlib from "node:zlib";
import type { FacilitatorClient, FacilitatorConfig } from "@x402/core/server";
import {
  FacilitatorResponseError,
  FacilitatorTimeoutError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  type SupportedResponse,
  VerifyError,
  type VerifyResponse,
} from "@x402/core/types";
import { safeBase64Decode } from "@x402/core/utils";
import { Agent, type Dispatcher, interceptors } from "undici";

/** The SDK's: its default facilitator, time-out and largest time-out, and `/supported`'s retries on 429. */
const DEFAULT_FACILITATOR_URL = "https://x402.org/facilitator";
const DEFAULT_TIMEOUT_MS = 90_000;
const MAX_TIMEOUT_MS = 2_147_483_647;
const SUPPORTED_ATTEMPTS = 3;
const SUPPORTED_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** fetch's limit: past it, the 3xx is the answer (fetch would fail; either way, not a facilitator's answer). */
const MAX_REDIRECTIONS = 20;

type Operation = "verify" | "settle" | "supported";

/**
 * Headers fetch adds to every request unless the caller gave them (Node 20's: the wire is compared in the
 * test). `accept-encoding` is fetch's too: the answer's coding is decoded below as fetch decodes it.
 */
const FETCH_HEADERS: readonly (readonly [string, string])[] = [
  ["accept", "*/*"],
  ["accept-language", "*"],
  ["sec-fetch-mode", "cors"],
  ["user-agent", "node"],
  ["accept-encoding", "gzip, deflate"],
];

export interface FacilitatorHttpConfig extends FacilitatorConfig {
  /** A settlement's time-out, where it differs from `timeoutMs` (it may wait for its block). */
  settleTimeoutMs?: number;
  /** Where requests go out; a keep-alive `Agent` of the client's own that follows redirects by default. */
  dispatcher?: Dispatcher;
}

/** One call's answer: its status, headers and body as text. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export class FacilitatorHttpClient implements FacilitatorClient {
  readonly url: string;
  private readonly timeoutMs: number;
  private readonly settleTimeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly createAuthHeaders: FacilitatorConfig["createAuthHeaders"];
  /** Each path's URL, parsed once: what the SDK makes of `${url}/verify` on every call. */
  private readonly targets: Record<Operation, { origin: string; path: string }>;

  constructor(config: FacilitatorHttpConfig = {}) {
    this.url = (config.url || DEFAULT_FACILITATOR_URL).replace(/\/+$/, "");
    this.timeoutMs = checkedTimeout(config.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.settleTimeoutMs = checkedTimeout(config.settleTimeoutMs ?? this.timeoutMs);
    this.createAuthHeaders = config.createAuthHeaders;
    this.dispatcher =
      config.dispatcher ?? new Agent().compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS }));
    const target = (operation: Operation) => {
      const url = new URL(`${this.url}/${operation}`);
      return { origin: url.origin, path: `${url.pathname}${url.search}` };
    };
    this.targets = { verify: target("verify"), settle: target("settle"), supported: target("supported") };
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const headers = await this.headersFor("verify");
    const answer = await this.call("verify", "POST", headers, this.timeoutMs, () =>
      paymentBody(payload, requirements),
    );
    if (answer.status < 200 || answer.status > 299) {
      const data = failureData("verify", answer);
      if (typeof data === "object" && data !== null && "isValid" in data)
        throw new VerifyError(answer.status, data as VerifyResponse);
      throw new Error(`Facilitator verify failed (${answer.status}): ${excerpt(JSON.stringify(data))}`);
    }
    return withExtensionResponses(parsed("verify", answer.text, verifyResponse), answer);
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const headers = await this.headersFor("settle");
    const answer = await this.call("settle", "POST", headers, this.settleTimeoutMs, () =>
      paymentBody(payload, requirements),
    );
    if (answer.status < 200 || answer.status > 299) {
      const data = failureData("settle", answer);
      if (typeof data === "object" && data !== null && "success" in data)
        throw new SettleError(answer.status, data as SettleResponse);
      throw new Error(`Facilitator settle failed (${answer.status}): ${excerpt(JSON.stringify(data))}`);
    }
    return withExtensionResponses(parsed("settle", answer.text, settleResponse), answer);
  }

  async getSupported(): Promise<SupportedResponse> {
    const headers = await this.headersFor("supported");
    for (let attempt = 0; ; attempt++) {
      const answer = await this.call("supported", "GET", headers, this.timeoutMs);
      if (answer.status >= 200 && answer.status <= 299)
        return parsed("supported", answer.text, supportedResponse);
      const error = new Error(`Facilitator getSupported failed (${answer.status}): ${excerpt(answer.text)}`);
      if (answer.status !== 429 || attempt === SUPPORTED_ATTEMPTS - 1) throw error;
      await new Promise((resolve) => setTimeout(resolve, retryDelay(header(answer, "retry-after"), attempt)));
    }
  }

  /** `Content-Type`, the path's auth headers, then fetch's own where the caller gave none of that name. */
  private async headersFor(operation: Operation): Promise<Record<string, string>> {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (this.createAuthHeaders) {
      const all = (await this.createAuthHeaders()) as Record<string, unknown>;
      const keyed = ["verify", "settle", "supported", "bazaar"].some((key) => isObject(all[key]));
      if (!keyed && Object.values(all).some((value) => !isObject(value)))
        throw new Error(
          'createAuthHeaders must return an object keyed by facilitator path, e.g. { verify: { Authorization: "..." }, settle: { ... }, supported: { ... } }, but received a flat headers object. See https://github.com/x402-foundation/x402/issues/2762',
        );
      const own = all[operation];
      if (isObject(own)) Object.assign(headers, own);
    }
    const given = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    for (const [name, value] of FETCH_HEADERS) if (!given.has(name)) headers[name] = value;
    return headers;
  }

  /**
   * One request under its deadline, which covers the answer's body too. The body is made inside the deadline,
   * as the SDK makes it: a payload that cannot be serialized throws as it would there, as itself.
   */
  private async call(
    operation: Operation,
    method: "GET" | "POST",
    headers: Record<string, string>,
    timeoutMs: number,
    makeBody?: () => string,
  ): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
      timeoutMs,
    );
    timer.unref();
    try {
      const { origin, path } = this.targets[operation];
      const body = makeBody?.();
      let response: Dispatcher.ResponseData;
      try {
        response = await this.dispatcher.request({
          origin,
          path,
          method,
          headers,
          body,
          signal: controller.signal,
        });
      } catch (error) {
        throw controller.signal.aborted ? error : new TypeError("fetch failed", { cause: error });
      }
      let text: string;
      try {
        text = await decodedText(response);
      } catch (error) {
        if (controller.signal.aborted) throw error;
        // A refusal of /supported whose body broke off is told by its status line, as the SDK tells it.
        if (operation === "supported" && (response.statusCode < 200 || response.statusCode > 299))
          text = response.statusText;
        // fetch's word for a body that broke off after its headers.
        else throw new TypeError("terminated", { cause: error });
      }
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      if (controller.signal.aborted && isAbortOrTimeout(error))
        throw new FacilitatorTimeoutError(operation, timeoutMs);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function checkedTimeout(timeoutMs: number): number {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS)
    throw new RangeError(
      `timeoutMs must be a positive integer number of milliseconds no greater than ${MAX_TIMEOUT_MS}, got ${timeoutMs}`,
    );
  return timeoutMs;
}

/**
 * The SDK's body, byte for byte: `{x402Version, paymentPayload, paymentRequirements}`. The SDK passes both
 * through `JSON.parse(JSON.stringify(x, bigintsAsStrings))` first; for a value without a bigint that round trip
 * changes nothing `JSON.stringify` writes (it is JSON's own output read back: the same keys in the same order,
 * numbers and strings written alike), and a bigint is the one value `JSON.stringify` refuses where the replacer
 * does not. A buyer's payload is a decoded header (`JSON.parse`), the requirements the SDK's strings, so the
 * plain stringify is the path taken; a hook that enriches a settlement with a bigint takes the SDK's way.
 */
function paymentBody(payload: PaymentPayload, requirements: PaymentRequirements): string {
  const body = {
    x402Version: payload.x402Version,
    paymentPayload: payload,
    paymentRequirements: requirements,
  };
  try {
    return JSON.stringify(body);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(body, (_, value) => (typeof value === "bigint" ? value.toString() : value));
  }
}

/** The answer's body as text, its content codings undone in reverse order, as fetch undoes them. */
async function decodedText(response: Dispatcher.ResponseData): Promise<string> {
  const coding = response.headers["content-encoding"];
  const codings = (Array.isArray(coding) ? coding.join(",") : (coding ?? ""))
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return response.body.text();
  let bytes = Buffer.from(await response.body.arrayBuffer());
  for (const c of codings.reverse()) {
    if (c === "gzip" || c === "x-gzip")
      bytes = zlib.gunzipSync(bytes, { flush: zlib.constants.Z_SYNC_FLUSH });
    else if (c === "deflate")
      // A zlib stream starts with a CM of 8; a raw deflate stream does not (servers send both as "deflate").
      bytes = (bytes[0] ?? 0) % 16 === 8 ? zlib.inflateSync(bytes) : zlib.inflateRawSync(bytes);
    else if (c === "br") bytes = zlib.brotliDecompressSync(bytes);
    // fetch passes a coding it does not know through as it came: so does this.
    else break;
  }
  return bytes.toString("utf8");
}

function header(answer: Answer, name: string): string | null {
  const value = answer.headers[name];
  return (Array.isArray(value) ? value.join(", ") : value) ?? null;
}

/** A non-2xx answer's body as JSON, or the SDK's error when it is not JSON. */
function failureData(operation: "verify" | "settle", answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new Error(`Facilitator ${operation} failed (${answer.status}): ${excerpt(answer.text)}`);
  }
}

/** A 2xx answer read as the SDK reads it: JSON, then its schema (`undefined`: not in its shape). */
function parsed<T>(operation: Operation, text: string, shape: (data: unknown) => T | undefined): T {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid JSON: ${excerpt(text)}`);
  }
  const value = shape(data);
  if (value === undefined)
    throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid data: ${excerpt(text)}`);
  return value;
}

/** The `EXTENSION-RESPONSES` header's object, decoded, on the answer; a header that is not one is ignored. */
function withExtensionResponses<T extends VerifyResponse | SettleResponse>(result: T, answer: Answer): T {
  const value = header(answer, "extension-responses");
  if (!value) return result;
  try {
    const decoded = JSON.parse(safeBase64Decode(value));
    if (decoded && typeof decoded === "object" && !Array.isArray(decoded))
      (result as { extensionResponses?: unknown }).extensionResponses = decoded;
  } catch {
    // The SDK drops a header it cannot read; so does this.
  }
  return result;
}

function excerpt(text: string, limit = 200): string {
  const compact = text.trim().replace(/\s+/g, " ");
  if (!compact) return "<empty response>";
  return compact.length <= limit ? compact : `${compact.slice(0, limit - 3)}...`;
}

/** The SDK's wait before asking `/supported` again after a 429: `Retry-After`, else 1 s, 2 s, capped at 30 s. */
function retryDelay(retryAfter: string | null, attempt: number): number {
  let delay: number | null = null;
  if (retryAfter !== null) {
    const trimmed = retryAfter.trim();
    if (/^\d+$/.test(trimmed)) delay = Number(trimmed) * 1000;
    else {
      const at = Date.parse(retryAfter);
      if (!Number.isNaN(at)) delay = at - Date.now();
    }
  }
  if (delay === null || delay <= 0) delay = SUPPORTED_RETRY_MS * 2 ** attempt;
  return Math.min(delay, MAX_RETRY_MS);
}

function isAbortOrTimeout(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === "object"; depth++) {
    const name = (current as { name?: unknown }).name;
    if (name === "TimeoutError" || name === "AbortError") return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

// The SDK's answer schemas (zod there), by hand: a field the schema lists is kept when present (a null read
// as undefined), one it does not list is dropped, and a wrong type anywhere refuses the whole answer.

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Copies `keys` of `from` that are strings, or null / absent; false when one is something else. */
function optionalStrings(from: Fields, to: Fields, keys: readonly string[]): boolean {
  for (const key of keys) {
    if (!(key in from)) continue;
    const value = from[key];
    if (value !== null && value !== undefined && typeof value !== "string") return false;
    to[key] = value ?? undefined;
  }
  return true;
}

/** Copies `keys` of `from` that are records (`z.record(z.string(), z.unknown())`), or null / absent. */
function optionalRecords(from: Fields, to: Fields, keys: readonly string[]): boolean {
  for (const key of keys) {
    if (!(key in from)) continue;
    const value = from[key];
    if (value !== null && value !== undefined && !isObject(value)) return false;
    to[key] = value ?? undefined;
  }
  return true;
}

function verifyResponse(data: unknown): VerifyResponse | undefined {
  if (!isObject(data) || typeof data.isValid !== "boolean") return undefined;
  const out: Fields = { isValid: data.isValid };
  if (!optionalStrings(data, out, ["invalidReason", "invalidMessage", "payer"])) return undefined;
  if (!optionalRecords(data, out, ["extensions", "extra"])) return undefined;
  return out as unknown as VerifyResponse;
}

function settleResponse(data: unknown): SettleResponse | undefined {
  if (!isObject(data) || typeof data.success !== "boolean") return undefined;
  if (typeof data.transaction !== "string" || typeof data.network !== "string") return undefined;
  const out: Fields = { success: data.success };
  if (!optionalStrings(data, out, ["errorReason", "errorMessage", "payer"])) return undefined;
  out.transaction = data.transaction;
  out.network = data.network;
  if (!optionalStrings(data, out, ["amount"])) return undefined;
  if (!optionalRecords(data, out, ["extensions", "extra"])) return undefined;
  return out as unknown as SettleResponse;
}

function supportedResponse(data: unknown): SupportedResponse | undefined {
  if (!isObject(data) || !Array.isArray(data.kinds)) return undefined;
  const kinds: Fields[] = [];
  for (const kind of data.kinds) {
    if (!isObject(kind) || typeof kind.x402Version !== "number") return undefined;
    if (typeof kind.scheme !== "string" || typeof kind.network !== "string") return undefined;
    const out: Fields = { x402Version: kind.x402Version, scheme: kind.scheme, network: kind.network };
    if (!optionalRecords(kind, out, ["extra"])) return undefined;
    kinds.push(out);
  }
  // zod's `.default()` stands in for undefined only: a null is refused.
  const extensions = data.extensions === undefined ? [] : data.extensions;
  if (!Array.isArray(extensions) || !extensions.every((e) => typeof e === "string")) return undefined;
  const signers = data.signers === undefined ? {} : data.signers;
  if (!isObject(signers)) return undefined;
  for (const list of Object.values(signers))
    if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) return undefined;
  return { kinds, extensions, signers } as SupportedResponse;
}
