/**
 * What the channel code needs to know about the paid request it runs in. The SDK's batch-settlement server
 * calls the channel store from inside `@x402/hono`'s middleware (its verify and settle hooks), where the kit
 * cannot pass anything; the kit puts it here instead, one object per request (`inChannelRequest`, around the
 * payment middleware: payments/paid-handler.ts's `settleAndRecord`).
 */
import type { Database } from "../../common/db/index.ts";
import { scopeSlot } from "../../common/request-scope.ts";

export interface ChannelRequest {
  /**
   * The transaction of a writing call (payments/ledger/write-unit.ts), once open: the charge is written in it, so
   * that the call's writes, its ledger row and its channel's charge commit together or not at all. On
   * PGlite it is also the only way: the transaction holds the process's one connection until it ends.
   */
  tx?: Database;
  /**
   * The answer is streamed: the payment middleware saw a placeholder refusal and would give the channel's
   * reservation back, while the stream is still being delivered. The kit settles it at the stream's end.
   */
  handedOff?: boolean;
  /** Saving the channel's state failed during this request: the answer must not be delivered. */
  unsaved?: unknown;
  /**
   * A voucher's ledger row (payments/ledger/payment-ledger.ts), not written when the call was let through but with
   * its charge, in the charge's one statement (`written` once it is): a voucher's key is fresh for each request,
   * so there is nothing to take before, and a call that ends unpaid writes its row then.
   */
  ledger?: {
    payer: string;
    nonce: string;
    resource: string;
    validBefore: number;
    amount: bigint;
    written?: boolean;
  };
  /**
   * Gives back the channel reservation this request holds, outside any transaction. For a writing call
   * whose transaction did not commit: whatever gave the reservation back inside it (the charge, or the SDK
   * on a refusal) was undone with it, and the channel would stay busy until the reservation expired.
   */
  release?: () => Promise<void>;
}

const requests = scopeSlot<ChannelRequest>("channel request");

/** The request being served, when the channel code runs within one. */
export function channelRequest(): ChannelRequest | undefined {
  return requests.get();
}

/** Runs `fn` as one request, with a fresh `ChannelRequest` for everything it calls. */
export function inChannelRequest<T>(fn: () => T): T {
  return requests.run({}, fn);
}
