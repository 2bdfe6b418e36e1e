/**
 * The claim schedule of a merchant with its own authorizer key, whose older channels name its facilitator's
 * authorizer (opened before the key was set): the channels naming its key are claimed in a batch it signs
 * (`claimAuthorizerSignature`, which any facilitator relays), the others in a batch without a signature, for
 * the authorizer they name to sign; one signature covers one batch, and the escrow checks it against each
 * channel's authorizer. The signature's signer is recovered here with the escrow's EIP-712 domain (the
 * escrow's own check: test/merchant-kit/channels/own-authorizer.test.ts, on a devnet).
 */
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, SettleResponse } from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, claimBatchTypes } from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import type { Channel } from "@x402/evm/batch-settlement/server";
import { recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_CHAIN_ID } from "../../../src/chain/base.ts";
import { type Database, migrate } from "../../../src/common/db/index.ts";
import { ChannelSchedule } from "../../../src/merchant-kit/channels/schedule.ts";
import { DEFAULT_CHANNEL_SETTINGS } from "../../../src/merchant-kit/channels/settings.ts";
import { ChannelStore } from "../../../src/merchant-kit/channels/storage.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../../../src/merchant-kit/migrations.ts";
import { priceToAtomic } from "../../../src/merchant-kit/price.ts";
import { openTestDatabase } from "../../helpers/db.ts";

const RECEIVER = "0x1111111111111111111111111111111111111111" as const;
const FACILITATORS = "0x3333333333333333333333333333333333333333" as const;
const TOKEN = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as const;
const NETWORK = "eip155:8453" as const;
const own = privateKeyToAccount(generatePrivateKey());

type Claimed = {
  claims: {
    voucher: { channel: Channel["channelConfig"]; maxClaimableAmount: string };
    totalClaimed: string;
  }[];
};

/** Records each claim's channels and signature, and says done. */
function recordingFacilitator() {
  const claims: { channels: string[]; signature?: `0x${string}`; payload: Claimed }[] = [];
  const client: FacilitatorClient = {
    verify: async () => ({ isValid: false, invalidReason: "not in this test" }),
    getSupported: async () => ({ kinds: [], extensions: [], signers: {} }),
    settle: async (payment: PaymentPayload): Promise<SettleResponse> => {
      const payload = payment.payload as Claimed & { type: string; claimAuthorizerSignature?: `0x${string}` };
      if (payload.type === "claim")
        claims.push({
          channels: payload.claims.map((c) => computeChannelId(c.voucher.channel, NETWORK)),
          signature: payload.claimAuthorizerSignature,
          payload,
        });
      return { success: true, transaction: `0x${payload.type}${claims.length}`, network: NETWORK };
    },
  };
  return { client, claims };
}

function channel(n: number, authorizer: `0x${string}`): Channel {
  const payer = `0x${n.toString(16).padStart(40, "a")}` as `0x${string}`;
  const config = {
    payer,
    payerAuthorizer: payer,
    receiver: RECEIVER,
    receiverAuthorizer: authorizer,
    token: TOKEN,
    withdrawDelay: 86_400,
    salt: `0x${"0".repeat(64)}` as `0x${string}`,
  };
  return {
    channelId: computeChannelId(config, NETWORK),
    channelConfig: config,
    chargedCumulativeAmount: "1000",
    signedMaxClaimable: "2000",
    signature: "0x",
    balance: "100000000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

let db: Database;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await openTestDatabase("pglite"));
  await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
});
afterAll(() => close?.());

describe("the claim schedule of a merchant with its own authorizer", () => {
  it("signs the claims of its own channels, and sends the older ones unsigned for their authorizer", async () => {
    const now = 1_767_225_600_000;
    const store = new ChannelStore(db, RECEIVER, () => now);
    const mine = [channel(1, own.address), channel(2, own.address)];
    const older = [channel(3, FACILITATORS)];
    for (const c of [...mine, ...older]) await store.updateChannel(c.channelId, () => c);
    const f = recordingFacilitator();
    const schedule = new ChannelSchedule({
      db,
      receiver: RECEIVER,
      facilitator: f.client,
      network: NETWORK,
      asset: { address: TOKEN, decimals: 6 },
      atomic: priceToAtomic,
      settings: DEFAULT_CHANNEL_SETTINGS,
      authorizer: own,
      now: () => now,
      gasPrice: async () => 0n,
    });
    const tick = await schedule.tick();
    expect(tick.error).toBeUndefined();
    expect(tick.claimed?.channels.sort()).toEqual([...mine, ...older].map((c) => c.channelId).sort());

    const signed = f.claims.find((c) => c.signature !== undefined);
    const unsigned = f.claims.find((c) => c.signature === undefined);
    expect(f.claims).toHaveLength(2);
    expect(signed?.channels.sort()).toEqual(mine.map((c) => c.channelId).sort());
    expect(unsigned?.channels).toEqual(older.map((c) => c.channelId));
    // The escrow's check: the batch's EIP-712 signature recovers to the channels' receiverAuthorizer.
    const recovered = await recoverTypedDataAddress({
      domain: {
        ...BATCH_SETTLEMENT_DOMAIN,
        chainId: BASE_CHAIN_ID,
        verifyingContract: BATCH_SETTLEMENT_ADDRESS,
      },
      types: claimBatchTypes,
      primaryType: "ClaimBatch",
      message: {
        claims: (signed?.payload.claims ?? []).map((c) => ({
          channelId: computeChannelId(c.voucher.channel, NETWORK),
          maxClaimableAmount: BigInt(c.voucher.maxClaimableAmount),
          totalClaimed: BigInt(c.totalClaimed),
        })),
      },
      signature: signed?.signature as `0x${string}`,
    });
    expect(recovered).toBe(own.address);
  });
});
