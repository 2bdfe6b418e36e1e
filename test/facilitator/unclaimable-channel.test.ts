/**
 * The deposit rule (docs/facilitator.md, "The receiverAuthorizer (decision)"): the facilitator relays a
 * batch-settlement deposit, at its own gas, only into a channel whose claims someone it knows can sign (its
 * receiverAuthorizer is the receiver, this facilitator, or an authorizer the receiver registered). A deposit
 * into a channel naming anyone else (`0x...0001`) is refused at /verify and /settle with
 * `unclaimable_channel` before anything is signed, by an open facilitator without a key and by a closed one
 * with a key for the payee or for any payee, and nothing reaches the chain: the facilitator's nonce, the
 * chain's height and the payer's USDC stay where they were, no ledger row, nothing charged to a key.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
} from "@x402/evm/batch-settlement/client";
import { getAddress, pad, parseEther } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_USDC, X402_BATCH_SETTLEMENT_ADDRESS as ESCROW } from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const USDC = getAddress(BASE_USDC);
const DELAY = 900;
/** Neither a receiver nor a facilitator: nobody can sign this channel's claims. */
const NOBODY = "0x0000000000000000000000000000000000000001";
const DEPOSIT = 1_000_000n;

const chain = useDevnet({ buyers: 2 });
let usdc: ReturnType<typeof usdcReader>;
let salt = 0;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);

const buyer = (i: number) => chain.devnet.buyers[i] as DevnetAccount;

/** A deposit the buyer signs, as a payer who chose the channel's receiverAuthorizer would send it. */
async function depositInto(payer: DevnetAccount, receiver: `0x${string}`, authorizer: string) {
  const config = {
    payer: payer.address,
    payerAuthorizer: payer.address,
    receiver,
    receiverAuthorizer: getAddress(authorizer),
    token: USDC,
    withdrawDelay: DELAY,
    salt: pad(`0x${(++salt).toString(16)}`, { size: 32 }),
  };
  const requirements: PaymentRequirements = {
    scheme: "batch-settlement",
    network: NETWORK,
    asset: USDC,
    amount: "1000",
    payTo: receiver,
    maxTimeoutSeconds: 300,
    extra: {
      name: "USD Coin",
      version: "2",
      receiverAuthorizer: config.receiverAuthorizer,
      withdrawDelay: DELAY,
    },
  };
  const signed = await createBatchSettlementEIP3009DepositPayload(
    privateKeyToAccount(payer.privateKey),
    2,
    requirements,
    config,
    DEPOSIT.toString(),
    "1000",
  );
  const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  return { payment, requirements, channelId: computeChannelId(config, NETWORK) };
}

type Deposit = Awaited<ReturnType<typeof depositInto>>;

async function post(facilitator: Facilitator, path: "/verify" | "/settle", d: Deposit, bearer?: string) {
  const response = await facilitator.app.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ x402Version: 2, paymentPayload: d.payment, paymentRequirements: d.requirements }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const balanceInEscrow = async (channelId: `0x${string}`) =>
  (
    (await usdc.client.readContract({
      address: ESCROW,
      abi: batchSettlementAbi,
      functionName: "channels",
      args: [channelId],
    })) as readonly [bigint, bigint]
  )[0];

/** What would move if anything were sent: the facilitator's nonce, the chain's height, the payer's USDC. */
async function chainState(payer: `0x${string}`) {
  const [nonce, height, balance] = await Promise.all([
    usdc.nonceOf(chain.devnet.facilitatorAccount.address),
    usdc.client.getBlockNumber(),
    usdc.balanceOf(payer),
  ]);
  return { nonce, height, balance };
}

/** `/verify` and `/settle` of `d` both refused as unclaimable, in the facilitator's wire shapes. */
async function expectUnclaimable(facilitator: Facilitator, d: Deposit, bearer?: string) {
  const verified = await post(facilitator, "/verify", d, bearer);
  expect(verified, JSON.stringify(verified.body)).toMatchObject({
    status: 200,
    body: { isValid: false, invalidReason: reasons.UNCLAIMABLE_CHANNEL },
  });
  expect(verified.body.invalidMessage).toContain(NOBODY);
  const settled = await post(facilitator, "/settle", d, bearer);
  expect(settled, JSON.stringify(settled.body)).toMatchObject({
    status: 200,
    body: { success: false, errorReason: reasons.UNCLAIMABLE_CHANNEL, transaction: "" },
  });
}

async function ledgerRows(db: Database, payer: `0x${string}`) {
  const { rows } = await db.query("SELECT state FROM facilitator_authorizations WHERE payer = $1", [
    payer.toLowerCase(),
  ]);
  return rows;
}

