/**
 * A devnet saved while it runs: on a timer and before it stops (./saved-chain.ts).
 */
import { log } from "../../common/log.ts";
import { DevnetError } from "./devnet-errors.ts";
import { type Anvil, hasExited } from "./process.ts";
import { saveChain } from "./saved-chain.ts";

/** A week of the demo's chain takes about 10 s to save or load here; the margin is for a busy machine. */
const SAVE_TIMEOUT_MS = 120_000;

/**
 * `anvil` with its chain saved to `dir` every `intervalSeconds` (if given) and before it stops. Saves run
 * one at a time; one that fails on the timer is logged and the next tries again.
 */
export function withSaves(
  anvil: Anvil,
  rpc: string,
  dir: string,
  intervalSeconds: number | undefined,
): Anvil {
  let last: Promise<unknown> = Promise.resolve();
  const save = () => {
    const next = last.then(() => saveChain(rpc, dir, SAVE_TIMEOUT_MS));
    last = next.catch(() => undefined);
    return next;
  };
  const timer = intervalSeconds
    ? setInterval(() => {
        save().catch((error) => log("warn", "saving the devnet's chain failed", { dir, error }));
      }, intervalSeconds * 1000)
    : undefined;
  timer?.unref();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(timer);
      let failure: unknown;
      // A chain that already exited has nothing left to save: the last save stands.
      if (!(await hasExited(anvil))) await save().catch((error) => (failure = error));
      await anvil.stop();
      if (failure) {
        throw new DevnetError(
          `could not save the chain in ${dir} (${(failure as Error).message}); the last save stands`,
          { cause: failure },
        );
      }
    })();
    return stopping;
  };
  return { ...anvil, stop };
}
