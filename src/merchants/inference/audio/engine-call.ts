import { AppError, UpstreamError } from "../../../common/errors.ts";
import type { Errors } from "../../../merchant-kit/catalogue.ts";

/**
 * Runs an engine's work for a route: an engine that fails in a way it did not describe (a bug, a broken
 * program's output it could not read) is a 502 `engine_failed` that is never charged, not a 500; its own
 * refusals and the caller's abort pass as they are.
 */
export async function engineCall<T>(
  engine: { name: string },
  signal: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError || (signal.aborted && error === signal.reason)) throw error;
    throw new UpstreamError(`the ${engine.name} engine failed: ${(error as Error).message}`, "engine_failed");
  }
}

/**
 * How an audio route's engine can fail, for its `errors`: a program of this machine, or the upstream
 * (`upstream`) whose rate limit is a 503 too.
 */
export function audioEngineErrors(what: "speech" | "transcription", upstream: boolean): Errors {
  return {
    502: `The ${what} engine failed or wrote nothing usable (engine_failed, engine_too_large${upstream ? ", upstream_failed, upstream_invalid" : ""}).`,
    503: `The ${what} engine cannot run on this server (engine_unavailable: the message names the command that installs it), checked before any payment is asked for.${upstream ? " Or the upstream is rate limiting this server (upstream_rate_limited), with Retry-After." : ""}`,
    504: `The ${what} engine gave no result within its time limit (engine_timeout${upstream ? ", upstream_timeout" : ""}).`,
  };
}
