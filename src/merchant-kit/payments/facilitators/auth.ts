/**
 * What a merchant sends a facilitator besides the payment: static headers from configuration (for
 * example `Authorization: Bearer <key>` for the project's own facilitator), and for Coinbase's hosted
 * facilitator a JWT per request signed with the operator's CDP API key by Coinbase's own package,
 * `@coinbase/x402`. Secrets are never part of an error message.
 */
import { createPrivateKey } from "node:crypto";

/** Coinbase's hosted facilitator (x402 v2); `@coinbase/x402`'s `createFacilitatorConfig` names it. */
export const COINBASE_FACILITATOR_URL = "https://api.cdp.coinbase.com/platform/v2/x402";

/** A CDP API key: its id and its secret (`CDP_API_KEY_ID`, `CDP_API_KEY_SECRET`). */
export interface CdpKey {
  apiKeyId: string;
  apiKeySecret: string;
}

/** Headers per facilitator path, as `HTTPFacilitatorClient`'s `createAuthHeaders` returns them. */
export type PathHeaders = Record<"verify" | "settle" | "supported", Record<string, string>>;

/** Headers the HTTP client sets itself, or that would break the request if set from configuration. */
const RESERVED = new Set(["content-type", "content-length", "host", "transfer-encoding", "connection"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * `Name: value` lines, one header each, separated by newlines or by a literal `\n` (what fits on one line
 * of an env file): `Authorization: Bearer abc\nX-Tenant: shop-1`. Empty lines are skipped. Throws on a
 * malformed line, a header set twice or one the client sets itself, naming the header, never its value.
 */
export function parseHeaderLines(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [index, raw] of text.split(/\r?\n|\\n/).entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon).trim();
    const value = colon < 0 ? "" : line.slice(colon + 1).trim();
    if (!TOKEN.test(name))
      throw new Error(`line ${index + 1} is not "Name: value" (headers are separated by \\n)`);
    if (value === "" || CONTROL.test(value)) throw new Error(`header ${name} has an empty or invalid value`);
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) throw new Error(`header ${name} is set by the client itself`);
    if (seen.has(lower)) throw new Error(`header ${name} is given twice`);
    seen.add(lower);
    headers[name] = value;
  }
  return headers;
}

/**
 * A CDP key secret in the form `@coinbase/x402` signs with: an Ed25519 key (base64 of 64 bytes) as it is,
 * an EC key (PEM, SEC1 as Coinbase's portal gives it, or PKCS#8; a literal `\n` for each line break, as
 * env files write it) as PKCS#8 PEM, the only EC form its signer imports. Throws without quoting it.
 */
export function cdpKeySecret(secret: string): string {
  const text = secret.trim().replace(/\\n/g, "\n");
  if (text.includes("-----BEGIN")) {
    try {
      const key = createPrivateKey(text);
      if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1")
        throw new Error("not P-256");
      return key.export({ format: "pem", type: "pkcs8" }).toString();
    } catch {
      throw new Error("a PEM key that is not an EC P-256 private key (CDP's ECDSA keys are)");
    }
  }
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(text) && Buffer.from(text, "base64").length === 64) return text;
  throw new Error("neither an Ed25519 key (base64, 64 bytes) nor an EC private key in PEM");
}

/**
 * The headers of each call to the facilitator at `url`: the static `headers`, and with `cdp` a fresh
 * `Authorization: Bearer <JWT>` per call (with Coinbase's `Correlation-Context`), whose `uris` claim names
 * the very request (`POST api.cdp.coinbase.com/platform/v2/x402/settle`). For Coinbase's own URL the
 * headers are `createFacilitatorConfig`'s; for another URL (a proxy in front of it, a test server) the
 * same package's `createAuthHeader` signs for that URL's host and path. Undefined: nothing to send.
 */
export function facilitatorAuthHeaders(
  url: string,
  headers: Record<string, string>,
  cdp: CdpKey | null,
): (() => Promise<PathHeaders>) | undefined {
  const fixed: PathHeaders = { verify: { ...headers }, settle: { ...headers }, supported: { ...headers } };
  if (!cdp) return Object.keys(headers).length > 0 ? async () => fixed : undefined;
  const { apiKeyId, apiKeySecret } = cdp;
  const target = new URL(url);
  const base = target.pathname.replace(/\/+$/, "");
  // Loaded on first use: only a merchant that pays through a CDP-authenticated facilitator needs it.
  return async () => {
    const coinbase = await import("@coinbase/x402");
    let signed: Partial<PathHeaders>;
    if (url.replace(/\/+$/, "") === COINBASE_FACILITATOR_URL) {
      const config = coinbase.createFacilitatorConfig(apiKeyId, apiKeySecret);
      signed = (await config.createAuthHeaders?.()) ?? {};
    } else {
      const sign = (method: string, path: string) =>
        coinbase.createAuthHeader(apiKeyId, apiKeySecret, method, target.host, `${base}/${path}`);
      const correlation = coinbase.createCorrelationHeader();
      const [verify, settle, supported] = await Promise.all([
        sign("POST", "verify"),
        sign("POST", "settle"),
        sign("GET", "supported"),
      ]);
      signed = {
        verify: { Authorization: verify, "Correlation-Context": correlation },
        settle: { Authorization: settle, "Correlation-Context": correlation },
        supported: { Authorization: supported, "Correlation-Context": correlation },
      };
    }
    return {
      verify: merged(fixed.verify, signed.verify),
      settle: merged(fixed.settle, signed.settle),
      supported: merged(fixed.supported, signed.supported),
    };
  };
}

/** `base` with `over` on top; a header of `over` replaces `base`'s whatever its case. */
function merged(base: Record<string, string>, over: Record<string, string> = {}): Record<string, string> {
  const replaced = new Set(Object.keys(over).map((name) => name.toLowerCase()));
  const kept = Object.entries(base).filter(([name]) => !replaced.has(name.toLowerCase()));
  return { ...Object.fromEntries(kept), ...over };
}
