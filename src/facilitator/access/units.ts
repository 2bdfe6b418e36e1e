import { formatEther } from "viem";

/** "0.00098 of 0.001 ETH spent or reserved": a key's day, in the unit its budget is given in. */
export function describeBudget(usedWei: bigint, budgetWei: bigint): string {
  return `${formatEther(usedWei)} of ${formatEther(budgetWei)} ETH spent or reserved`;
}

/** Seconds until 00:00 UTC, when every key's day starts again (at least 1). */
export function secondsToNextUtcDay(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
