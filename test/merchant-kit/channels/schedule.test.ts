/**
 * The claim schedule's decisions, on the merchant's real channel store (PGlite and the PostgreSQL server)
 * with a facilitator that records what it is asked to submit, a clock and a gas price of the test's own: a
 * charge is claimed at the latest `maxUnclaimedSeconds` after it, whatever gas costs; everything once more
 * than `maxUnclaimedUsd` is owed or a payer starts a withdrawal; everything every interval while gas is cheap;
 * claims go in batches; claimed money is swept every settle interval; one process at a time. (The claims and
 * sweeps themselves, on a devnet: test/merchants/inference/channels.test.ts.)
 */
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import type { Channel } from "@x402/evm/batch-settlement/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Database, migrate } from "../../../src/common/db/index.ts";
import { ChannelSchedule } from "../../../src/merchant-kit/channels/schedule.ts";
import {
  type ChannelSettings,
  DEFAULT_CHANNEL_SETTINGS,
} from "../../../src/merchant-kit/channels/settings.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../src/merchant-kit/migrations.ts";
import { priceToAtomic } from "../../../src/merchant-kit/price.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";
import { gates } from "../../helpers/gates.ts";

const RECEIVER = "0x1111111111111111111111111111111111111111" as const;
const TOKEN = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as const;
const NETWORK = "eip155:8453" as const;
const GWEI = 1_000_000_000n;
const HOUR = 3_600_000;

/** A facilitator that submits nothing: it records each claim's channels and each sweep, and says done. */
function recordingFacilitator(hold?: () => Promise<void>) {
  const claims: string[][] = [];
  const settles: string[] = [];
  let failing = false;
  const client: FacilitatorClient = {
    verify: async () => ({ isValid: false, invalidReason: "not in this test" }),
    getSupported: async () => ({ kinds: [], extensions: [], signers: {} }),
    settle: async (payment: PaymentPayload): Promise<SettleResponse> => {
      await hold?.();
      if (failing) return { success: false, errorReason: "claim_failed", transaction: "", network: NETWORK };
      const payload = payment.payload as {
        type: string;
        claims?: { voucher: { channel: Channel["channelConfig"] } }[];
        receiver?: string;
      };
      if (payload.type === "claim") {
        claims.push((payload.claims ?? []).map((c) => computeChannelId(c.voucher.channel, NETWORK)));
        return { success: true, transaction: `0xclaim${claims.length}`, network: NETWORK };
      }
      settles.push(payload.receiver ?? "");
      return { success: true, transaction: `0xsettle${settles.length}`, network: NETWORK };
    },
  };
  return { client, claims, settles, fail: (on: boolean) => (failing = on) };
}

