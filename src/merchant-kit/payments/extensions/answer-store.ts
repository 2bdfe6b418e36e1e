/**
 * The answers bought with a buyer's payment id (the `payment-identifier` extension), in the merchant's
 * PostgreSQL state (`merchant_payment_answers`, kit migration 6), so that every process of a merchant and
 * every restart sees them. One row per (wallet, id): who paid, which request the id is bound to, and once
 * the call was charged, its answer. A row is claimed with one statement (`INSERT ... ON CONFLICT`), so of
 * concurrent requests with one id exactly one does the work, on every process sharing the store.
 */
import type { Queryable } from "../../../common/db/index.ts";

/** An answer as it is kept and sent again: its status, the headers that matter and its body. */
export interface StoredAnswer {
  status: number;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
}

/** What claiming an id found. */
export type Claim =
  /** The id is this request's: it does the work. */
  | { kind: "owner" }
  /** Another request (or another payer) holds the id. */
  | { kind: "conflict" }
  /** The same request, being done by another request: wait for its answer. */
  | { kind: "running" }
  | { kind: "answered"; answer: StoredAnswer }
  /** The same request was charged, but its answer was not kept (streamed, or too large). */
  | { kind: "unstored" };

export interface ClaimRequest {
  id: string;
  payer: string;
  requestHash: string;
  /** A hash of the request's PAYMENT-SIGNATURE header. */
  paymentHash: string;
  /** This request's token: only it may finish or give back the claim. */
  owner: string;
  /** How long the claim holds before a request with the same id and request may take it over (a crash). */
  leaseSeconds: number;
  /** How long the id and its answer are kept. */
  ttlSeconds: number;
}

interface Row {
  payer: string;
  request_hash: string;
  state: "running" | "answered" | "unstored";
  status: number | null;
  headers: [string, string][] | string | null;
  body: string | null;
}

/** How often expired rows are deleted, at most: on the way of a claim, so no schedule is needed. */
const SWEEP_EVERY_MS = 60_000;

export class AnswerStore {
  private sweptAt = 0;

  constructor(
    private readonly db: Queryable,
    /** The merchant's wallet: ids are the buyer's choice, unique per merchant. */
    private readonly payTo: string,
  ) {}

  /** Claims `request.id` for this request, or says who has it and what it bought. */
  async claim(request: ClaimRequest): Promise<Claim> {
    await this.sweep();
    const { rows } = await this.db.query<{ owner: string }>(
      `INSERT INTO merchant_payment_answers AS a
         (pay_to, payment_id, payer, request_hash, payment_hash, state, owner, lease_until, expires_at)
       VALUES ($1, $2, $3, $4, $8, 'running', $5, now() + $6::int * interval '1 second',
         now() + $7::int * interval '1 second')
       ON CONFLICT (pay_to, payment_id) DO UPDATE SET
         payer = excluded.payer, request_hash = excluded.request_hash,
         payment_hash = excluded.payment_hash, state = 'running',
         owner = excluded.owner, lease_until = excluded.lease_until, expires_at = excluded.expires_at,
         status = NULL, headers = NULL, body = NULL
       -- Expired: the id is free again. A running claim past its lease: its request crashed, and the same
       -- request (never another's) takes it over.
       WHERE a.expires_at < now()
          OR (a.state = 'running' AND a.lease_until < now()
              AND a.payer = excluded.payer AND a.request_hash = excluded.request_hash)
       RETURNING owner`,
      [
        this.payTo,
        request.id,
        request.payer,
        request.requestHash,
        request.owner,
        request.leaseSeconds,
        request.ttlSeconds,
        request.paymentHash,
      ],
    );
    if (rows[0]?.owner === request.owner) return { kind: "owner" };
    const found = await this.db.query<Row>(
      `SELECT payer, request_hash, state, status, headers, body FROM merchant_payment_answers
       WHERE pay_to = $1 AND payment_id = $2 AND expires_at >= now()`,
      [this.payTo, request.id],
    );
    const row = found.rows[0];
    // Given back (or expired) between the two statements: claim again.
    if (!row) return this.claim(request);
    if (row.payer !== request.payer || row.request_hash !== request.requestHash) return { kind: "conflict" };
    if (row.state === "running") return { kind: "running" };
    if (row.state === "unstored") return { kind: "unstored" };
    return { kind: "answered", answer: answerOf(row) };
  }

  /**
   * The answer kept for `id` when it was bought by this very header for this very request: a resend of the
   * same payment, whose payer was proven when it was first verified.
   */
  async resent(id: string, requestHash: string, paymentHash: string): Promise<StoredAnswer | undefined> {
    const { rows } = await this.db.query<Row>(
      `SELECT payer, request_hash, state, status, headers, body FROM merchant_payment_answers
       WHERE pay_to = $1 AND payment_id = $2 AND request_hash = $3 AND payment_hash = $4
         AND state = 'answered' AND expires_at >= now()`,
      [this.payTo, id, requestHash, paymentHash],
    );
    return rows[0] && answerOf(rows[0]);
  }

  /** The owner's call was charged: its answer is kept (`undefined`: charged, answer not kept). */
  async answered(id: string, owner: string, answer: StoredAnswer | undefined): Promise<void> {
    await this.db.query(
      `UPDATE merchant_payment_answers SET state = $4, status = $5, headers = $6::jsonb, body = $7
       WHERE pay_to = $1 AND payment_id = $2 AND owner = $3`,
      [
        this.payTo,
        id,
        owner,
        answer ? "answered" : "unstored",
        answer?.status ?? null,
        answer ? JSON.stringify(answer.headers) : null,
        answer ? Buffer.from(answer.body).toString("base64") : null,
      ],
    );
  }

  /** The owner's call was not charged: the id is free for the same request again. */
  async release(id: string, owner: string): Promise<void> {
    await this.db.query(
      "DELETE FROM merchant_payment_answers WHERE pay_to = $1 AND payment_id = $2 AND owner = $3",
      [this.payTo, id, owner],
    );
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    await this.db.query("DELETE FROM merchant_payment_answers WHERE expires_at < now()");
  }
}

function answerOf(row: Row): StoredAnswer {
  const headers = typeof row.headers === "string" ? JSON.parse(row.headers) : (row.headers ?? []);
  return {
    status: row.status ?? 200,
    headers,
    body: new Uint8Array(Buffer.from(row.body ?? "", "base64")),
  };
}
