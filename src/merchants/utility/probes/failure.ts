import { isFetchError } from "../../../merchant-kit/index.ts";

/** Why a probe got no HTTP answer: a stable `code` for machines and a `message` for people. */
export interface ProbeFailure {
  code: string;
  message: string;
}

/**
 * Refusals of the URL itself (`bad_url`, `ssrf_blocked`) are the caller's error and stay exceptions (400,
 * not charged). Everything else that stops a probe (no DNS answer, refused or reset connection, TLS or
 * protocol failure, the time limit) is what a probe exists to find out: it becomes part of the answer.
 */
export function isRefusal(error: unknown): boolean {
  return isFetchError(error, "bad_url") || isFetchError(error, "ssrf_blocked");
}

/** A failure as the answer shows it: the platform's fetch code, or the system's (`ECONNREFUSED`...). */
export function describeFailure(error: unknown): ProbeFailure {
  if (isFetchError(error)) return { code: error.code, message: error.message };
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return { code: code ?? "fetch_failed", message: cause.message };
  }
  return { code: "fetch_failed", message: String(cause) };
}
