/**
 * A keyed settlement's gas, from before it is signed to its receipt:
 *
 *   reserve (worst case: gas limit x max fee per gas, before signing) -> charge (gas used x effective gas
 *   price, plus the L1 data fee a receipt reports) | release (nothing was mined)
 *
 * The reservation is one conditional statement (keys.ts), so concurrent settlements of one key, in this
 * process or others on the same server, never reserve beyond its budget; a refused one is refused before
 * anything is signed, and the authorization stays usable. A settlement that outlives its request
 * (pending) keeps its reservation in the database until the chain decides it, whoever looks then.
 */
import { formatEther } from "viem";
import type { Queryable } from "../../common/db/index.ts";
import { type AuthorizationKey, keyString, type SettlementAction } from "../authorization.ts";
import { KEY_OVER_BUDGET } from "../error-codes.ts";
import type { Grant } from "./gate.ts";
import { dayOf, endReservation, hasReservation, type Reserved, reserveGas } from "./keys.ts";
import { coinOf, describeBudget } from "./units.ts";

/** A keyed settlement under way in this process. */
export interface KeyedSettlement {
  keyId: string;
  action: SettlementAction;
  /** What it reserved so far (wei). */
  reserved: bigint;
  reservation?: Reserved;
  /** Why its reservation was refused, when it was: the answer's reason. */
  refusal?: { reason: string; message: string };
}

/** Thrown by the signer's hook: the settlement is not signed. */
export class KeyOverBudgetError extends Error {
  override name = "KeyOverBudgetError";
}

export interface GasBudgets {
  /** A keyed settlement of `authorization` starts (around the SDK's settle), charged as `action`. */
  begin(authorization: AuthorizationKey, grant: Grant, action: SettlementAction): KeyedSettlement;
  end(authorization: AuthorizationKey): void;
  /**
   * Before signing: reserves `worstWei` for the authorization's transaction, when its settlement is keyed
   * (nothing otherwise). Throws KeyOverBudgetError when the key's day cannot hold it.
   */
  reserve(authorization: AuthorizationKey, worstWei: bigint): Promise<void>;
  /** The transaction was mined: its cost becomes the key's spent gas. */
  charge(authorization: AuthorizationKey, costWei: bigint, txHash: string): Promise<void>;
  /** Nothing was mined: the reservation is given back. */
  release(authorization: AuthorizationKey): Promise<void>;
  /** Whether the authorization holds a reservation (a keyed settlement not decided yet). */
  reserved(authorization: AuthorizationKey): Promise<boolean>;
  /**
   * What a keyed settlement costs beside its own transaction (a buyer's approval this facilitator funds:
   * sponsoring/approval.ts), reserved and charged on the key's day apart, charged as `approval`;
   * undefined when the settlement is not keyed.
   */
  beside(authorization: AuthorizationKey): BesideCost | undefined;
}

/** A keyed settlement's cost beside its transaction: reserved (throws KeyOverBudgetError), then ended. */
export interface BesideCost {
  reserve(worstWei: bigint): Promise<void>;
  charge(costWei: bigint, txHash: string): Promise<void>;
  release(): Promise<void>;
}

/** Where a cost beside an authorization's settlement is reserved: its own row, by the authorization's. */
export function besideKey(authorization: AuthorizationKey): AuthorizationKey {
  return { ...authorization, nonce: `${authorization.nonce}/approval` };
}

export function createGasBudgets(db: Queryable): GasBudgets {
  const running = new Map<string, KeyedSettlement>();
  return {
    begin(authorization, grant, action) {
      const keyed: KeyedSettlement = { keyId: grant.keyId, action, reserved: 0n };
      running.set(keyString(authorization), keyed);
      return keyed;
    },
    end(authorization) {
      running.delete(keyString(authorization));
    },
    async reserve(authorization, worstWei) {
      if (running.size === 0) return;
      const keyed = running.get(keyString(authorization));
      if (!keyed) return;
      const more = worstWei - keyed.reserved;
      if (more <= 0n) return;
      const reservation = await reserveGas(
        db,
        keyed.keyId,
        authorization,
        more,
        keyed.reservation,
        keyed.action,
      );
      if (!reservation) {
        const day = await dayOf(db, keyed.keyId, authorization.network);
        const state = day
          ? `${describeBudget(day.spentWei + day.reservedWei, day.budgetWei, authorization.network)} today (UTC)`
          : "the key is gone";
        keyed.refusal = {
          reason: KEY_OVER_BUDGET,
          message: `API key ${keyed.keyId} cannot cover this settlement's worst case of ${formatEther(more)} ${coinOf(authorization.network)} of gas: ${state}; it renews at 00:00 UTC`,
        };
        throw new KeyOverBudgetError(keyed.refusal.message);
      }
      keyed.reservation = reservation;
      keyed.reserved += more;
    },
    async charge(authorization, costWei, txHash) {
      await endReservation(db, authorization, { charged: costWei, txHash });
    },
    async release(authorization) {
      await endReservation(db, authorization, "released");
    },
    reserved: (authorization) => hasReservation(db, authorization),
    beside(authorization) {
      const keyed = running.get(keyString(authorization));
      if (!keyed) return undefined;
      const key = besideKey(authorization);
      let reserved: Reserved | undefined;
      return {
        async reserve(worstWei) {
          const reservation = await reserveGas(db, keyed.keyId, key, worstWei, reserved, "approval");
          if (!reservation) {
            keyed.refusal = {
              reason: KEY_OVER_BUDGET,
              message: `API key ${keyed.keyId} cannot cover the gas of this payment's Permit2 approval (${formatEther(worstWei)} ${coinOf(authorization.network)} at most) beside its settlement; it renews at 00:00 UTC`,
            };
            throw new KeyOverBudgetError(keyed.refusal.message);
          }
          reserved = reservation;
        },
        charge: async (costWei, txHash) => {
          await endReservation(db, key, { charged: costWei, txHash });
        },
        release: async () => {
          await endReservation(db, key, "released");
        },
      };
    },
  };
}
