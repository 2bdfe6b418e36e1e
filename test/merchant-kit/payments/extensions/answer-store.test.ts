/**
 * The store of answers bought with payment ids (payments/extensions/answer-store.ts), on each database kind: one claim
 * per id, a kept answer given back byte for byte, an id bound to its payer and request, given back when
 * nothing was charged, taken over by the same request once a crashed claim's lease has passed (never by
 * another), and free again once it has expired.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, migrate } from "../../../../src/common/db/index.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../../src/merchant-kit/migrations.ts";
import {
  AnswerStore,
  type ClaimRequest,
} from "../../../../src/merchant-kit/payments/extensions/answer-store.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../../helpers/db.ts";

describe.each(DATABASE_KINDS)("the answers kept for payment ids on %s", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  let store: AnswerStore;
  let n = 0;
  beforeAll(async () => {
    const opened = await openTestDatabase(kind);
    ({ db, close } = opened);
    await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
    store = new AnswerStore(db, "0x00000000000000000000000000000000000000aa");
  });
  afterAll(() => close?.());

  const claim = (over: Partial<ClaimRequest> = {}): ClaimRequest => ({
    id: `pay_${++n}_0123456789abcdef`,
    payer: "0xpayer",
    requestHash: "hash-a",
    paymentHash: `payment-${n}`,
    owner: `owner-${n}`,
    leaseSeconds: 90,
    ttlSeconds: 3600,
    ...over,
  });

  it("gives an id to one request, and its kept answer to the same request after", async () => {
    const first = claim();
    expect(await store.claim(first)).toEqual({ kind: "owner" });
    const retry = { ...first, owner: "another" };
    expect(await store.claim(retry)).toEqual({ kind: "running" });
    const body = new Uint8Array([0, 1, 2, 255, 10]);
    await store.answered(first.id, first.owner, {
      status: 201,
      headers: [["content-type", "application/octet-stream"]],
      body,
    });
    expect(await store.claim(retry)).toEqual({
      kind: "answered",
      answer: { status: 201, headers: [["content-type", "application/octet-stream"]], body },
    });
    // The very payment sent again, for the same request only.
    expect(await store.resent(first.id, "hash-a", first.paymentHash)).toMatchObject({ status: 201, body });
    expect(await store.resent(first.id, "hash-b", first.paymentHash)).toBeUndefined();
    expect(await store.resent(first.id, "hash-a", "another payment")).toBeUndefined();
  });

  it("refuses the id to another request or another payer, and to a retry once its answer was not kept", async () => {
    const first = claim();
    await store.claim(first);
    expect(await store.claim({ ...first, owner: "x", requestHash: "hash-b" })).toEqual({ kind: "conflict" });
    expect(await store.claim({ ...first, owner: "x", payer: "0xother" })).toEqual({ kind: "conflict" });
    await store.answered(first.id, first.owner, undefined);
    expect(await store.claim({ ...first, owner: "x" })).toEqual({ kind: "unstored" });
  });

  it("gives an uncharged claim's id back, to any request; only its owner can", async () => {
    const first = claim();
    await store.claim(first);
    await store.release(first.id, "not its owner");
    expect(await store.claim({ ...first, owner: "x", requestHash: "hash-b" })).toEqual({ kind: "conflict" });
    await store.release(first.id, first.owner);
    expect(await store.claim({ ...first, owner: "x", requestHash: "hash-b" })).toEqual({ kind: "owner" });
  });

  it("lets the same request take over a claim whose lease has passed (its process crashed), not another", async () => {
    // A lease that passed a second ago: one of 0 s ends at the claim's now(), which PGlite's clock (milliseconds)
    // gives the next statement too when both fall in one millisecond, and a lease at now() has not passed.
    const first = claim({ leaseSeconds: -1 });
    await store.claim(first);
    expect(await store.claim({ ...first, owner: "y", requestHash: "hash-b" })).toEqual({ kind: "conflict" });
    expect(await store.claim({ ...first, owner: "x", leaseSeconds: 90 })).toEqual({ kind: "owner" });
    // The crashed owner's late answer is not written over the new owner's claim.
    await store.answered(first.id, first.owner, { status: 200, headers: [], body: new Uint8Array() });
    expect(await store.claim({ ...first, owner: "z" })).toEqual({ kind: "running" });
  });

  it("frees an id once it has expired", async () => {
    // Expired a second ago, not at the claim's now() (the lease above says why).
    const first = claim({ ttlSeconds: -1 });
    await store.claim(first);
    await store.answered(first.id, first.owner, undefined);
    expect(await store.claim({ ...first, owner: "x", requestHash: "hash-b", ttlSeconds: 3600 })).toEqual({
      kind: "owner",
    });
  });
});
