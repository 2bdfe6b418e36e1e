/**
 * The kit checks a voucher natively (voucher.ts) with the SDK's verdicts: each payload of the table goes
 * through the SDK's own `onBeforeVerify` (a plain `BatchSettlementEvmScheme`) and the kit's
 * (`MerchantChannelScheme`) against the same stored channel, in memory and in the kit's store, and both
 * must answer alike (abort and its reason and message, or skip and its result, or nothing) and leave the
 * same context (the reservation's id aside, random in both). Each case also names the branch it reaches,
 * so that the table covers what it says. Deposits and refunds go to the SDK's hook: two rows check that.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import {
  BatchSettlementEvmScheme,
  type Channel,
  type ChannelStorage,
  InMemoryChannelStorage,
} from "@x402/evm/batch-settlement/server";
import { type Hex, pad } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { migrate } from "../../../src/common/db/index.ts";
import { MerchantChannelScheme } from "../../../src/merchant-kit/channels/scheme.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../src/merchant-kit/migrations.ts";
import { DATABASE_KINDS, openTestDatabase } from "../../helpers/db.ts";

const NETWORK = "eip155:8453";
const NOW = 1_800_000_000_000;
const PRICE = 1000n;
const RECEIVER = "0x1111111111111111111111111111111111111111";
const AUTHORIZER = "0x3333333333333333333333333333333333333333";
const OTHER = "0x4444444444444444444444444444444444444444";
const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ZERO = "0x0000000000000000000000000000000000000000";
const payer = privateKeyToAccount(`0x${"a1".repeat(32)}`);
const stranger = privateKeyToAccount(`0x${"b2".repeat(32)}`);

const requirements: PaymentRequirements = {
  scheme: "batch-settlement",
  network: NETWORK,
  asset: USDC,
  amount: PRICE.toString(),
  payTo: RECEIVER,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2", receiverAuthorizer: AUTHORIZER, withdrawDelay: 900 },
};

type Config = Channel["channelConfig"];
const config = (changes: Partial<Config> = {}): Config => ({
  payer: payer.address,
  payerAuthorizer: payer.address,
  receiver: RECEIVER,
  receiverAuthorizer: AUTHORIZER,
  token: USDC,
  withdrawDelay: 900,
  salt: pad("0x01", { size: 32 }),
  ...changes,
});

async function sign(channelId: Hex, amount: bigint, key = payer): Promise<Hex> {
  return key.signTypedData({
    domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: 8453, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
    types: voucherTypes,
    primaryType: "Voucher",
    message: { channelId, maxClaimableAmount: amount },
  });
}

/** A payload of `type` (a voucher unless said) over `channelConfig`, with a signature made by `key`. */
async function payload(
  amount: bigint | string,
  options: {
    channelConfig?: Config;
    channelId?: Hex;
    signature?: Hex;
    key?: typeof payer;
    type?: "voucher" | "refund" | "deposit";
  } = {},
): Promise<PaymentPayload> {
  const channelConfig = options.channelConfig ?? config();
  const channelId = options.channelId ?? (computeChannelId(channelConfig, NETWORK) as Hex);
  const signature = options.signature ?? (await sign(channelId, BigInt(amount), options.key));
  const voucher = { channelId, maxClaimableAmount: amount.toString(), signature };
  const extra =
    options.type === "deposit"
      ? {
          deposit: {
            amount: "100000",
            authorization: { validAfter: "0", validBefore: "9", salt: channelId },
          },
        }
      : {};
  return {
    x402Version: 2,
    accepted: requirements,
    payload: { type: options.type ?? "voucher", channelConfig, voucher, ...extra },
  };
}

/** The channel as stored after earlier requests: 5 charged, 1,000,000 deposited, synced just now. */
function stored(channelConfig = config(), changes: Partial<Channel> = {}): Channel {
  return {
    channelId: computeChannelId(channelConfig, NETWORK).toLowerCase(),
    channelConfig,
    chargedCumulativeAmount: "5000",
    signedMaxClaimable: "5000",
    signature: "0x",
    balance: "1000000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    onchainSyncedAt: NOW - 1000,
    lastRequestTimestamp: NOW - 1000,
    ...changes,
  };
}

const flipped = (signature: Hex): Hex =>
  `${signature.slice(0, 10)}${signature[10] === "0" ? "1" : "0"}${signature.slice(11)}` as Hex;
const asParity = (signature: Hex): Hex =>
  `${signature.slice(0, 130)}${signature.slice(130) === "1b" ? "00" : "01"}` as Hex;

interface Case {
  name: string;
  channel?: Channel;
  payload: () => Promise<PaymentPayload>;
  requirements?: PaymentRequirements;
  inMemoryOnly?: boolean;
  /** valid, an invalidReason or abort reason, or "facilitator" (no verdict: the facilitator verifies). */
  reaches: string;
}

