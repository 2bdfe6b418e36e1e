/**
 * The gas of settlements once they are decided: the metrics' gas spent, and a keyed settlement's reservation
 * ended (charged with what the transaction cost, or given back when nothing was mined).
 */
import type { Chain, PublicClient, Transport } from "viem";
import { log } from "../common/log.ts";
import { facilitatorChannelGasSpent, facilitatorGasSpent } from "../common/metrics.ts";
import type { GasBudgets } from "./access/index.ts";
import type { AuthorizationKey } from "./authorization.ts";
import { settlementCost } from "./outcome.ts";

export class SettlementGas {
  constructor(
    private readonly budgets: GasBudgets,
    private readonly client: PublicClient<Transport, Chain>,
  ) {}

  /**
   * The metrics' gas spent: counted where the ledger records a mined transaction (settled or reverted),
   * which happens once per transaction whichever request or pass records it. A channel action's is also
   * counted under its kind: what claims cost is what decides how often a merchant should claim.
   */
  count(cost: bigint, channelAction?: "claim" | "settle" | "refund"): void {
    facilitatorGasSpent.inc(Number(cost));
    if (channelAction) facilitatorChannelGasSpent.inc({ action: channelAction }, Number(cost));
  }

  /** A keyed settlement's mined transaction, whose receipt is at hand: its cost becomes the key's spent gas. */
  charge(key: AuthorizationKey, cost: bigint, hash: string): Promise<void> {
    return accounting(() => this.budgets.charge(key, cost, hash));
  }

  /**
   * A keyed settlement decided after its request (pending): what its mined transaction cost becomes the
   * key's spent gas. One look at the reservations first: most settlements are not keyed.
   */
  chargeMined(key: AuthorizationKey, hash: string): Promise<void> {
    return accounting(async () => {
      if (!(await this.budgets.reserved(key))) return;
      const receipt = await this.client.getTransactionReceipt({ hash: hash as `0x${string}` });
      await this.budgets.charge(key, await settlementCost(this.client, receipt), hash);
    });
  }

  /** Nothing was mined: a keyed settlement's reservation is given back. */
  release(key: AuthorizationKey): Promise<void> {
    return accounting(() => this.budgets.release(key));
  }
}

/**
 * A key's gas accounting after the fact never fails the settlement it follows: when it cannot be done
 * (the database or the RPC away), the reservation stays in the key's day, which then holds more than
 * was spent (the key gets less that day, never more), and the log says so.
 */
async function accounting(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    log("warn", "a key's gas reservation could not be ended; it stays reserved for the day", { error });
  }
}
