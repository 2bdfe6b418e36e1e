import { createSafeFetch, isFetchError } from "../../../merchant-kit/index.ts";
import { describeFailure, isRefusal, type ProbeFailure } from "./failure.ts";
import type { ResolvedProbeOptions } from "./options.ts";

export type PingMethod = "HEAD" | "GET";

export interface PingResult {
  url: string;
  method: PingMethod;
  up: boolean;
  status: number | null;
  status_text: string | null;
  latency_ms: number;
  ip: string | null;
  redirect: { status: number; location: string | null } | null;
  error: ProbeFailure | null;
  checked_at: string;
}

/** A status below this counts as up: the server answered, even if it said 404 or 401 (docs/platform.md, "The utility API's endpoints"). */
export const UP_BELOW = 500;

/**
 * One request to `url`, never following a redirect (a 3xx is reported with its `Location`). Latency is
 * measured from the start of the DNS lookup to the response headers: what a visitor waits before the
 * first byte. A GET's body is not downloaded. A failure to connect or to answer in time is an answer
 * (`up: false` with the reason); only a URL refused by the SSRF rules throws (400, not charged).
 */
export async function ping(
  url: string,
  method: PingMethod,
  options: ResolvedProbeOptions,
  signal?: AbortSignal,
): Promise<PingResult> {
  const fetchUrl = createSafeFetch({ ...options.policy, followRedirects: false });
  const checkedAt = new Date().toISOString();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const { response, address } = await fetchUrl(url, { method, signal });
    const latency = elapsed();
    await response.body?.cancel().catch(() => {});
    const isRedirect = response.status >= 300 && response.status < 400;
    const location = response.headers.get("location");
    return {
      url,
      method,
      up: response.status < UP_BELOW,
      status: response.status,
      status_text: response.statusText || null,
      latency_ms: latency,
      ip: address,
      redirect: isRedirect ? { status: response.status, location: absolute(location, url) } : null,
      error: null,
      checked_at: checkedAt,
    };
  } catch (error) {
    if (isRefusal(error)) throw error;
    // The caller went away: nobody is waiting for an answer, let the platform end the request.
    if (!isFetchError(error) && signal?.aborted) throw error;
    return {
      url,
      method,
      up: false,
      status: null,
      status_text: null,
      latency_ms: elapsed(),
      ip: null,
      redirect: null,
      error: describeFailure(error),
      checked_at: checkedAt,
    };
  }
}

/** `Location` resolved against the URL asked, as a browser would follow it; kept as sent when unparsable. */
function absolute(location: string | null, base: string): string | null {
  if (location === null) return null;
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}
