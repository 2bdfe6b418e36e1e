/**
 * x402's `exact` on the local Solana with the stock SDK only: `@x402/svm/exact/client` builds and signs the
 * buyer's transfer, `@x402/svm/exact/facilitator` verifies it (simulation included) and settles it as fee payer,
 * every call through the devnet's JSON-RPC. No project code is in the payment path; the merchant's token account
 * is opened by an ordinary associated-token-account transaction, as on mainnet.
 */

import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  type Rpc,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  type SolanaRpcApi,
} from "@solana/kit";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as ExactClient } from "@x402/svm/exact/client";
import { ExactSvmScheme as ExactFacilitator } from "@x402/svm/exact/facilitator";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../../../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  usdcAccountOf,
} from "../../../../src/chain/solana/devnet/index.ts";
import { openUsdcAccount, signerOf } from "../../../helpers/solana-devnet.ts";

const PRICE = 12_345n; // 0.012345 USDC

let devnet: SolanaDevnet;
// The devnet answers `requestAirdrop` as test clusters do, though it plays mainnet: typed with the full API.
let rpc: Rpc<SolanaRpcApi>;
let merchant: KeyPairSigner;
let buyer: KeyPairSigner;
let feePayer: KeyPairSigner;

const usdcOf = async (owner: string) =>
  BigInt((await rpc.getTokenAccountBalance((await usdcAccountOf(owner)) as Address).send()).value.amount);
const solOf = async (owner: string) => (await rpc.getBalance(owner as Address).send()).value;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 2 });
  rpc = createSolanaRpc(devnet.rpc) as Rpc<SolanaRpcApi>;
  buyer = await signerOf((devnet.buyers[0] as { secretKey: string }).secretKey);
  feePayer = await signerOf(devnet.feePayer.secretKey);
  merchant = await generateKeyPairSigner();
  // The merchant opens its USDC account itself, paying with airdropped SOL.
  const airdrop = await openUsdcAccount(rpc, merchant);
  expect((await rpc.getSignatureStatuses([airdrop as never]).send()).value[0]?.err).toBeNull();
  expect(await usdcOf(merchant.address)).toBe(0n);
});

afterAll(() => devnet?.stop());

function requirements(): PaymentRequirements {
  return {
    scheme: "exact",
    network: SOLANA_NETWORK,
    asset: SOLANA_USDC_MINT,
    amount: PRICE.toString(),
    payTo: merchant.address,
    maxTimeoutSeconds: 60,
    extra: { feePayer: feePayer.address },
  } as PaymentRequirements;
}

async function pay(): Promise<PaymentPayload> {
  const client = new ExactClient(buyer, { rpcUrl: devnet.rpc });
  const accepted = requirements();
  const created = await client.createPaymentPayload(2, accepted);
  return {
    ...created,
    accepted,
    resource: { url: "http://127.0.0.1/api/calc", description: "", mimeType: "" },
  } as PaymentPayload;
}

