/**
 * Payments the simulator settled and has not yet written to the ground truth (truth.ts), written in
 * batches with the block each settled in.
 */
import type { Hash } from "viem";
import type { ChannelClaims } from "./channel-claims.ts";
import type { SimChain } from "./sim-chain.ts";
import { appendTruth, type TruthRecord, writeTruthComplete } from "./truth.ts";

export interface SettledPayment {
  record: Omit<TruthRecord, "block_number">;
  hash: Hash;
}

export class PendingTruth {
  private readonly settled: SettledPayment[] = [];

  constructor(
    private readonly chain: SimChain,
    private readonly truthFile: string,
    /** Where the block up to which `truthFile` is complete is recorded after each batch. */
    private readonly truthCompleteFile: string | undefined,
    /** The merchants' claims of the simulated wallets' channels, read up to the head at each flush. */
    private readonly claims?: ChannelClaims,
  ) {}

  get size(): number {
    return this.settled.length;
  }

  add(payment: SettledPayment): void {
    this.settled.push(payment);
  }

  /**
   * Appends the settled payments and the channels' claims up to the head to the truth, then records the
   * block up to which it is complete. That block is the head once no payment is in flight: a payment under
   * way may settle in any block up to the head before its answer arrives, and one started later lands after
   * it. A claim is the merchant's, made whenever it likes: read from the chain up to the same head.
   */
  async flush(inFlight: ReadonlySet<Promise<void>>): Promise<void> {
    await Promise.all(inFlight);
    const head = await this.chain.head();
    const batch = this.settled.splice(0);
    const receipts = await Promise.all(
      batch.map((s) => this.chain.client.getTransactionReceipt({ hash: s.hash })),
    );
    appendTruth(this.truthFile, [
      ...batch.map((s, i) => ({ ...s.record, block_number: Number(receipts[i]?.blockNumber) })),
      ...((await this.claims?.scan(head)) ?? []),
    ]);
    if (this.truthCompleteFile) writeTruthComplete(this.truthCompleteFile, head);
  }
}
