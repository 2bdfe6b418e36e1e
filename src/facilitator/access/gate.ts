/**
 * Who may make this facilitator verify and settle for a payee (docs/facilitator.md, "Access control"):
 *
 * 1. A payee on the allow-list (configured, plus the merchants served in this process) is served to
 *    anyone, with or without a key: the operator pays gas for its own merchants.
 * 2. Otherwise a request with `Authorization: Bearer <key>` is served when the key is live and allows the
 *    payee, within its rate (settlements a minute, taken at /settle) and its gas budget of the day.
 * 3. Otherwise, without a key: served only by an open facilitator (loopback with neither allow-list nor
 *    keys, or `--open`); refused with 401 by any other.
 *
 * 4. A batch-settlement claim or refund this facilitator would sign as the receiverAuthorizer: only with a
 *    key that names the payee (the channels' receiver), allow-listed or not, open or not; or, on a
 *    facilitator with `loopbackAuthority` (the devnet's), a request without a key from this machine.
 *
 * Refusals come before anything is read from the chain or signed. The budget is checked here only for
 * whether anything is left; the reservation of a settlement's worst case, before it is signed, is
 * budget.ts's.
 */
import type { Queryable } from "../../common/db/index.ts";
import {
  API_KEY_INVALID,
  AUTHORIZER_KEY_REQUIRED,
  KEY_OVER_BUDGET,
  KEY_OVER_RATE,
  PAYEE_NOT_ALLOWED,
} from "../error-codes.ts";
import { findKey, secondsForToken, takeRateToken } from "./keys.ts";
import { describeBudget, secondsToNextUtcDay } from "./units.ts";

export interface AccessPolicy {
  /** Payees served without a key (any case). */
  payees?: Iterable<string>;
  /** Requests without a key are served for any payee. */
  open: boolean;
  /**
   * A request without a key from loopback may have this facilitator sign as any payee's receiverAuthorizer:
   * the devnet's, whose merchants run beside it on the same machine (`serve` against its URL) and whose
   * money is a test chain's. Never for a facilitator of real money: any local process could have a
   * payer's channel refunded before its receiver claims it.
   */
  loopbackAuthority?: boolean;
}

/** What a keyed request was admitted with: its settlement's gas is reserved against this key. */
export interface Grant {
  keyId: string;
  /** The key names the payee itself (not any payee): it may have this facilitator sign as its receiverAuthorizer. */
  authority?: boolean;
}

export type Admission =
  | {
      ok: true;
      grant?: Grant;
      /** Admitted as a receiverAuthorizer without a key, from loopback (`AccessPolicy.loopbackAuthority`). */
      loopbackAuthority?: true;
    }
  | {
      ok: false;
      status: 401 | 403 | 429;
      reason: string;
      message: string;
      /** Seconds, for a 429's Retry-After. */
      retryAfterS?: number;
    };

export interface Gate {
  readonly open: boolean;
  /** Whether a payee is on the allow-list. */
  allows(payee: string): boolean;
  /** Adds payees to the allow-list (the merchants of this process, once they are built). */
  allow(payees: Iterable<string>): void;
  /** The allow-list's size, for the ready line. */
  readonly payees: number;
  /**
   * Admits a /verify (nothing taken) or a /settle (a rate token taken) for `payee`. With `authority` (a
   * batch-settlement claim or refund this facilitator would sign as the channels' receiverAuthorizer), only a
   * key that names the payee is admitted, whatever the allow-list and openness say: a payer could otherwise
   * have its channel refunded before the receiver claims what it owes.
   */
  admit(
    authorization: string | undefined,
    payee: string,
    operation: "verify" | "settle",
    authority?: boolean,
    /** The request comes from this machine (its peer's address is loopback). */
    loopback?: boolean,
  ): Promise<Admission>;
}

/** Where a refusal sends the operator of the calling merchant. */
const DOCS = "docs/facilitator.md";

/** The gate of the facilitator settling on `network`: keys' gas days and budgets are that chain's. */
export function createGate(db: Queryable, policy: AccessPolicy, network: string): Gate {
  const payees = new Set<string>();
  const add = (list: Iterable<string>) => {
    for (const payee of list) payees.add(payee.toLowerCase());
  };
  add(policy.payees ?? []);

  return {
    open: policy.open,
    allows: (payee) => payees.has(payee.toLowerCase()),
    allow: add,
    get payees() {
      return payees.size;
    },

    async admit(authorization, rawPayee, operation, authority = false, loopback = false) {
      const payee = rawPayee.toLowerCase();
      const keyless = authorization === undefined || authorization.trim() === "";
      if (authority && keyless && loopback && policy.loopbackAuthority)
        return { ok: true, loopbackAuthority: true };
      if (payees.has(payee) && !authority) return { ok: true };
      if (authorization === undefined || authorization.trim() === "") {
        if (authority) {
          return {
            ok: false,
            status: 401,
            reason: AUTHORIZER_KEY_REQUIRED,
            message: `this facilitator signs claims and refunds as the receiverAuthorizer of ${payee}'s channels only for an API key that names ${payee}: send it (Authorization: Bearer <key>), or the receiverAuthorizer's signatures (${DOCS})`,
          };
        }
        if (policy.open) return { ok: true };
        return {
          ok: false,
          status: 401,
          reason: PAYEE_NOT_ALLOWED,
          message: `payee ${payee} is not on this facilitator's allow-list; send an API key that allows it (Authorization: Bearer <key>, see ${DOCS})`,
        };
      }
      const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
      const key = bearer === undefined ? undefined : await findKey(db, bearer, network);
      if (!key) {
        return {
          ok: false,
          status: 401,
          reason: API_KEY_INVALID,
          message: `the API key sent is unknown, revoked or malformed (expected Authorization: Bearer x402m_...); ask this facilitator's operator for a key (${DOCS})`,
        };
      }
      if (authority && !key.payees?.includes(payee)) {
        return {
          ok: false,
          status: 403,
          reason: AUTHORIZER_KEY_REQUIRED,
          message: `API key ${key.id} does not name ${payee}: this facilitator signs claims and refunds as its receiverAuthorizer only for a key issued for that receiver (--payee, not --any-payee; ${DOCS})`,
        };
      }
      if (key.payees !== null && !key.payees.includes(payee)) {
        return {
          ok: false,
          status: 403,
          reason: PAYEE_NOT_ALLOWED,
          message: `API key ${key.id} does not allow payee ${payee}; ask this facilitator's operator to issue a key for it (${DOCS})`,
        };
      }
      if (key.usedWei >= key.budgetWei) {
        return {
          ok: false,
          status: 429,
          reason: KEY_OVER_BUDGET,
          message: `API key ${key.id} has used its gas budget for today (UTC): ${describeBudget(key.usedWei, key.budgetWei, network)}; it renews at 00:00 UTC`,
          retryAfterS: secondsToNextUtcDay(),
        };
      }
      // /verify takes no token, but says now what /settle would: a stock resource server settles after
      // the merchant's work is done, and a refusal then leaves that work unpaid.
      const wait =
        operation === "settle"
          ? await takeRateToken(db, key.id)
          : key.tokens >= 1
            ? undefined
            : secondsForToken(key.tokens, key.ratePerMinute);
      if (wait !== undefined) {
        return {
          ok: false,
          status: 429,
          reason: KEY_OVER_RATE,
          message: `API key ${key.id} has used its ${key.ratePerMinute} settlements a minute; try again in ${wait} s`,
          retryAfterS: wait,
        };
      }
      return { ok: true, grant: { keyId: key.id, ...(authority ? { authority } : {}) } };
    },
  };
}
