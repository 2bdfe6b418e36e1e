import { AppError, UpstreamError } from "../../../common/errors.ts";

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
