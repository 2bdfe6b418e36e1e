/**
 * What the steps of a settlement (settlement.ts, broadcast.ts, conclude.ts, resolve-pending.ts) share: the
 * facilitator's parts they are given, and this process's bookkeeping of the settlements under way.
 */
import type { x402Facilitator } from "@x402/core/facilitator";
import type { SettleResponse, VerifyResponse } from "@x402/core/types";
import type { Chain, PublicClient, Transport } from "viem";
import type { Database } from "../common/db/index.ts";
import type { GasBudgets } from "./access/index.ts";
import type { LedgerRow } from "./authorization-ledger.ts";
import type { BazaarOutcome } from "./bazaar.ts";
import type { ChainReads } from "./chain-reads.ts";
import type { InFlight } from "./inflight.ts";
import type { PayerFunds } from "./payer-funds.ts";
import type { SettlementGas } from "./settlement-gas.ts";
import type { ReceiptBlocks } from "./signer-hooks.ts";
import type { Sponsoring } from "./sponsoring/index.ts";
import type { Scope } from "./wire.ts";

/** A claim with no signed transaction after this long was abandoned by a process that died. */
export const STALE_CLAIM_SECONDS = 120;

export interface SettlementOptions {
  db: Database;
  sdk: x402Facilitator;
  client: PublicClient<Transport, Chain>;
  /** The SDK signer's reads: the payer's code, which the SDK's re-verification reads twice, is held. */
  reads: ChainReads;
  /** The facilitator's account (for its nonce when deciding whether a transaction was dropped). */
  signer: `0x${string}`;
  scope: Scope;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
  /** Block numbers and costs of receipts the SDK waited for, by lower-case hash (filled by the signer). */
  receiptBlocks: ReceiptBlocks;
  /** Keyed settlements' gas: reserved before signing (by the signer's hook), charged from the receipt. */
  budgets: GasBudgets;
  /** The gas sponsoring a payment asks for, decided and done around the SDK's settle (sponsoring/). */
  sponsoring: Sponsoring;
  /**
   * /verify's own check and record, for a /settle of a payment never verified: x402's `upfront` flow (and
   * `escrow`) settles before the handler and sends no /verify (`@x402/core` 2.27, `PaymentFlowName`).
   */
  verify(payload: unknown, requirements: unknown): Promise<VerifyResponse>;
  /** Records the paid resource in the Bazaar; called once per settlement, when it becomes final. */
  recordInBazaar(
    row: Pick<LedgerRow, "payment_payload" | "payment_requirements">,
  ): Promise<BazaarOutcome | undefined>;
}

export interface SettleContext extends SettlementOptions {
  gas: SettlementGas;
  payerFunds: PayerFunds;
  inflight: InFlight;
  /**
   * Answers whose success was claimed by the statement that recorded the settlement (one commit fewer
   * on every payment): for the request that settled it only, never for those sharing its answer.
   */
  deliveredWhenSettled: WeakSet<SettleResponse>;
}
