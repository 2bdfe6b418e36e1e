/**
 * Access sold for a period, in the merchant's PostgreSQL state (kit migration 7), so that every process of a
 * merchant and every restart sees it: per merchant wallet, which wallet paid which path until when and with how
 * many signed-in calls left (`merchant_access_grants`), and the nonces of the sign-in messages already served
 * (`merchant_sign_in_nonces`). A nonce is taken with one statement (`INSERT ... ON CONFLICT DO NOTHING`), so of
 * concurrent requests with one signed message exactly one is served, on every process sharing the store.
 */
import type { Queryable } from "../../../common/db/index.ts";

/** How often expired rows are deleted, at most: on the way of a grant or a sign-in, so no schedule is needed. */
const SWEEP_EVERY_MS = 60_000;

/** A wallet's period of a path: until when it runs, and how many signed-in calls it has left. */
export interface Access {
  until: Date;
  callsLeft: number;
}

interface AccessRow {
  expires_at: Date | string;
  calls_left: number;
}

const access = (row: AccessRow): Access => ({
  until: new Date(row.expires_at),
  callsLeft: Number(row.calls_left),
});

export class AccessStore {
  private sweptAt = 0;

  constructor(
    private readonly db: Queryable,
    /** The merchant's wallet: a grant is a payment to it. */
    private readonly payTo: string,
  ) {}

  /**
   * `payer` paid for `seconds` and `calls` of `resource`: its access runs that long from now with that many
   * calls, or, when it still has some, that long beyond what it has with those calls added (a second payment is
   * a second period, not the same one again).
   */
  async grant(resource: string, payer: string, seconds: number, calls: number): Promise<Access> {
    await this.sweep();
    const { rows } = await this.db.query<AccessRow>(
      `INSERT INTO merchant_access_grants AS g (pay_to, resource, payer, expires_at, calls_left)
       VALUES ($1, $2, $3, now() + $4::int * interval '1 second', $5)
       ON CONFLICT (pay_to, resource, payer) DO UPDATE SET
         granted_at = now(),
         calls_left = CASE WHEN g.expires_at > now() THEN g.calls_left ELSE 0 END + $5,
         expires_at = greatest(g.expires_at, now()) + $4::int * interval '1 second'
       RETURNING expires_at, calls_left`,
      [this.payTo, resource, payer.toLowerCase(), seconds, calls],
    );
    return access(rows[0] as AccessRow);
  }

  /**
   * Takes one call of `payer`'s period of `resource`, in one statement (concurrent sign-ins take a call each, and
   * never the last one twice): what is left of it, or why there is none (`unpaid`: it never paid, or its period
   * ended; `used`: the period runs, its calls are spent).
   */
  async takeCall(resource: string, payer: string): Promise<Access | "unpaid" | "used"> {
    const key = [this.payTo, resource, payer.toLowerCase()];
    const { rows } = await this.db.query<AccessRow>(
      `UPDATE merchant_access_grants SET calls_left = calls_left - 1
       WHERE pay_to = $1 AND resource = $2 AND payer = $3 AND expires_at > now() AND calls_left > 0
       RETURNING expires_at, calls_left`,
      key,
    );
    if (rows[0]) return access(rows[0]);
    const running = await this.db.query(
      `SELECT 1 FROM merchant_access_grants WHERE pay_to = $1 AND resource = $2 AND payer = $3 AND expires_at > now()`,
      key,
    );
    return running.rows.length > 0 ? "used" : "unpaid";
  }

  /** Gives back a call taken for an answer that failed: a failed call costs the period nothing, as it costs no payment. */
  async returnCall(resource: string, payer: string): Promise<void> {
    await this.db.query(
      `UPDATE merchant_access_grants SET calls_left = calls_left + 1
       WHERE pay_to = $1 AND resource = $2 AND payer = $3 AND expires_at > now()`,
      [this.payTo, resource, payer.toLowerCase()],
    );
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
