/**
 * The merchant's channel store (the SDK's `ChannelStorage` on PostgreSQL and PGlite): what the SDK writes
 * comes back as it wrote it; `updateChannel` is atomic per channel across processes (a second pool on the
 * same server schema stands for a second process); a channel's charges owed are dated; inside a writing
 * call's transaction the channel's change commits and rolls back with it; a failure is noted on the request.
 */
import type { Channel } from "@x402/evm/batch-settlement/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Database, migrate, openDatabase } from "../../../src/common/db/index.ts";
import { channelRequest, inChannelRequest } from "../../../src/merchant-kit/channels/context.ts";
import { ChannelStore, releaseCrashedReservations } from "../../../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../src/merchant-kit/migrations.ts";
import { openWriteUnit } from "../../../src/merchant-kit/payments/ledger/write-unit.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";

const RECEIVER = "0x1111111111111111111111111111111111111111";
const OTHER = "0x2222222222222222222222222222222222222222";
const PAYER = "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/** A channel as the SDK's server writes one after a deposit. */
function channel(n: number, receiver = RECEIVER, changes: Partial<Channel> = {}): Channel {
  return {
    channelId: `0x${n.toString(16).padStart(64, "0")}`,
    channelConfig: {
      payer: "0xAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAa",
      payerAuthorizer: "0xAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAa",
      receiver: receiver as `0x${string}`,
      receiverAuthorizer: "0x3333333333333333333333333333333333333333",
      token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      withdrawDelay: 86_400,
      salt: `0x${"0".repeat(64)}`,
    },
    chargedCumulativeAmount: "1000",
    signedMaxClaimable: "2000",
    signature: "0xsig",
    balance: "100000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: 1_700_000_000_123,
    lastRequestTimestamp: 1_700_000_000_456,
    ...changes,
  };
}

/** The SDK's callback that charges `amount` on top of what is there. */
const charge = (amount: bigint) => (current: Channel | undefined) =>
  current && {
    ...current,
    chargedCumulativeAmount: (BigInt(current.chargedCumulativeAmount) + amount).toString(),
  };

