/**
 * Access sold for a period, in the merchant's PostgreSQL state (kit migration 7), so that every process of a
 * merchant and every restart sees it: per merchant wallet, which wallet paid which path until when
 * (`merchant_access_grants`), and the nonces of the sign-in messages already served
 * (`merchant_sign_in_nonces`). A nonce is taken with one statement (`INSERT ... ON CONFLICT DO NOTHING`), so of
 * concurrent requests with one signed message exactly one is served, on every process sharing the store.
 */
import type { Queryable } from "../../common/db/index.ts";

/** How often expired rows are deleted, at most: on the way of a grant or a sign-in, so no schedule is needed. */
const SWEEP_EVERY_MS = 60_000;

export class AccessStore {
  private sweptAt = 0;

  constructor(
    private readonly db: Queryable,
    /** The merchant's wallet: a grant is a payment to it. */
    private readonly payTo: string,
  ) {}

  /**
   * `payer` paid for `seconds` of `resource`: its access runs that long from now, or, when it still has some,
   * that long beyond what it has (a second payment is a second period, not the same one again).
   */
  async grant(resource: string, payer: string, seconds: number): Promise<Date> {
    await this.sweep();
    const { rows } = await this.db.query<{ expires_at: Date | string }>(
      `INSERT INTO merchant_access_grants AS g (pay_to, resource, payer, expires_at)
       VALUES ($1, $2, $3, now() + $4::int * interval '1 second')
       ON CONFLICT (pay_to, resource, payer) DO UPDATE SET
         granted_at = now(),
         expires_at = greatest(g.expires_at, now()) + $4::int * interval '1 second'
       RETURNING expires_at`,
      [this.payTo, resource, payer.toLowerCase(), seconds],
    );
    return new Date((rows[0] as { expires_at: Date | string }).expires_at);
  }

  /** Until when `payer` has access to `resource`; undefined when it never paid, or its period has ended. */
  async accessUntil(resource: string, payer: string): Promise<Date | undefined> {
    const { rows } = await this.db.query<{ expires_at: Date | string }>(
      `SELECT expires_at FROM merchant_access_grants
       WHERE pay_to = $1 AND resource = $2 AND payer = $3 AND expires_at > now()`,
      [this.payTo, resource, payer.toLowerCase()],
    );
    return rows[0] ? new Date(rows[0].expires_at) : undefined;
  }

  /**
   * Takes a signed message's nonce for `payer`, kept `seconds` (past them the message is refused as too old
   * anyway): false when it was taken before, by this process or another (the message is a replay).
   */
  async takeNonce(nonce: string, payer: string, seconds: number): Promise<boolean> {
    await this.sweep();
    const { rows } = await this.db.query(
      `INSERT INTO merchant_sign_in_nonces (pay_to, nonce, payer, expires_at)
       VALUES ($1, $2, $3, now() + $4::int * interval '1 second')
       ON CONFLICT (pay_to, nonce) DO NOTHING
       RETURNING nonce`,
      [this.payTo, nonce, payer.toLowerCase(), seconds],
    );
    return rows.length === 1;
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    await this.db.query("DELETE FROM merchant_access_grants WHERE expires_at < now()");
    await this.db.query("DELETE FROM merchant_sign_in_nonces WHERE expires_at < now()");
  }
}