const E = "invalid_batch_settlement_evm_";
const other = (changes: Partial<Config>) => config(changes);
const cases: Case[] = [
  { name: "a good voucher", channel: stored(), payload: () => payload(6000n), reaches: "valid" },
  {
    name: "a good voucher with v as parity (0/1)",
    channel: stored(),
    payload: async () =>
      payload(6000n, { signature: asParity(await sign(computeChannelId(config(), NETWORK) as Hex, 6000n)) }),
    reaches: "valid",
  },
  {
    name: "a bad signature (a byte of r changed)",
    channel: stored(),
    payload: async () =>
      payload(6000n, { signature: flipped(await sign(computeChannelId(config(), NETWORK) as Hex, 6000n)) }),
    reaches: `${E}voucher_signature`,
  },
  {
    name: "a signature that is not 65 bytes",
    channel: stored(),
    payload: () => payload(6000n, { signature: "0x1234" }),
    reaches: `${E}voucher_signature`,
  },
  {
    name: "a signature by another key",
    channel: stored(),
    payload: () => payload(6000n, { key: stranger }),
    reaches: `${E}voucher_signature`,
  },
  {
    name: "a signature of another amount",
    channel: stored(),
    payload: async () =>
      payload(6000n, { signature: await sign(computeChannelId(config(), NETWORK) as Hex, 7000n) }),
    reaches: `${E}voucher_signature`,
  },
  {
    name: "a channel id not matching the config",
    channel: stored(),
    payload: () =>
      payload(6000n, {
        channelId: computeChannelId(other({ salt: pad("0x02", { size: 32 }) }), NETWORK) as Hex,
      }),
    reaches: `${E}channel_id_mismatch`,
  },
  {
    name: "a channel id that is not 32 bytes of hex",
    channel: stored(),
    payload: () => payload(6000n, { channelId: "0x1234", signature: "0x" }),
    reaches: `${E}channel_id_invalid`,
  },
  {
    name: "a config the SDK cannot hash (a payer that is not an address)",
    payload: () =>
      payload(6000n, { channelConfig: other({ payer: "0x12" }), channelId: `0x${"ab".repeat(32)}` }),
    reaches: `${E}verification_state_unavailable`,
  },
  ...(
    [
      ["receiver", { receiver: OTHER }, "receiver_mismatch"],
      ["token", { token: OTHER }, "token_mismatch"],
      ["withdrawDelay", { withdrawDelay: 1800 }, "withdraw_delay_mismatch"],
      ["receiverAuthorizer", { receiverAuthorizer: OTHER }, "receiver_authorizer_mismatch"],
    ] as const
  ).map(
    ([field, changes, reason]): Case => ({
      name: `a config whose ${field} differs from the requirements`,
      channel: stored(other(changes)),
      payload: () => payload(6000n, { channelConfig: other(changes) }),
      reaches: `${E}${reason}`,
    }),
  ),
  {
    name: "requirements that name no receiver authorizer",
    channel: stored(),
    requirements: { ...requirements, extra: { name: "USD Coin", version: "2", withdrawDelay: 900 } },
    payload: () => payload(6000n),
    reaches: `${E}receiver_authorizer_mismatch`,
  },
  {
    name: "a withdrawal delay under the escrow's, the requirements naming none",
    channel: stored(other({ withdrawDelay: 60 })),
    requirements: {
      ...requirements,
      extra: { name: "USD Coin", version: "2", receiverAuthorizer: AUTHORIZER },
    },
    payload: () => payload(6000n, { channelConfig: other({ withdrawDelay: 60 }) }),
    reaches: `${E}withdraw_delay_out_of_range`,
  },
  {
    name: "a stored channel under another id than the voucher's",
    // The kit's store keeps a channel under its key: only the SDK's memory can hold this.
    inMemoryOnly: true,
    channel: { ...stored(), channelId: `0x${"cd".repeat(32)}` },
    payload: () => payload(6000n),
    reaches: `${E}channel_id_mismatch`,
  },
  {
    name: "maxClaimable above charged + price",
    channel: stored(),
    payload: () => payload(7000n),
    reaches: `${E}cumulative_amount_mismatch`,
  },
  {
    name: "maxClaimable below charged + price",
    channel: stored(),
    payload: () => payload(5500n),
    reaches: `${E}cumulative_amount_mismatch`,
  },
  {
    name: "maxClaimable under the price with no channel stored (its provisional channel remembered)",
    payload: () => payload(500n),
    reaches: `${E}cumulative_amount_mismatch`,
  },
  {
    name: "maxClaimable that is not a number",
    channel: stored(),
    payload: () => payload("6000", { signature: "0x" }).then(withAmount("six")),
    reaches: `${E}verification_state_unavailable`,
  },
  {
    name: "maxClaimable above the balance",
    channel: stored(config(), { balance: "5500" }),
    payload: () => payload(6000n),
    reaches: `${E}cumulative_exceeds_balance`,
  },
  {
    name: "maxClaimable equal to the claimed total",
    channel: stored(config(), { totalClaimed: "6000" }),
    payload: () => payload(6000n),
    reaches: `${E}cumulative_below_claimed`,
  },
  {
    name: "maxClaimable below the claimed total",
    channel: stored(config(), { totalClaimed: "9000" }),
    payload: () => payload(6000n),
    reaches: `${E}cumulative_below_claimed`,
  },
  {
    name: "maxClaimable beyond uint128 (viem cannot encode it)",
    channel: stored(config(), {
      chargedCumulativeAmount: (2n ** 128n).toString(),
      balance: (2n ** 130n).toString(),
    }),
    payload: () => payload(2n ** 128n + PRICE, { signature: `0x${"11".repeat(65)}` }),
    reaches: `${E}voucher_signature`,
  },
  {
    name: "stale on-chain state",
    channel: stored(config(), { onchainSyncedAt: NOW - 10 * 60 * 1000 }),
    payload: () => payload(6000n),
    reaches: "facilitator",
  },
  {
    name: "on-chain state never synced",
    channel: stored(config(), { onchainSyncedAt: undefined }),
    payload: () => payload(6000n),
    reaches: "facilitator",
  },
  {
    name: "no channel stored, the amount consistent",
    payload: () => payload(6000n),
    reaches: "facilitator",
  },
  {
    name: "a payer authorizer of zero (a smart wallet signs)",
    channel: stored(other({ payerAuthorizer: ZERO })),
    payload: () => payload(6000n, { channelConfig: other({ payerAuthorizer: ZERO }), signature: "0x" }),
    reaches: "facilitator",
  },
  {
    name: "a refund (zero charge), to the SDK's hook",
    channel: stored(),
    payload: () => payload(5000n, { type: "refund" }),
    reaches: "facilitator",
  },
  {
    name: "a refund with a mismatched amount, to the SDK's hook",
    channel: stored(),
    payload: () => payload(6000n, { type: "refund" }),
    reaches: `${E}cumulative_amount_mismatch`,
  },
  {
    name: "a deposit, to the SDK's hook",
    channel: stored(),
    payload: () => payload(6000n, { type: "deposit" }),
    reaches: "facilitator",
  },
];

