/**
 * Starting a devnet from its saved chain (./saved-chain.ts): why anvil refused the save, and the clock a
 * loaded chain goes on from.
 */
import { toHex, zeroHash } from "viem";
import type { DevnetClients } from "./chain.ts";
import { SavedChainError } from "./devnet-errors.ts";
import { FORK_GENESIS_FILE } from "./forked.ts";
import type { feedChain, SavedChain } from "./saved-chain.ts";

/** What anvil's failure to start from `saved` is: a SavedChainError naming the file, or `error` itself. */
export async function loadFailure(
  error: unknown,
  saved: SavedChain,
  feed: ReturnType<typeof feedChain> | undefined,
): Promise<unknown> {
  // A file that does not decompress; not a pipe anvil stopped reading (EPIPE), which says nothing of it.
  const unreadable = await feed?.fed.then(
    () => undefined,
    (reason: NodeJS.ErrnoException) => (reason.code === "EPIPE" ? undefined : reason.message),
  );
  // anvil reads the state before it listens: a state it refused is named in its complaint.
  const refused = /^error: .*--load-state.*$/m.exec((error as Error).message)?.[0];
  if (unreadable || refused) return new SavedChainError(saved.file, unreadable ?? refused ?? "");
  return error;
}

/**
 * Checks that the chain loaded from `saved` can be read (`forked`: it runs beside the empty chain it
 * forked), and sets the clock so that its next block is 2 s after its last.
 */
export async function resumeLoaded(
  { test, client }: DevnetClients,
  saved: SavedChain,
  forked: boolean,
): Promise<void> {
  const latest = await client.getBlock({ blockTag: "latest" });
  // Loaded without its upstream, a forked chain would answer zero for every account it had not touched.
  if (!forked && latest.number > 0n && latest.stateRoot === zeroHash) {
    throw new SavedChainError(
      saved.file,
      `its blocks have no state roots (it forked an empty chain) and ${FORK_GENESIS_FILE} beside it is missing: restore that file`,
    );
  }
  // The saved state's block environment carries the wall time of the save: reset the clock to the
  // last block's, so the next block is 2 s after it.
  const request = test.request as (args: { method: string; params: unknown[] }) => Promise<unknown>;
  await request({ method: "evm_setTime", params: [toHex(latest.timestamp)] });
}
