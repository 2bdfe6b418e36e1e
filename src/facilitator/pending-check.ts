/**
 * What the chain says about a pending row's broadcast transaction, waiting up to `waitMs` for its receipt.
 */
import { log } from "../common/log.ts";
import { signedOf, termsOf, transferOf } from "./authorization.ts";
import type { LedgerRow } from "./authorization-ledger.ts";
import { type ChainOutcome, checkSettlement } from "./outcome.ts";
import type { SettlementOptions } from "./settle-context.ts";

export async function checkPending(
  options: Pick<SettlementOptions, "client" | "signer" | "pollingIntervalMs">,
  row: LedgerRow,
  waitMs: number,
): Promise<ChainOutcome> {
  const signed = signedOf(row.payment_payload);
  try {
    return await checkSettlement(
      options.client,
      options.signer,
      {
        method: transferOf(signed),
        hash: row.tx_hash as `0x${string}`,
        txNonce: row.tx_nonce ?? 0n,
        asset: row.asset as `0x${string}`,
        payer: row.payer as `0x${string}`,
        nonce: termsOf(signed).nonce,
      },
      { waitMs, pollingIntervalMs: options.pollingIntervalMs },
    );
  } catch (error) {
    // The chain could not be asked (RPC down): the outcome stays open.
    // The first line only: an RPC error's further lines repeat the request (the authorization's terms).
    log("warn", "cannot check a pending settlement", { hash: row.tx_hash, error });
    return { status: "pending" };
  }
}
