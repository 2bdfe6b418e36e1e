import { formatEther } from "viem";
import { chains } from "../../chain/chains.ts";

/** The coin gas is paid in on `network` (its chain record's; ETH on a chain without one: a devnet, Base Sepolia). */
export function coinOf(network: string): string {
  return chains.byCaip2.get(network)?.coin ?? "ETH";
}

/** "0.00098 of 0.001 ETH spent or reserved on eip155:8453": a key's day on a chain, in that chain's coin. */
export function describeBudget(usedWei: bigint, budgetWei: bigint, network: string): string {
  return `${formatEther(usedWei)} of ${formatEther(budgetWei)} ${coinOf(network)} spent or reserved on ${network}`;
}

/** Seconds until 00:00 UTC, when every key's day starts again (at least 1). */
export function secondsToNextUtcDay(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