describe.each(DATABASE_KINDS)("the channel store on %s", (kind) => {
  let opened: Awaited<ReturnType<typeof openTestDatabase>>;
  let db: Database;
  let now = 1_000_000;
  const store = () => new ChannelStore(db, RECEIVER, () => now);
  beforeAll(async () => {
    opened = await openTestDatabase(kind);
    db = opened.db;
    await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
  });
  afterAll(() => opened?.close());
  beforeEach(async () => {
    await db.exec("TRUNCATE merchant_channels");
  });

  it("gives back what the SDK wrote, its reservation included, and lists a receiver's channels only", async () => {
    const s = store();
    const pending = { pendingId: "p1", signedMaxClaimable: "3000", expiresAt: 1_700_000_100_000 };
    const written = channel(1, RECEIVER, { pendingRequest: pending });
    expect(await s.updateChannel(written.channelId, () => written)).toEqual({
      channel: written,
      status: "updated",
    });
    expect(await s.get(written.channelId.toUpperCase().replace("0X", "0x"))).toEqual(written);
    const { onchainSyncedAt: _, ...unsynced } = channel(2);
    await s.updateChannel(unsynced.channelId, () => unsynced);
    await new ChannelStore(db, OTHER).updateChannel(channel(3, OTHER).channelId, () => channel(3, OTHER));
    expect((await s.list()).map((c) => c.channelId)).toEqual([written.channelId, unsynced.channelId]);
    expect(await s.get(unsynced.channelId)).toEqual(unsynced);
  });

  it("leaves a channel as it is when the callback says so, and deletes it when it returns nothing", async () => {
    const s = store();
    const c = channel(4);
    expect(await s.updateChannel(c.channelId, (current) => current)).toEqual({
      channel: undefined,
      status: "unchanged",
    });
    await s.updateChannel(c.channelId, () => c);
    expect((await s.updateChannel(c.channelId, (current) => current)).status).toBe("unchanged");
    expect(await s.updateChannel(c.channelId, () => undefined)).toEqual({
      channel: undefined,
      status: "deleted",
    });
    expect(await s.get(c.channelId)).toBeUndefined();
  });

  it("serialises updates of one channel across processes: 60 charges at once, none lost", async () => {
    const second =
      kind === "postgres"
        ? await openDatabase({ pgliteDir: opened.options.pgliteDir, databaseUrl: opened.options.databaseUrl })
        : db;
    try {
      const c = channel(5, RECEIVER, { chargedCumulativeAmount: "0" });
      await store().updateChannel(c.channelId, () => c);
      const stores = [store(), new ChannelStore(second, RECEIVER)];
      // A fresh channel too: its first writers race to create the row.
      const fresh = channel(6, RECEIVER, { chargedCumulativeAmount: "0" });
      await Promise.all(
        Array.from({ length: 60 }, (_, i) => [
          (stores[i % 2] as ChannelStore).updateChannel(c.channelId, charge(7n)),
          (stores[i % 2] as ChannelStore).updateChannel(fresh.channelId, (current) =>
            current ? (charge(1n)(current) as Channel) : fresh,
          ),
        ]).flat(),
      );
      expect((await store().get(c.channelId))?.chargedCumulativeAmount).toBe(String(60 * 7));
      expect((await store().get(fresh.channelId))?.chargedCumulativeAmount).toBe("59");
    } finally {
      if (second !== db) await second.close();
    }
  });

  it("dates a channel's unclaimed charges from the first, until they are claimed", async () => {
    const s = store();
    now = 5_000;
    const c = channel(7, RECEIVER, { chargedCumulativeAmount: "0" });
    await s.updateChannel(c.channelId, () => c);
    expect(await s.owed()).toEqual([]);
    now = 6_000;
    await s.updateChannel(c.channelId, charge(100n));
    now = 9_000;
    await s.updateChannel(c.channelId, charge(50n));
    expect(await s.owed()).toEqual([
      { channelId: c.channelId, owed: 150n, since: 6_000, withdrawing: false },
    ]);
    now = 10_000;
    await s.updateChannel(c.channelId, (current) => current && { ...current, totalClaimed: "150" });
    expect(await s.owed()).toEqual([]);
    now = 12_000;
    await s.updateChannel(
      c.channelId,
      (current) => current && { ...(charge(1n)(current) as Channel), withdrawRequestedAt: 99 },
    );
    expect(await s.owed()).toEqual([{ channelId: c.channelId, owed: 1n, since: 12_000, withdrawing: true }]);
  });

  it("writes a channel's charge inside the writing call's transaction: committed or rolled back with it", async () => {
    const s = store();
    const c = channel(8, RECEIVER, { chargedCumulativeAmount: "0" });
    await s.updateChannel(c.channelId, () => c);
    for (const commit of [false, true]) {
      const unit = await openWriteUnit(db);
      await inChannelRequest(async () => {
        (channelRequest() as { tx?: Database }).tx = unit.db;
        await s.updateChannel(c.channelId, charge(10n));
        // Read in the same transaction: the charge is there.
        expect((await s.get(c.channelId))?.chargedCumulativeAmount).toBe("10");
      });
      await unit.finish(commit);
    }
    // Rolled back first, then committed: one charge, not two.
    expect((await s.get(c.channelId))?.chargedCumulativeAmount).toBe("10");
  });

  it("notes a failed update on the request, which then withholds its answer", async () => {
    const s = store();
    const c = channel(9);
    await s.updateChannel(c.channelId, () => c);
    await inChannelRequest(async () => {
      await expect(
        s.updateChannel(c.channelId, () => ({ ...c, chargedCumulativeAmount: "not a number" })),
      ).rejects.toThrow();
      expect(channelRequest()?.unsaved).toBeDefined();
    });
    expect((await s.get(c.channelId))?.chargedCumulativeAmount).toBe("1000");
  });

  it(`${kind === "pglite" ? "holds a voucher's reservation in the process" : "writes a voucher's reservation"}, and charges it in one conditional UPDATE`, async () => {
    const sent: string[] = [];
    const counting: Database = {
      ...db,
      query: (sql, params) => {
        sent.push(sql.trim().split(/\s+/)[0] as string);
        return db.query(sql, params);
      },
    };
    const s = new ChannelStore(counting, RECEIVER);
    const c = channel(11, RECEIVER, { chargedCumulativeAmount: "1000", signedMaxClaimable: "1000" });
    await s.updateChannel(c.channelId, () => c);
    sent.length = 0;
    const pendingRequest = { pendingId: "r1", signedMaxClaimable: "2000", expiresAt: Date.now() + 60_000 };
    const reserved = await s.updateChannel(
      c.channelId,
      (current) => current && { ...current, signedMaxClaimable: "2000", signature: "0xv2", pendingRequest },
    );
    expect(reserved.status).toBe("updated");
    // Written after the last write of this process without reading the row first.
    expect(sent).toEqual(kind === "pglite" ? [] : ["UPDATE"]);
    // Another store of the process sees it: a second request on the channel finds it busy.
    expect((await new ChannelStore(counting, RECEIVER).get(c.channelId))?.pendingRequest).toEqual(
      pendingRequest,
    );
    const { rows } = await db.query<{ pending_id: string | null }>(
      "SELECT pending_id FROM merchant_channels WHERE channel_id = $1",
      [c.channelId],
    );
    // PGlite has no other process: the row need not say so (and a crash takes the reservation along).
    expect(rows[0]?.pending_id).toBe(kind === "pglite" ? null : "r1");
    sent.length = 0;
    const charged = await s.updateChannel(c.channelId, (current) =>
      current?.pendingRequest?.pendingId === "r1"
        ? { ...current, chargedCumulativeAmount: "2000", pendingRequest: undefined }
        : current,
    );
    expect(charged.status).toBe("updated");
    expect(sent).toEqual(["UPDATE"]);
    expect(await s.get(c.channelId)).toMatchObject({ chargedCumulativeAmount: "2000", signature: "0xv2" });
    expect((await s.get(c.channelId))?.pendingRequest).toBeUndefined();
  });

  /** Charges `amount` on each channel, each as a request of its own carrying its ledger row, all at once. */
  async function chargeTogether(
    s: ChannelStore,
    charges: { channel: Channel; amount: bigint; nonce: string }[],
  ) {
    return Promise.allSettled(
      charges.map(({ channel: c, amount, nonce }) =>
        inChannelRequest(async () => {
          const request = channelRequest() as NonNullable<ReturnType<typeof channelRequest>>;
          request.ledger = { payer: PAYER, nonce, resource: "https://a.test/x", validBefore: 2e9, amount };
          try {
            return await s.updateChannel(c.channelId, charge(amount));
          } finally {
            expect(request.unsaved !== undefined).toBe(request.ledger.written !== true);
          }
        }),
      ),
    );
  }

  const ledgerRows = async () =>
    (
      await db.query<{ nonce: string; state: string }>(
        "SELECT nonce, state FROM merchant_payments ORDER BY nonce",
      )
    ).rows.map((r) => `${r.nonce}:${r.state}`);

  it("charges vouchers of channels made together in one statement, each only at its own version", async () => {
    await db.exec("TRUNCATE merchant_payments");
    const sent: string[] = [];
    const counting: Database = {
      ...db,
      query: (sql, params) => {
        sent.push(sql.trim().split(/\s+/).slice(0, 3).join(" "));
        return db.query(sql, params);
      },
    };
    const s = new ChannelStore(counting, RECEIVER);
    const channels = Array.from({ length: 8 }, (_, i) =>
      channel(20 + i, RECEIVER, { chargedCumulativeAmount: "0" }),
    );
    for (const c of channels) await s.updateChannel(c.channelId, () => c);
    // One channel changed behind the store's back (another process): its kept version is stale.
    const stale = channels[3] as Channel;
    await db.query("UPDATE merchant_channels SET charged = 500 WHERE channel_id = $1", [stale.channelId]);
    sent.length = 0;
    const results = await chargeTogether(
      s,
      channels.map((c, i) => ({ channel: c, amount: 10n, nonce: `channel:${i}` })),
    );
    expect(results.every((r) => r.status === "fulfilled" && r.value.status === "updated")).toBe(true);
    // One statement for the eight; the stale one read again and charged alone, on what is there.
    expect(sent).toEqual(["WITH t AS", "SELECT channel_id, config,", "WITH charged AS"]);
    for (const c of channels) {
      expect((await store().get(c.channelId))?.chargedCumulativeAmount).toBe(c === stale ? "510" : "10");
    }
    expect(await ledgerRows()).toEqual(channels.map((_, i) => `channel:${i}:settled`));
  });

  it("fails only the voucher whose own values the database refuses, in a group as alone", async () => {
    await db.exec("TRUNCATE merchant_payments");
    const s = store();
    const channels = Array.from({ length: 4 }, (_, i) =>
      channel(30 + i, RECEIVER, { chargedCumulativeAmount: "0" }),
    );
    for (const c of channels) await s.updateChannel(c.channelId, () => c);
    // A ledger row already there: the second charge of that key breaks the ledger's primary key.
    await db.query(
      `INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state)
       VALUES ($1, 'channel:taken', 'r', to_timestamp(2e9), 1, 'settled')`,
      [PAYER],
    );
    const results = await chargeTogether(s, [
      { channel: channels[0] as Channel, amount: 10n, nonce: "channel:a" },
      { channel: channels[1] as Channel, amount: 10n, nonce: "channel:taken" },
      { channel: channels[2] as Channel, amount: 10n ** 80n, nonce: "channel:c" },
      { channel: channels[3] as Channel, amount: 10n, nonce: "channel:d" },
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    const charged = await Promise.all(
      channels.map(async (c) => (await store().get(c.channelId))?.chargedCumulativeAmount),
    );
    expect(charged).toEqual(["10", "0", "0", "10"]);
    expect(await ledgerRows()).toEqual(["channel:a:settled", "channel:d:settled", "channel:taken:settled"]);
  });

  it("fails every voucher of a group the database fails: none charged, each request told", async () => {
    await db.exec("TRUNCATE merchant_payments");
    let failing = false;
    const flaky: Database = {
      ...db,
      query: (sql, params) =>
        failing && sql.trim().startsWith("WITH t AS")
          ? Promise.reject(new Error("Connection terminated unexpectedly"))
          : db.query(sql, params),
    };
    const s = new ChannelStore(flaky, RECEIVER);
    const channels = Array.from({ length: 4 }, (_, i) =>
      channel(40 + i, RECEIVER, { chargedCumulativeAmount: "0" }),
    );
    for (const c of channels) await s.updateChannel(c.channelId, () => c);
    failing = true;
    const results = await chargeTogether(
      s,
      channels.map((c, i) => ({ channel: c, amount: 10n, nonce: `channel:f${i}` })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(4).fill("rejected"));
    for (const c of channels) expect((await store().get(c.channelId))?.chargedCumulativeAmount).toBe("0");
    expect(await ledgerRows()).toEqual([]);
  });

  it(`${kind === "pglite" ? "gives back" : "keeps"} the reservations left in the store when a process starts`, async () => {
    const s = store();
    const pending = { pendingId: "p9", signedMaxClaimable: "3000", expiresAt: Date.now() + 60_000 };
    const c = channel(10, RECEIVER, { pendingRequest: pending });
    await s.updateChannel(c.channelId, () => c);
    expect(await releaseCrashedReservations(db)).toBe(kind === "pglite" ? 1 : 0);
    expect((await s.get(c.channelId))?.pendingRequest).toEqual(kind === "pglite" ? undefined : pending);
  });
});