describe("the SDK's exact client and facilitator on the local Solana", () => {
  it("verifies and settles a payment: the buyer pays the price, the merchant gets it, the fee payer pays only the fee", async () => {
    const facilitator = new ExactFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: devnet.rpc }));
    const payment = await pay();
    const before = {
      buyer: await usdcOf(buyer.address),
      merchant: await usdcOf(merchant.address),
      fee: await solOf(feePayer.address),
    };

    const verified = await facilitator.verify(payment, requirements());
    expect(verified).toMatchObject({ isValid: true, payer: buyer.address });

    const settled = await facilitator.settle(payment, requirements());
    expect(settled).toMatchObject({ success: true, network: SOLANA_NETWORK, payer: buyer.address });
    expect(await usdcOf(buyer.address)).toBe(before.buyer - PRICE);
    expect(await usdcOf(merchant.address)).toBe(before.merchant + PRICE);

    const landed = await rpc
      .getTransaction(settled.transaction as never, { maxSupportedTransactionVersion: 0, encoding: "json" })
      .send();
    expect(landed?.meta?.err).toBeNull();
    const fee = landed?.meta?.fee as bigint;
    expect(fee).toBeGreaterThanOrEqual(5_000n);
    expect(await solOf(feePayer.address)).toBe(before.fee - fee);

    // The same payment again: the facilitator that settled it refuses it, and so does a fresh one (the chain has it).
    const again = await facilitator.settle(payment, requirements());
    expect(again).toMatchObject({ success: false, errorReason: "duplicate_settlement" });
    const fresh = new ExactFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: devnet.rpc }));
    // (The SDK logs the chain's refusal to the console; expected here, so kept out of the output.)
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const elsewhere = await fresh.settle(payment, requirements()).finally(() => quiet.mockRestore());
    expect(elsewhere).toMatchObject({ success: false, errorReason: "invalid_exact_svm_transaction_failed" });
    // What the chain said: the fully signed transaction, sent again, was already processed.
    const wire = await rpc
      .getTransaction(settled.transaction as never, { maxSupportedTransactionVersion: 0, encoding: "base64" })
      .send();
    const resent = rpc
      .sendTransaction(wire?.transaction[0] as never, { encoding: "base64", skipPreflight: true })
      .send();
    const refusal = await resent.then(
      () => null,
      (error) => error,
    );
    expect(refusal?.context?.__code).toBe(-32002);
    expect(refusal?.cause?.context?.__code).toBe(SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED);
    expect(await usdcOf(buyer.address)).toBe(before.buyer - PRICE);
    expect(await usdcOf(merchant.address)).toBe(before.merchant + PRICE);
  });

  it("shows the settled payment as an indexer reads it: the fee payer's signatures, then the parsed transaction", async () => {
    const facilitator = new ExactFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: devnet.rpc }));
    const payment = await pay();
    const settled = await facilitator.settle(payment, requirements());
    expect(settled.success).toBe(true);

    const [latest] = await rpc.getSignaturesForAddress(feePayer.address, { limit: 1 }).send();
    expect(latest).toMatchObject({
      signature: settled.transaction,
      err: null,
      confirmationStatus: "finalized",
    });
    expect(latest?.memo).toMatch(/^\[32\] [0-9a-f]{32}$/); // the SDK's nonce memo, as the validator sums it up
    expect(await rpc.getBlockTime(latest?.slot as bigint).send()).toBe(latest?.blockTime);

    const parsed = await rpc
      .getTransaction(settled.transaction as never, {
        maxSupportedTransactionVersion: 0,
        encoding: "jsonParsed",
      })
      .send();
    const message = parsed?.transaction.message;
    expect(message?.accountKeys[0]).toMatchObject({ pubkey: feePayer.address, signer: true, writable: true });
    const transfer = message?.instructions.find((ix) => "parsed" in ix && ix.program === "spl-token");
    expect(transfer).toMatchObject({
      parsed: {
        type: "transferChecked",
        info: {
          authority: buyer.address,
          mint: SOLANA_USDC_MINT,
          source: await usdcAccountOf(buyer.address),
          destination: await usdcAccountOf(merchant.address),
          tokenAmount: { amount: PRICE.toString(), decimals: 6n }, // kit reads every number as a bigint
        },
      },
    });
    expect(message?.instructions.some((ix) => "program" in ix && ix.program === "spl-memo")).toBe(true);
    const owners = (
      balances: readonly { owner?: string; uiTokenAmount: { amount: string } }[] | null | undefined,
    ) => Object.fromEntries((balances ?? []).map((b) => [b.owner, BigInt(b.uiTokenAmount.amount)]));
    const pre = owners(parsed?.meta?.preTokenBalances);
    const post = owners(parsed?.meta?.postTokenBalances);
    expect((pre[buyer.address] as bigint) - (post[buyer.address] as bigint)).toBe(PRICE);
    expect((post[merchant.address] as bigint) - (pre[merchant.address] as bigint)).toBe(PRICE);
    expect(parsed?.meta?.fee).toBe(
      (parsed?.meta?.preBalances[0] as bigint) - (parsed?.meta?.postBalances[0] as bigint),
    );
  });
});
