import type { Chain, PublicClient, Transport } from "viem";
import type { Database } from "../common/db/index.ts";
import { AppError } from "../common/errors.ts";
import { log } from "../common/log.ts";

/** The RPC serves another chain than configured, or the database holds another chain's ledger. */
export class ChainMismatchError extends AppError {
  constructor(message: string) {
    super(500, "chain_mismatch", message);
  }
}

/**
 * What to do when the database's ledger was written against another chain (another genesis block):
 * "fail" (the default; a mainnet ledger must never meet a test chain) or "reset" (for a devnet, whose
 * chain is new on every start: its old ledger and Bazaar describe transactions that no longer exist).
 */
export type OnNewChain = "fail" | "reset";

/**
 * Checks the RPC serves `chain` and that the ledger belongs to this very chain, identified by the hash of
 * its genesis block (chain ids repeat across forks and devnets; genesis hashes do not).
 */
export async function checkChainIdentity(
  db: Database,
  client: PublicClient<Transport, Chain>,
  onNewChain: OnNewChain,
): Promise<void> {
  const expected = client.chain.id;
  const served = await client.getChainId();
  if (served !== expected) {
    throw new ChainMismatchError(
      `the RPC serves chain ${served}, but the facilitator is configured for ${expected}`,
    );
  }
  // "earliest", not block 0: a devnet may start at a higher number (anvil --number) and have no block 0.
  const genesis = (await client.getBlock({ blockTag: "earliest" })).hash;
  await db.transaction(async (tx) => {
    // Under the row lock, so two processes starting at once agree on one answer.
    await tx.query(
      "INSERT INTO facilitator_meta (key, value) VALUES ('genesis', $1) ON CONFLICT DO NOTHING",
      [genesis],
    );
    const { rows } = await tx.query<{ value: string }>(
      "SELECT value FROM facilitator_meta WHERE key = 'genesis' FOR UPDATE",
    );
    const stored = rows[0]?.value;
    if (stored === genesis) return;
    if (onNewChain === "fail") {
      throw new ChainMismatchError(
        `the facilitator database belongs to the chain with genesis ${stored}, not ${genesis}: ` +
          "use another database (or data directory) for this chain",
      );
    }
    await tx.query("DELETE FROM facilitator_authorizations");
    await tx.query("DELETE FROM bazaar_resources");
    await tx.query("UPDATE facilitator_meta SET value = $1 WHERE key = 'genesis'", [genesis]);
    log("warn", "facilitator state reset: the chain is new", { previousGenesis: stored, genesis });
  });
}