function withAmount(amount: string) {
  return (p: PaymentPayload): PaymentPayload => {
    const inner = p.payload as { voucher: Record<string, unknown> };
    return { ...p, payload: { ...p.payload, voucher: { ...inner.voucher, maxClaimableAmount: amount } } };
  };
}

type Verdict = Awaited<ReturnType<NonNullable<BatchSettlementEvmScheme["schemeHooks"]["onBeforeVerify"]>>>;

function branchOf(verdict: Verdict): string {
  if (!verdict) return "facilitator";
  if ("abort" in verdict) return verdict.reason;
  return verdict.result.isValid ? "valid" : (verdict.result.invalidReason ?? "");
}

/** Runs `scheme`'s hook on a fresh copy of the payload; gives its verdict and the context it left. */
async function run(scheme: BatchSettlementEvmScheme, c: Case, template: PaymentPayload) {
  const paymentPayload = structuredClone(template);
  const verdict = await scheme.schemeHooks.onBeforeVerify?.({
    paymentPayload,
    requirements: c.requirements ?? requirements,
    declaredExtensions: {},
  });
  const context = scheme.readRequestContext(paymentPayload);
  if (context?.pendingId !== undefined) {
    expect(context.pendingId).toMatch(/^0x[0-9a-f]{64}$/);
    context.pendingId = "(random)";
  }
  return { verdict, context };
}

describe.each(["memory", ...DATABASE_KINDS])(
  "a voucher checked by the kit and by the SDK, stored in %s",
  (kind) => {
    let opened: Awaited<ReturnType<typeof openTestDatabase>> | undefined;
    let storage: () => Promise<ChannelStorage>;
    beforeAll(async () => {
      if (kind === "memory") {
        storage = async () => new InMemoryChannelStorage();
        return;
      }
      const test = await openTestDatabase(kind as (typeof DATABASE_KINDS)[number]);
      opened = test;
      await migrate(test.db, KIT_MODULE, KIT_MIGRATIONS);
      storage = async () => {
        await test.db.exec("TRUNCATE merchant_channels");
        return new ChannelStore(test.db, RECEIVER, () => NOW);
      };
    });
    afterAll(() => opened?.close());
    afterEach(() => {
      vi.restoreAllMocks();
    });

    const table = cases.filter((c) => kind === "memory" || !c.inMemoryOnly);
    it.each(table.map((c) => [c.name, c] as const))("%s", async (_, c) => {
      vi.spyOn(Date, "now").mockReturnValue(NOW);
      const store = await storage();
      if (c.channel) {
        const channel = c.channel;
        await store.updateChannel(computeChannelId(channel.channelConfig, NETWORK), () => channel);
      }
      const template = await c.payload();
      const sdk = await run(new BatchSettlementEvmScheme(RECEIVER, { storage: store }), c, template);
      const kit = await run(new MerchantChannelScheme(RECEIVER, { storage: store }), c, template);
      expect(branchOf(sdk.verdict)).toBe(c.reaches);
      expect(kit.verdict).toEqual(sdk.verdict);
      expect(kit.context).toEqual(sdk.context);
    });
  },
);