/** A channel of `RECEIVER` paid by the n-th payer, charged `charged` and claimed `claimed`. */
function channel(n: number, charged: bigint, claimed = 0n): Channel {
  const config = {
    payer: `0x${n.toString(16).padStart(40, "a")}` as `0x${string}`,
    payerAuthorizer: `0x${n.toString(16).padStart(40, "a")}` as `0x${string}`,
    receiver: RECEIVER,
    receiverAuthorizer: "0x3333333333333333333333333333333333333333" as const,
    token: TOKEN,
    withdrawDelay: 86_400,
    salt: `0x${"0".repeat(64)}` as `0x${string}`,
  };
  return {
    channelId: computeChannelId(config, NETWORK),
    channelConfig: config,
    chargedCumulativeAmount: charged.toString(),
    signedMaxClaimable: (charged + 1000n).toString(),
    signature: "0x",
    balance: "100000000",
    totalClaimed: claimed.toString(),
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

describe.each(DATABASE_KINDS)("the claim schedule on %s", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  let now = 0;
  let gasPrice = GWEI / 100n; // 0.01 gwei: below the default ceiling
  beforeAll(async () => {
    const opened = await openTestDatabase(kind);
    db = opened.db;
    close = opened.close;
    await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
  });
  afterAll(() => close?.());
  beforeEach(async () => {
    await db.exec("TRUNCATE merchant_channels, merchant_channel_schedule");
    now = 1_767_225_600_000; // 2026-01-01: a clock of its own, past any schedule row's zero
    gasPrice = GWEI / 100n;
  });

  const store = () => new ChannelStore(db, RECEIVER, () => now);
  /** Charges channel `n` `amount` more, at the test's clock. */
  const charge = async (n: number, amount: bigint) => {
    const c = channel(n, 0n);
    await store().updateChannel(c.channelId, (current) => ({
      ...(current ?? c),
      chargedCumulativeAmount: (BigInt((current ?? c).chargedCumulativeAmount) + amount).toString(),
    }));
    return c.channelId;
  };
  const scheduleWith = (facilitator: FacilitatorClient, settings: Partial<ChannelSettings> = {}) =>
    new ChannelSchedule({
      db,
      receiver: RECEIVER,
      facilitator,
      network: NETWORK,
      asset: { address: TOKEN, decimals: 6 },
      atomic: priceToAtomic,
      settings: { ...DEFAULT_CHANNEL_SETTINGS, ...settings },
      now: () => now,
      gasPrice: async () => gasPrice,
    });

  it("does nothing while nothing is owed", async () => {
    const f = recordingFacilitator();
    expect(await scheduleWith(f.client).tick()).toEqual({ idle: "nothing" });
    expect(f.claims).toEqual([]);
  });

  it("claims everything at the interval while gas is cheap, then sweeps it at the settle interval", async () => {
    const f = recordingFacilitator();
    const schedule = scheduleWith(f.client);
    const a = await charge(1, 1_000n);
    const b = await charge(2, 2_000n);
    const first = await schedule.tick();
    expect(first.claimed).toEqual({
      reason: "interval",
      channels: [a, b].sort(),
      transactions: ["0xclaim1"],
    });
    expect(first.settled).toBe("0xsettle1");
    expect(f.settles).toEqual([RECEIVER]);
    expect(await store().owed()).toEqual([]);
    // Charged again within the hour: not claimed until the interval, nor swept until the settle interval.
    now += 10 * 60_000;
    await charge(1, 500n);
    expect(await schedule.tick()).toEqual({});
    now += HOUR;
    const later = await schedule.tick();
    expect(later.claimed?.channels).toEqual([a]);
    expect(later.settled).toBeUndefined();
    now += 24 * HOUR;
    expect((await schedule.tick()).settled).toBe("0xsettle2");
    expect(await schedule.tick()).toEqual({ idle: "nothing" });
  });

  it("waits for cheaper gas, but claims a charge as old as allowed whatever gas costs", async () => {
    const f = recordingFacilitator();
    const schedule = scheduleWith(f.client);
    gasPrice = GWEI; // 1 gwei, above the 0.1 ceiling
    const old = await charge(1, 1_000n);
    now += HOUR;
    const young = await charge(2, 1_000n);
    expect(await schedule.tick()).toEqual({ waitedForGas: GWEI });
    expect(f.claims).toEqual([]);
    // Six hours after the first charge: that channel is due, the other waits.
    now += 5 * HOUR;
    const due = await schedule.tick();
    expect(due.claimed).toMatchObject({ reason: "deadline", channels: [old] });
    expect((await store().owed()).map((c) => c.channelId)).toEqual([young]);
    // Gas is cheap again: the rest goes at once (the interval had passed).
    gasPrice = GWEI / 100n;
    expect((await schedule.tick()).claimed).toMatchObject({ reason: "interval", channels: [young] });
  });

  it("claims everything once more than the ceiling is owed, or a payer withdraws, whatever gas costs", async () => {
    const f = recordingFacilitator();
    const schedule = scheduleWith(f.client, { maxUnclaimedUsd: "0.005" });
    gasPrice = 10n * GWEI;
    const a = await charge(1, 3_000n);
    expect(await schedule.tick()).toEqual({ waitedForGas: 10n * GWEI });
    const b = await charge(2, 3_000n);
    expect((await schedule.tick()).claimed).toMatchObject({ reason: "ceiling", channels: [a, b].sort() });
    // A withdrawal started on channel 3: claimed at once.
    const c = channel(3, 0n);
    await store().updateChannel(c.channelId, () => ({
      ...c,
      chargedCumulativeAmount: "10",
      withdrawRequestedAt: 1,
    }));
    expect((await schedule.tick()).claimed).toMatchObject({ reason: "deadline", channels: [c.channelId] });
  });

  it("claims in batches, each recorded as it lands; a failed claim is tried again at the next look", async () => {
    const f = recordingFacilitator();
    const schedule = scheduleWith(f.client, { claimBatch: 2 });
    const ids = [];
    for (let n = 1; n <= 5; n++) ids.push(await charge(n, 1_000n));
    f.fail(true);
    const failed = await schedule.tick();
    expect(failed.error).toMatch(/claim_failed/);
    expect(await store().owed()).toHaveLength(5);
    f.fail(false);
    const claimed = await schedule.tick();
    expect(claimed.claimed?.transactions).toEqual(["0xclaim1", "0xclaim2", "0xclaim3"]);
    expect(f.claims.map((batch) => batch.length)).toEqual([2, 2, 1]);
    expect(f.claims.flat().sort()).toEqual(ids.sort());
    expect(claimed.settled).toBe("0xsettle1");
  });

  it("lets one process at a time claim a wallet's channels", async () => {
    const gate = gates();
    const f = recordingFacilitator(() => gate.pass("claim"));
    await charge(1, 1_000n);
    const first = scheduleWith(f.client).tick();
    await gate.entered("claim");
    expect(await scheduleWith(f.client).tick()).toEqual({ idle: "leased" });
    gate.close();
    expect((await first).claimed?.channels).toHaveLength(1);
    expect(f.claims).toHaveLength(1);
  });
});
