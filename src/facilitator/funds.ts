import type { Chain, PublicClient, Transport } from "viem";
import { usdcAbi } from "../chain/usdc.ts";
import { amountAtStake, type CheckedPayment } from "./authorization.ts";

/**
 * Why a transfer the SDK refused (its simulation failed, or it read a low balance) cannot happen, when
 * the reason is that the payer lacks the funds: the x402 spec's `insufficient_funds`, which clients
 * understand, rather than the SDK's diagnosis (it reads through Multicall3, which a devnet may lack, and
 * then says only that the simulation failed). Undefined when the balance covers the amount, or cannot
 * be read: the SDK's reason stands.
 */
export async function lackOfFunds(
  client: PublicClient<Transport, Chain>,
  payment: CheckedPayment,
): Promise<string | undefined> {
  // What is at stake now: the authorized value (exact), the maximum at /verify or the amount taken at
  // /settle (upto), a deposit's amount (batch-settlement).
  const value = amountAtStake(payment);
  const balance = await balanceOf(client, payment);
  if (balance === undefined || balance >= value) return undefined;
  return `the payer holds ${balance} atomic units of the token, less than the ${value} at stake`;
}

/** The payer's balance of the payment's token at the latest block; undefined when it cannot be read. */
export function balanceOf(
  client: PublicClient<Transport, Chain>,
  payment: CheckedPayment,
): Promise<bigint | undefined> {
  return client
    .readContract({
      address: payment.requirements.asset as `0x${string}`,
      abi: usdcAbi,
      functionName: "balanceOf",
      args: [payment.terms.payer],
    })
    .catch(() => undefined);
}

/** SDK reasons after which the payer's balance is worth reading: a failed simulation, a low balance. */
export function fundsSuspected(reason: string | undefined): boolean {
  return reason !== undefined && /simulation_failed|insufficient_balance/.test(reason);
}
