/**
 * Wallet balances for the funding history (`history.ts`): a wallet's USDC balance at the end of the
 * block before it passed money on. Under FIFO the money it held there is exactly its most recent
 * inflows totalling that balance, so the balance says how far back its history must be read, and the
 * report's provenance screen starts its queue from it (the `balances` table, migration 12).
 *
 * One `eth_call balanceOf` per wallet and block, sent in JSON-RPC batches through the indexer's client
 * (rate limit, retries, stats). Not Multicall3: its calls share one block, and a history's wallets are
 * each asked at a block of their own (the block before their own outflow), so it would save a call only
 * for the new payers of one block; a JSON-RPC batch carries a hundred calls of any blocks per request.
 *
 * A node that pruned a block's state (a full node, anvil with `--prune-history`) refuses the call; the
 * wallet's balance is then unknown, its history is read back to the lookback as before coverage
 * existed, and no row is stored (`onUnknown` says so).
 */
import type { Analytics } from "../analytics/duckdb.ts";
import { BASE_RECORD, type ChainRecord } from "../chain/chains.ts";
import type { RpcClient } from "./rpc/client.ts";
import { RpcError } from "./rpc/rpc-errors.ts";
import { APPEARANCES_SQL } from "./state.ts";

/** A wallet's USDC balance at the end of `block`, in atomic units. */
export interface BalanceRow {
  wallet: string;
  block: number;
  amount: bigint;
}

const BALANCE_OF = "0x70a08231";

/**
 * The balance of each (wallet, block) asked, or undefined where the node has no state for the block.
 * Blocks below `floor` (before the chain's first) hold nothing: 0 without asking.
 */
export async function readBalances(
  client: RpcClient,
  asks: readonly { wallet: string; block: number }[],
  floor: number,
  onUnknown?: (ask: { wallet: string; block: number }, reason: string) => void,
  usdc: string = BASE_RECORD.usdc.address,
): Promise<(bigint | undefined)[]> {
  const out: (bigint | undefined)[] = asks.map((a) => (a.block < floor ? 0n : undefined));
  const calls = asks.flatMap((a, i) =>
    a.block < floor
      ? []
      : [
          {
            i,
            method: "eth_call",
            params: [
              { to: usdc, data: `${BALANCE_OF}${a.wallet.slice(2).toLowerCase().padStart(64, "0")}` },
              `0x${a.block.toString(16)}`,
            ],
          },
        ],
  );
  const answers = await client.settle<string>(calls.map(({ method, params }) => ({ method, params })));
  calls.forEach(({ i }, k) => {
    const answer = answers[k];
    const ask = asks[i] as { wallet: string; block: number };
    if (answer instanceof RpcError) onUnknown?.(ask, answer.shortMessage);
    else if (typeof answer === "string" && /^0x[0-9a-fA-F]{1,64}$/.test(answer)) out[i] = BigInt(answer);
    else onUnknown?.(ask, `balanceOf answered ${JSON.stringify(answer)?.slice(0, 80)}`);
  });
  return out;
}

/**
 * The (wallet, block) pairs whose history was read, as the stored balances say: a history read for an
 * outflow at block T stores the balance at T − 1. Loaded at start and after a rewind, as the wallet book
 * is, so that a resumed run does not read again what an uninterrupted one read once.
 */
export async function loadReadHistories(
  analytics: Analytics,
  chain: ChainRecord = BASE_RECORD,
): Promise<Set<string>> {
  const rows = await analytics.all<{ wallet: string; block_number: bigint }>(
    "SELECT wallet, block_number FROM balances WHERE chain = $chain",
    { chain: chain.slug },
  );
  return new Set(rows.map((r) => readKey(r.wallet, Number(r.block_number) + 1)));
}

/** The key of a history read for `wallet`'s outflow at block `top`. */
export function readKey(wallet: string, top: number): string {
  return `${wallet}:${top}`;
}

/**
 * The wallets whose depositors were read (`history.ts`, rule 3): every wallet that sent a stored
 * transfer to a wallet already seen in a payment by then while not seen itself. The first such transfer
 * is the one that triggered the read, so the set rebuilt from the store is the one an uninterrupted run
 * holds.
 */
export async function loadDepositorsRead(
  analytics: Analytics,
  chain: ChainRecord = BASE_RECORD,
): Promise<Set<string>> {
  const rows = await analytics.all<{ wallet: string }>(
    `WITH seen AS (
       SELECT wallet, min(block_number) AS first_block FROM (${APPEARANCES_SQL}) GROUP BY wallet
     )
     SELECT DISTINCT t.from_address AS wallet FROM transfers t
       JOIN seen r ON r.wallet = t.to_address AND r.first_block <= t.block_number
       LEFT JOIN seen s ON s.wallet = t.from_address
     WHERE t.chain = $chain AND t.from_address <> $zero AND t.from_address <> t.to_address
       AND (s.first_block IS NULL OR s.first_block > t.block_number)`,
    { chain: chain.slug, zero: "0x0000000000000000000000000000000000000000" },
  );
  return new Set(rows.map((r) => r.wallet));
}
