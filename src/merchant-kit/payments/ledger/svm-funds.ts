/**
 * A Solana payer's funds, for the endpoints that reserve them before their work (issue 86), read as the EVM ones
 * are (funds.ts): the balance the next payment draws from, and which of the payer's payments in flight the chain
 * has already taken from it, at one state.
 *
 * **Which balance.** x402's `exact` on Solana is a `TransferChecked` from a token account the transaction names,
 * by an authority that may own it or only be its delegate; the ledger keys a payment by that authority
 * (payment-key.ts). Were a payment from any account reserved, two payers (an owner and its account's delegate)
 * could each spend one account's balance through this host at once, each reserved against it alone, and one
 * call would run unpaid. So a guarded endpoint takes a Solana payment only from the payer's own associated USDC
 * account (`foreignSource`; the SDK's client pays from nothing else), which only its owner's payments, all under
 * one ledger payer, draw from: that account's balance is the one read, never the sum of the owner's USDC accounts
 * (two payments from one account are not paid by money in another).
 *
 * **Which payments landed.** Solana knows a transaction by its signature, which the facilitator's own signature
 * (the fee payer's, the transaction's first) makes: the merchant learns it from the settlement, and the ledger keeps
 * it (`settlement`). A payment whose signature is confirmed in a slot at or before the one its balance was read
 * at is in that balance; any other (running, unsettled, settled but not yet seen by this node) counts against it:
 * a refusal too many, never a call too few.
 */

import { type Address, getBase64Encoder, type Signature } from "@solana/kit";
import { AccountState, getTokenDecoder } from "@solana-program/token";
import { usdcAccountOf } from "../../../chain/solana/accounts.ts";
import { SOLANA_USDC_MINT, SPL_TOKEN_PROGRAM } from "../../../chain/solana/constants.ts";
import { solanaRpc } from "../../../chain/solana/rpc.ts";
import { UpstreamError } from "../../../common/errors.ts";
import { sleep } from "../../../common/sleep.ts";
import type { Funds, FundsReader, PaymentKey } from "./payment-ledger.ts";
import { SVM_NONCE_PREFIX } from "./payment-ledger.ts";

/** Times a failed read is tried again, as the EVM reader does: a node behind a balancer fails now and then. */
const READ_RETRIES = 2;
const READ_TIMEOUT_MS = 10_000;

/** The funds reader of Solana's USDC, through `rpcUrl` (X402M_SOLANA_RPC_URL). */
export function solanaFunds(rpcUrl: string): FundsReader {
  const rpc = solanaRpc(rpcUrl);
  const read = async (payer: string, nonces: readonly string[], settlements: ReadonlyMap<string, string>) => {
    const asked = nonces.flatMap((nonce) => {
      const signature = settlements.get(nonce);
      return signature === undefined ? [] : [{ nonce, signature }];
    });
    const abortSignal = AbortSignal.timeout(READ_TIMEOUT_MS);
    const account = (await usdcAccountOf(payer)) as Address;
    const [info, statuses] = await Promise.all([
      rpc.getAccountInfo(account, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal }),
      asked.length === 0
        ? undefined
        : rpc
            .getSignatureStatuses(
              asked.map((a) => a.signature as Signature),
              { searchTransactionHistory: true },
            )
            .send({ abortSignal }),
    ]);
    const slot = info.context.slot;
    const landed = (i: number) => {
      const status = statuses?.value[i];
      const confirmed =
        status?.confirmationStatus === "confirmed" || status?.confirmationStatus === "finalized";
      return confirmed && status?.err === null && status.slot <= slot;
    };
    return {
      balance: spendable(payer, info.value),
      used: new Set(asked.filter((_, i) => landed(i)).map((a) => a.nonce)),
    } satisfies Funds;
  };
  return async (payer, nonces, _network, settlements = new Map()) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await read(payer, nonces, settlements);
      } catch (error) {
        if (attempt < READ_RETRIES) {
          await sleep(50 * (attempt + 1));
          continue;
        }
        throw new UpstreamError(
          `cannot read the payer's balance from Solana (${(error as Error).message.split("\n")[0]}): try again`,
          "chain_unavailable",
          503,
        );
      }
    }
  };
}

/**
 * What `payer` can transfer from its associated USDC account as the chain shows it: the amount, where the account
 * is a USDC account of the Token program that `payer` owns and that is not frozen; otherwise nothing (none yet, or
 * one whose owner was changed away: its owner's payments are refused, never reserved against it).
 */
function spendable(
  payer: string,
  account: { owner: string; data: readonly [string, string] } | null,
): bigint {
  if (account === null || account.owner !== SPL_TOKEN_PROGRAM) return 0n;
  try {
    const token = getTokenDecoder().decode(getBase64Encoder().encode(account.data[0]));
    const own = token.owner === payer && token.mint === SOLANA_USDC_MINT;
    return own && token.state === AccountState.Initialized ? token.amount : 0n;
  } catch {
    return 0n;
  }
}

/**
 * Why a guarded endpoint refuses this payment, when it does: a Solana transfer from an account that is not the
 * payer's own associated USDC account, whose balance is all a reservation can read (see above). None otherwise.
 */
export async function foreignSource(key: PaymentKey): Promise<string | undefined> {
  if (key.source === undefined) return undefined;
  const own = await usdcAccountOf(key.payer);
  if (key.source === own) return undefined;
  return `this route reserves the paying wallet's funds before its work, and on Solana it reads them from the wallet's own USDC account (${own}); this payment draws from ${key.source}: pay from that account (the SDK's SVM client does)`;
}

/**
 * The transaction a settled payment's receipt names, where the ledger keeps it: a Solana payment's, the only way
 * its chain is asked about it (`SVM_NONCE_PREFIX`). `receipt`: the `PAYMENT-RESPONSE` header (base64 JSON).
 */
export function settlementOf(key: PaymentKey, receipt: string | null | undefined): string | undefined {
  if (!receipt || !key.nonce.startsWith(SVM_NONCE_PREFIX)) return undefined;
  try {
    const { transaction } = JSON.parse(Buffer.from(receipt, "base64").toString("utf8")) as {
      transaction?: unknown;
    };
    return typeof transaction === "string" && transaction.length > 0 ? transaction : undefined;
  } catch {
    return undefined;
  }
}
