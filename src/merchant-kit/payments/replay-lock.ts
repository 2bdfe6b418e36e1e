import type { Database } from "../../common/db/index.ts";

/** The identity of one signed payment: who signed it and its one-time nonce. */
export interface PaymentKey {
  payer: `0x${string}`;
  /** The EIP-3009 nonce (32 bytes hex), unique per authorization of a payer. */
  nonce: string;
  /** Unix seconds after which the authorization can no longer be settled. */
  validBefore: number;
}

/**
 * Locks kept after `validBefore` for this long: a lock must outlive every chance that the authorization
 * settles, and the chain refuses it after `validBefore`; a day covers clock skew with room to spare.
 */
export const LOCK_RETENTION_SECONDS = 24 * 60 * 60;

/**
 * At most one handler run per payment authorization. `@x402/hono` verifies every request carrying the
 * same PAYMENT-SIGNATURE and runs each handler before settling once (x402.md, the replay pitfall): a
 * unique row per (payer, nonce), taken after verification and before the handler, lets exactly one
 * request through. The row stays (the nonce is spent once settled) and is released only when the handler
 * failed, since then nothing was charged and the buyer may retry with the same authorization.
 */
export class ReplayLocks {
  private lastPurge = 0;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the lock; false when another request holds it (or held it and succeeded). */
  async take(key: PaymentKey, resource: string): Promise<boolean> {
    await this.purgeNowAndThen();
    const { rowCount } = await this.db.query(
      `INSERT INTO platform_replay_locks (payer, nonce, resource, valid_before)
       VALUES ($1, $2, $3, to_timestamp($4)) ON CONFLICT (payer, nonce) DO NOTHING`,
      [key.payer, key.nonce.toLowerCase(), resource, key.validBefore],
    );
    return rowCount === 1;
  }

  /** Gives the authorization back after a failed handler (nothing was charged). */
  async release(key: PaymentKey): Promise<void> {
    await this.db.query("DELETE FROM platform_replay_locks WHERE payer = $1 AND nonce = $2", [
      key.payer,
      key.nonce.toLowerCase(),
    ]);
  }

  /** Drops locks whose authorization expired long ago; at most once an hour per process. */
  private async purgeNowAndThen(): Promise<void> {
    const now = this.now();
    if (now - this.lastPurge < 60 * 60 * 1000) return;
    this.lastPurge = now;
    await this.db.query("DELETE FROM platform_replay_locks WHERE valid_before < to_timestamp($1)", [
      Math.floor(now / 1000) - LOCK_RETENTION_SECONDS,
    ]);
  }
}
