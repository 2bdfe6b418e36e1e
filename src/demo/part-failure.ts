import type { Devnet } from "../chain/devnet/index.ts";
import { DemoError } from "./resume.ts";

/**
 * Rejects with a DemoError when a part of the demo fails on its own: the simulator throws, the indexer
 * gives up (`servicesFailed`), anvil stops. Never settles once `stopping` aborts: the demo is stopping.
 */
export function partFailure(
  simulators: readonly Promise<unknown>[],
  servicesFailed: Promise<never>,
  devnets: readonly Pick<Devnet, "exited" | "chainId">[],
  stopping: AbortSignal,
): Promise<never> {
  const failed = new Promise<never>((_, reject) => {
    const fail = (what: string) => (error: unknown) => {
      if (!stopping.aborted) reject(new DemoError(`${what}: ${(error as Error)?.message ?? error}`));
    };
    for (const simulator of simulators) simulator.then(() => undefined, fail("the buyer simulator failed"));
    servicesFailed.catch(fail("the indexer failed"));
    for (const devnet of devnets)
      devnet.exited.then(({ code, signal }) =>
        fail(`anvil stopped (chain ${devnet.chainId})`)(new Error(signal ?? `exit code ${code}`)),
      );
  });
  failed.catch(() => undefined);
  return failed;
}
