/**
 * What an operator is shown of a wallet's channels (channels/operator.ts): the open channels and their unclaimed
 * money as the store holds them, the metrics a scrape reads, and `/readyz`'s `channels` check, degraded (still ok)
 * once unclaimed money is past the claim schedule's margin before a withdrawal could take it, naming the merchant
 * and the amount. Channels are written through the store as the SDK writes them, on the store's own clock: one
 * whose charge is seven hours old stands for a host whose schedule did not run (a stopped process, a facilitator
 * refusing its claims), which no test can wait for.
 */
import type { Channel } from "@x402/evm/batch-settlement/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Database, migrate } from "../../../src/common/db/index.ts";
import { register, watchChannels } from "../../../src/common/metrics.ts";
import { lateChannels, openChannels } from "../../../src/merchant-kit/channels/operator.ts";
import { DEFAULT_CHANNEL_SETTINGS } from "../../../src/merchant-kit/channels/settings.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../src/merchant-kit/migrations.ts";
import type { WatchedFacilitator } from "../../../src/merchant-kit/payments/facilitators/watch.ts";
import { paymentReadiness } from "../../../src/merchant-kit/payments/readiness.ts";
import { openTestDatabase } from "../../helpers/db.ts";

const RECEIVER = "0x1111111111111111111111111111111111111111";
const HOUR = 3_600_000;

function channel(n: number, charged: string, claimed = "0"): Channel {
  return {
    channelId: `0x${n.toString(16).padStart(64, "0")}`,
    channelConfig: {
      payer: `0x${String(n).repeat(40)}` as `0x${string}`,
      payerAuthorizer: `0x${String(n).repeat(40)}` as `0x${string}`,
      receiver: RECEIVER,
      receiverAuthorizer: "0x3333333333333333333333333333333333333333",
      token: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      withdrawDelay: 86_400,
      salt: `0x${"0".repeat(64)}`,
    },
    chargedCumulativeAmount: charged,
    signedMaxClaimable: charged,
    signature: "0xsig",
    balance: "100000",
    totalClaimed: claimed,
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

let opened: Awaited<ReturnType<typeof openTestDatabase>>;
let db: Database;
beforeAll(async () => {
  opened = await openTestDatabase("pglite");
  db = opened.db;
  await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
});
afterAll(() => opened?.close());
beforeEach(async () => {
  await db.exec("TRUNCATE merchant_channels");
});

/** Writes `c` as the SDK does, the store's clock at `at`. */
const write = (c: Channel, at: number) =>
  new ChannelStore(db, RECEIVER, () => at).updateChannel(c.channelId, () => c);

const facilitator = { health: async () => ({ reachable: true }) } as unknown as WatchedFacilitator;
const check = () =>
  (
    paymentReadiness({
      db,
      facilitator,
      channels: { merchant: "utility", receiver: RECEIVER, settings: DEFAULT_CHANNEL_SETTINGS, decimals: 6 },
    }).channels as () => Promise<Record<string, unknown>>
  )();

describe("a wallet's channels, as the operator sees them", () => {
  it("is ready and not degraded while its unclaimed money is within the schedule's margin", async () => {
    const now = Date.now();
    await write(channel(1, "5000"), now - HOUR); // an hour unclaimed: the schedule claims at six
    await write(channel(2, "3000", "3000"), now - 10 * HOUR); // claimed in full: nothing at stake
    const [owing, claimed] = (await openChannels(db, [RECEIVER])) as [
      Awaited<ReturnType<typeof openChannels>>[0],
      Awaited<ReturnType<typeof openChannels>>[0],
    ];
    expect(owing).toMatchObject({
      unclaimed: 5000n,
      balance: 100000n,
      withdrawalEndsMs: now - HOUR + 86_400_000,
    });
    expect(claimed).toMatchObject({ unclaimed: 0n, withdrawalEndsMs: null });
    expect(lateChannels([owing, claimed], DEFAULT_CHANNEL_SETTINGS, now)).toEqual([]);
    expect(await check()).toEqual({ ok: true });
  });

  it("is degraded, still ok, naming the merchant and the money, once a charge is past the margin", async () => {
    const now = Date.now();
    await write(channel(1, "5000"), now - 7 * HOUR); // past the 6 h the schedule keeps to, and two looks
    await write(channel(2, "2000"), now - HOUR);
    const answer = await check();
    expect(answer).toMatchObject({ ok: true, degraded: true, unclaimed: "0.005", lateChannels: 1 });
    expect(answer.warning).toMatch(
      /^utility: \$0\.005 unclaimed in 1 channel\(s\), a withdrawal could take it in 17\.0 h/,
    );
  });

  it("shows each wallet's open channels and unclaimed dollars on a scrape", async () => {
    await write(channel(1, "5000"), Date.now());
    await write(channel(2, "2500", "500"), Date.now());
    const stop = watchChannels("utility", async () => {
      const open = await openChannels(db, [RECEIVER]);
      return { open: open.length, unclaimedUsd: Number(open.reduce((s, c) => s + c.unclaimed, 0n)) / 1e6 };
    });
    try {
      const text = await register.metrics();
      expect(text).toContain('x402m_channels_open{merchant="utility"} 2');
      expect(text).toContain('x402m_channels_unclaimed_usd{merchant="utility"} 0.007');
    } finally {
      stop();
    }
    expect(await register.metrics()).not.toContain('x402m_channels_open{merchant="utility"}');
  });
});
