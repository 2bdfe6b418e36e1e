/**
 * Exponential backoff with "full jitter" (a uniform wait between 0 and the capped exponential), which
 * spreads the retries of many clients hit by the same outage instead of synchronising them.
 * See https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/.
 */
export interface BackoffOptions {
  /** Cap of the first wait, ms. Default 200. */
  baseMs?: number;
  /** Largest wait, ms. Default 10,000. */
  maxMs?: number;
  /** How many attempts in all (the first try included) before giving up. Default 8. */
  attempts?: number;
}

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 200, maxMs: 10_000, attempts: 8 };

/** The wait before retry number `retry` (1 for the first retry), at least `floorMs` (a Retry-After). */
export function backoffDelay(
  retry: number,
  options: Required<BackoffOptions>,
  random: () => number = Math.random,
  floorMs = 0,
): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** (retry - 1));
  return Math.max(floorMs, Math.round(random() * cap));
}
