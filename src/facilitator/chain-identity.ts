import type { Chain, PublicClient, Transport } from "viem";
import type { Database, Queryable } from "../common/db/index.ts";
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
 * its genesis block (chain ids repeat across forks and devnets; genesis hashes do not). Each chain of the
 * database has its own (`genesis:eip155:<id>` in `facilitator_meta`).
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
  // One row per chain: a facilitator may settle on several, their ledgers side by side (keyed by network).
  const network = `eip155:${expected}`;
  const key = `genesis:${network}`;
  await db.transaction(async (tx) => {
    await adoptUnkeyedGenesis(tx, key, network);
    // Under the row lock, so two processes starting at once agree on one answer.
    await tx.query("INSERT INTO facilitator_meta (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      key,
      genesis,
    ]);
    const { rows } = await tx.query<{ value: string }>(
      "SELECT value FROM facilitator_meta WHERE key = $1 FOR UPDATE",
      [key],
    );
    const stored = rows[0]?.value;
    if (stored === genesis) return;
    if (onNewChain === "fail") {
      throw new ChainMismatchError(
        `the facilitator database belongs to the chain with genesis ${stored}, not ${genesis}: ` +
          "use another database (or data directory) for this chain",
      );
    }
    // This chain's ledger and Bazaar entries go; another chain's, kept in the same database, stay.
    await tx.query("DELETE FROM facilitator_authorizations WHERE network = $1", [network]);
    await tx.query(
      `DELETE FROM bazaar_resources r WHERE NOT EXISTS (
         SELECT 1 FROM bazaar_accepts a
         WHERE a.resource = r.resource AND a.tool_name = r.tool_name AND a.network <> $1)`,
      [network],
    );
    await tx.query("UPDATE facilitator_meta SET value = $1 WHERE key = $2", [genesis, key]);
    log("warn", "facilitator state reset: the chain is new", { network, previousGenesis: stored, genesis });
  });
}

/**
 * A database of one chain's ledger, from before a facilitator settled on several, names its genesis under
 * `genesis` alone. It is taken as this chain's (renamed to `key`, then held to this chain's genesis as any)
 * unless its ledger holds only other networks' authorizations: so a ledger written against another chain of the
 * same id is still refused.
 */
async function adoptUnkeyedGenesis(tx: Queryable, key: string, network: string): Promise<void> {
  await tx.query(
    `UPDATE facilitator_meta SET key = $1
     WHERE key = 'genesis'
       AND NOT EXISTS (SELECT 1 FROM facilitator_meta WHERE key = $1)
       AND (EXISTS (SELECT 1 FROM facilitator_authorizations WHERE network = $2)
            OR NOT EXISTS (SELECT 1 FROM facilitator_authorizations WHERE network <> $2))`,
    [key, network],
  );
}
