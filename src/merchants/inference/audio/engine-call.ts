import { AppError, UpstreamError } from "../../../common/errors.ts";
import type { Errors } from "../../../merchant-kit/index.ts";
import { installCommand } from "./program.ts";

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
 * A route's 503 when the engine a call needs cannot run here (answered before payment): why, and the one
 * command that installs every package the route's `engines` run, their optional ones included, so that an
 * operator installs once for the whole route rather than once per missing piece.
 */
export function engineUnavailable(
  job: "speech" | "transcription",
  engine: { name: string },
  reason: string,
  engines: readonly { packages?: readonly string[] }[],
): AppError {
  const packages = engines.flatMap((e) => e.packages ?? []);
  const install =
    packages.length > 0
      ? `; the operator installs the ${job} programs with: ${installCommand(packages)}`
      : "";
  return new AppError(
    503,
    "engine_unavailable",
    `the ${engine.name} ${job} engine cannot run on this server (${reason})${install}; nothing was charged`,
  );
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