describe("a deposit into a channel nobody can claim", () => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openTestDatabase("pglite"));
  });
  afterAll(() => close?.());

  it("is refused by an open facilitator without a key, in process too, and nothing is mined", async () => {
    const authorizer = privateKeyToAccount(buyer(1).privateKey).address;
    const registered = newMerchant();
    const facilitator = await devnetFacilitator(chain.devnet, db, {
      channelAuthorizers: { [registered]: [authorizer] },
    });
    try {
      const receiver = newMerchant();
      const payer = buyer(0).address;
      const unclaimable = await depositInto(buyer(0), receiver, NOBODY);
      const before = await chainState(payer);

      await expectUnclaimable(facilitator, unclaimable);
      expect(await facilitator.settle(unclaimable.payment, unclaimable.requirements)).toMatchObject({
        success: false,
        errorReason: reasons.UNCLAIMABLE_CHANNEL,
      });
      // An authorizer registered for another receiver does not make this one's channel claimable.
      const elsewhere = await depositInto(buyer(0), receiver, authorizer);
      expect((await post(facilitator, "/verify", elsewhere)).body).toMatchObject({
        invalidReason: reasons.UNCLAIMABLE_CHANNEL,
      });
      // A facilitator that does not offer the role signs no claims: a channel naming it is nobody's either.
      const noRole = await devnetFacilitator(chain.devnet, db, { receiverAuthorizer: false });
      const named = await depositInto(buyer(0), receiver, chain.devnet.facilitatorAccount.address);
      expect((await post(noRole, "/settle", named)).body).toMatchObject({
        errorReason: reasons.UNCLAIMABLE_CHANNEL,
      });
      await noRole.close();
      expect(await chainState(payer)).toEqual(before);
      expect(await balanceInEscrow(unclaimable.channelId)).toBe(0n);
      expect(await ledgerRows(db, payer)).toEqual([]);

      // What it still relays, each into a channel someone can claim: the receiver's own authorizer, the
      // authorizer a receiver registered, in the options or later.
      const own = await depositInto(buyer(0), receiver, receiver);
      const theirs = await depositInto(buyer(0), registered, authorizer);
      const later = newMerchant();
      facilitator.channelAuthorizers.register(later, [authorizer]);
      const added = await depositInto(buyer(0), later, authorizer);
      for (const d of [own, theirs, added]) {
        expect((await post(facilitator, "/verify", d)).body).toMatchObject({ isValid: true });
        const settled = await post(facilitator, "/settle", d);
        expect(settled.body, JSON.stringify(settled.body)).toMatchObject({ success: true });
        expect(await balanceInEscrow(d.channelId)).toBe(DEPOSIT);
      }
      expect(await chainState(payer)).toMatchObject({
        nonce: before.nonce + 3,
        balance: before.balance - 3n * DEPOSIT,
      });
    } finally {
      await facilitator.close();
    }
  });

  it("is refused by a closed facilitator whatever key is sent, nothing mined and nothing charged", async () => {
    const facilitator = await devnetFacilitator(chain.devnet, db, { access: { open: false } });
    try {
      const receiver = newMerchant();
      const payer = buyer(1).address;
      const [forPayee, anyPayee] = await Promise.all([
        addKey(db, {
          name: "payee",
          payees: [receiver.toLowerCase()],
          gasBudgetWei: parseEther("1"),
          ratePerMinute: 100,
        }),
        addKey(db, { name: "any", payees: null, gasBudgetWei: parseEther("1"), ratePerMinute: 100 }),
      ]);
      const unclaimable = await depositInto(buyer(1), receiver, NOBODY);
      const before = await chainState(payer);

      for (const key of [forPayee.key, anyPayee.key]) await expectUnclaimable(facilitator, unclaimable, key);
      // Without a key the gate answers first, as for any payee it does not serve.
      expect(await post(facilitator, "/settle", unclaimable)).toMatchObject({
        status: 401,
        body: { errorReason: reasons.PAYEE_NOT_ALLOWED },
      });
      // Its own merchants' payees are refused such a deposit too.
      facilitator.gate.allow([receiver]);
      await expectUnclaimable(facilitator, unclaimable);

      expect(await chainState(payer)).toEqual(before);
      expect(await balanceInEscrow(unclaimable.channelId)).toBe(0n);
      expect(await ledgerRows(db, payer)).toEqual([]);
      const { rows } = await db.query("SELECT 1 FROM facilitator_key_charges WHERE key_id = ANY($1)", [
        [forPayee.apiKey.id, anyPayee.apiKey.id],
      ]);
      expect(rows).toEqual([]);
    } finally {
      await facilitator.close();
    }
  });
});
