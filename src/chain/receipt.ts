import {
  type Chain,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Transport,
} from "viem";
import { sleep } from "../common/sleep.ts";

/**
 * Asks for a transaction's receipt every `intervalMs` until it comes or `timeoutMs` passes (undefined).
 *
 * By hash, not by watching blocks as viem's `waitForTransactionReceipt` does: its block watcher is shared
 * between concurrent waits, and a wait that joins just after the block holding its transaction was seen
 * sleeps until the next block (one block late on Base; forever on a devnet that mines on demand). It also
 * follows a replaced transaction to its replacement's receipt, which is not our settlement.
 */
export async function pollReceipt(
  client: PublicClient<Transport, Chain>,
  hash: Hex,
  timeoutMs: number,
  intervalMs: number,
): Promise<TransactionReceipt | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await client.getTransactionReceipt({ hash });
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await sleep(Math.min(intervalMs, left));
  }
}
