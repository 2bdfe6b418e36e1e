/**
 * A merchant paid on Solana (issue 86 item 6), for real on the local Solana: the project's facilitator with
 * Solana configured, over HTTP, and a merchant host built from the settings as `serve` builds it
 * (X402M_SOLANA_RPC_URL, the facilitator's URL, a Solana wallet). The SDK's own SVM client (`ExactSvmScheme` on
 * an `x402Client`, `wrapFetchWithPayment`) pays: the merchant's USDC rises by the price, the buyer's falls by
 * it, the fee payer pays only the fee; the same payment sent again is refused; buyers paying at once are each
 * charged once. The guarantees as on the EVM chains: of two payments at once from a wallet that can afford one,
 * one is delivered and charged, on a plain route and on one that reserves the payer's funds before its work
 * (payments/ledger/svm-funds.ts); a refused call is never charged. A wallet holding USDC and not a lamport pays
 * with the SDK's client too, the facilitator paying the fee alone. x402 v1's own clients (`x402-fetch` 1.2.0 and
 * `x402-axios` 0.7.2, each with a Solana signer) pay the same routes through the kit's v1 front, one wallet the
 * same price twice (the devnet's blockhash moves with each block, so its second transaction is not its first).
 */
import { randomBytes } from "node:crypto";
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  type KeyPairSigner,
  type Rpc,
  type SolanaRpcApi,
} from "@solana/kit";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import axios from "axios";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSigner,
  decodeXPaymentResponse as decodeAxiosPaymentResponse,
  withPaymentInterceptor,
} from "x402-axios";
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchWithPaymentV1 } from "x402-fetch";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  usdcAccountOf,
} from "../../../src/chain/solana/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { type Listening, listen, listenWithUrl } from "../../../src/common/listen.ts";
import type { Facilitator } from "../../../src/facilitator/index.ts";
import { createSvmFacilitator } from "../../../src/facilitator/svm/facilitator.ts";
import { readSvmPayment } from "../../../src/facilitator/svm/transaction.ts";
import { merchantApp } from "../../../src/merchant-kit/app.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { configuredFacilitators } from "../../../src/services/merchants.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { GUARDED_ENDPOINTS, runs, TEST_ENDPOINTS, testMerchant } from "../../helpers/merchant.ts";
import { openUsdcAccount, signerOf, walletHolding, walletWithoutSol } from "../../helpers/solana-devnet.ts";

/** `/api/echo`'s price ($0.002), in USDC's 6 decimals. */
const PRICE = 2_000n;
/** `/api/model`'s ($0.001): a route that costs upstream, so reserves the payer's funds before its work. */
const MODEL_PRICE = 1_000n;
const BUYERS = 4;

let devnet: SolanaDevnet;
let rpc: Rpc<SolanaRpcApi>;
let facilitator: Facilitator;
let shop: Listening;
let owner: KeyPairSigner;
let db: Database;
const buyers: KeyPairSigner[] = [];
const closers: (() => Promise<void> | void)[] = [];

const usdcOf = async (who: string) =>
  BigInt((await rpc.getTokenAccountBalance((await usdcAccountOf(who)) as Address).send()).value.amount);
const solOf = async (who: string) => (await rpc.getBalance(who as Address).send()).value;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: BUYERS });
  closers.push(() => devnet.stop());
  rpc = createSolanaRpc(devnet.rpc) as Rpc<SolanaRpcApi>;
  for (const b of devnet.buyers) buyers.push(await signerOf(b.secretKey));
  // One database for the facilitator's ledger and the merchant's state (their tables apart): one to open, not two.
  const state = await openTestDatabase(LEDGER_KIND);
  closers.push(state.close);
  db = state.db;
  facilitator = await createSvmFacilitator({
    db: state.db,
    rpc: devnet.rpc,
    feePayerKey: devnet.feePayer.secretKey,
    pollingIntervalMs: 20,
  });
  closers.push(() => facilitator.close());
  const served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  closers.push(() => served.close());
  owner = await generateKeyPairSigner();
  await openUsdcAccount(rpc, owner);
  // The settings `serve` reads: Solana's RPC and the facilitator's URL; the host's Solana wallet beside its EVM one.
  const config = loadConfig({ env: { X402M_SOLANA_RPC_URL: devnet.rpc, X402M_FACILITATOR_URL: served.url } });
  const evm = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as `0x${string}`;
  shop = await listenWithUrl(
    async (url) =>
      (
        await merchantApp(
          {
            ...testMerchant(evm, url, [...TEST_ENDPOINTS, ...GUARDED_ENDPOINTS]),
            solanaPayTo: owner.address,
          },
          {
            services: { db: state.db, config },
            facilitator: configuredFacilitators(config.payments),
            payments: config.payments,
          },
        )
      ).fetch,
    "127.0.0.1",
    0,
  );
  closers.push(() => shop.close());
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** The SDK's SVM client paying as `buyer`. */
const svmClient = (buyer: KeyPairSigner) =>
  new x402Client().register(SOLANA_NETWORK, new ExactSvmScheme(buyer, { rpcUrl: devnet.rpc }));

/** A buyer's fetch that pays with the SDK's SVM client, and the payment headers it sent. */
function buyerFetch(buyer: KeyPairSigner) {
  const sent: string[] = [];
  const client = svmClient(buyer);
  const recording: typeof fetch = async (input, init) => {
    const header = new Request(input, init).headers.get("payment-signature");
    if (header) sent.push(header);
    return fetch(input, init);
  };
  return { pay: wrapFetchWithPayment(recording, client), sent };
}

describe("a merchant paid on Solana", () => {
  it("offers exact on Solana at the same price, with the facilitator's fee payer", async () => {
    const answer = await fetch(`${shop.url}/api/echo?text=hi`);
    expect(answer.status).toBe(402);
    const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
    expect(required.accepts).toContainEqual(
      expect.objectContaining({
        scheme: "exact",
        network: SOLANA_NETWORK,
        asset: SOLANA_USDC_MINT,
        amount: PRICE.toString(),
        payTo: owner.address,
        extra: expect.objectContaining({ feePayer: devnet.feePayer.address }),
      }),
    );
  });

  it("is paid by the SDK's SVM client once: the price moves, the fee payer pays only the fee, the same payment again is refused", async () => {
    const buyer = buyers[0] as KeyPairSigner;
    const before = {
      buyer: await usdcOf(buyer.address),
      owner: await usdcOf(owner.address),
      feePayer: await solOf(devnet.feePayer.address),
      runs: runs.get("/api/echo") ?? 0,
    };
    const { pay, sent } = buyerFetch(buyer);
    const paid = await pay(`${shop.url}/api/echo?text=sol`);
    expect(paid.status).toBe(200);
    // The handler is told who paid: the buyer's wallet, the owner of the USDC account it paid from.
    expect(await paid.json()).toEqual({ text: "sol", payer: buyer.address });
    expect(await usdcOf(buyer.address)).toBe(before.buyer - PRICE);
    expect(await usdcOf(owner.address)).toBe(before.owner + PRICE);
    const receipt = JSON.parse(
      Buffer.from(paid.headers.get("payment-response") as string, "base64").toString("utf8"),
    ) as { transaction: string; network: string };
    expect(receipt.network).toBe(SOLANA_NETWORK);
    const landed = await rpc
      .getTransaction(receipt.transaction as never, { maxSupportedTransactionVersion: 0, encoding: "json" })
      .send();
    expect(await solOf(devnet.feePayer.address)).toBe(before.feePayer - (landed?.meta?.fee as bigint));
    expect(runs.get("/api/echo")).toBe(before.runs + 1);

    // The very same payment again: refused, nothing moves, the handler does not run again.
    const again = await fetch(`${shop.url}/api/echo?text=sol`, {
      headers: { "payment-signature": sent[0] as string },
    });
    expect(again.status).toBe(402);
    expect(await usdcOf(owner.address)).toBe(before.owner + PRICE);
    expect(runs.get("/api/echo")).toBe(before.runs + 1);
  });

  it("charges buyers paying at once each once", async () => {
    const paying = buyers.slice(1);
    const before = await Promise.all(paying.map((b) => usdcOf(b.address)));
    const owned = await usdcOf(owner.address);
    const answers = await Promise.all(
      paying.map((b, i) => buyerFetch(b).pay(`${shop.url}/api/echo?text=at-once-${i}`)),
    );
    expect(answers.map((a) => a.status)).toEqual(paying.map(() => 200));
    const after = await Promise.all(paying.map((b) => usdcOf(b.address)));
    expect(after).toEqual(before.map((b) => b - PRICE));
    expect(await usdcOf(owner.address)).toBe(owned + PRICE * BigInt(paying.length));
  });

  it("is paid by a wallet holding USDC and no SOL at all: the facilitator pays the fee, the wallet's SOL stays 0", async () => {
    // Only ever sent USDC: another opened its token account, so the chain holds no account of the wallet itself.
    const wallet = await walletWithoutSol(rpc, buyers[1] as KeyPairSigner, PRICE);
    expect(await solOf(wallet.address)).toBe(0n);
    const before = { owner: await usdcOf(owner.address), feePayer: await solOf(devnet.feePayer.address) };
    const { pay, sent } = buyerFetch(wallet);
    const paid = await pay(`${shop.url}/api/echo?text=no-sol`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ text: "no-sol", payer: wallet.address });
    expect(await usdcOf(wallet.address)).toBe(0n);
    expect(await usdcOf(owner.address)).toBe(before.owner + PRICE);
    expect(await solOf(wallet.address)).toBe(0n);
    // The fee the signed transaction sets (5,000 lamports a signature and its priority fee), charged to the fee
    // payer by the chain, and nothing else taken from it: no rent, no transfer.
    const fee = readSvmPayment(decodePaymentSignatureHeader(sent[0] as string).payload)?.feeLamports;
    const receipt = JSON.parse(
      Buffer.from(paid.headers.get("payment-response") as string, "base64").toString("utf8"),
    ) as { transaction: string };
    const landed = await rpc
      .getTransaction(receipt.transaction as never, { maxSupportedTransactionVersion: 0, encoding: "json" })
      .send();
    expect(landed?.meta?.fee).toBe(fee);
    expect(await solOf(devnet.feePayer.address)).toBe(before.feePayer - (fee as bigint));
  });
});

/** `count` different payments of `path` signed at once by `wallet` with the SDK's SVM client, as headers. */
async function payments(wallet: KeyPairSigner, path: string, count: number): Promise<string[]> {
  const unpaid = await fetch(`${shop.url}${path}`);
  expect(unpaid.status).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
  const client = svmClient(wallet);
  const signed = await Promise.all(
    Array.from({ length: count }, () => client.createPaymentPayload(required)),
  );
  // The SDK's client pays on Solana, the only network it has a scheme for; each payment is its own (a fresh memo).
  expect(signed.map((p) => p.accepted.network)).toEqual(signed.map(() => SOLANA_NETWORK));
  return signed.map(encodePaymentSignatureHeader);
}

/** Sends each header to `path` at once: each answer's status and body. */
const sendAll = (path: string, headers: string[]) =>
  Promise.all(
    headers.map(async (header) => {
      const answer = await fetch(`${shop.url}${path}`, { headers: { "payment-signature": header } });
      return { status: answer.status, body: await answer.text() };
    }),
  );

/** The merchant's ledger rows of `payer`, by state. */
async function ledgerStates(payer: string): Promise<string[]> {
  const { rows } = await db.query<{ state: string }>(
    "SELECT state FROM merchant_payments WHERE payer = $1 ORDER BY state",
    [payer],
  );
  return rows.map((r) => r.state);
}

describe("a merchant paid on Solana keeps the guarantees", () => {
  it("delivers one of two payments at once from a wallet that can afford one, and charges only that one", async () => {
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, PRICE);
    const owned = await usdcOf(owner.address);
    const path = "/api/echo?text=one-of-two&delay=200";
    const answers = await sendAll(path, await payments(wallet, path, 2));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    expect(answers.find((a) => a.status === 402)?.body).not.toContain("one-of-two");
    expect(await usdcOf(wallet.address)).toBe(0n);
    expect(await usdcOf(owner.address)).toBe(owned + PRICE);
  });

  it("charges one payment sent twenty times at once once, and answers it once", async () => {
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, 10n * PRICE);
    const owned = await usdcOf(owner.address);
    const path = "/api/echo?text=twenty&delay=100";
    const [header] = await payments(wallet, path, 1);
    const answers = await sendAll(
      path,
      Array.from({ length: 20 }, () => header as string),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    // The others: the payment in use (409) or already settled (402), never anything else.
    expect(answers.filter((a) => a.status !== 200 && a.status !== 402 && a.status !== 409)).toEqual([]);
    expect(answers.filter((a) => a.body.includes("twenty"))).toHaveLength(1);
    expect(await usdcOf(wallet.address)).toBe(9n * PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + PRICE);
  });

  it("on a route that reserves funds, runs only the payment the wallet can afford: the other is refused before any work", async () => {
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, MODEL_PRICE);
    const owned = await usdcOf(owner.address);
    const ran = runs.get("/api/model") ?? 0;
    const path = "/api/model?delay=200";
    const answers = await sendAll(path, await payments(wallet, path, 2));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    const refused = JSON.parse(answers.find((a) => a.status === 402)?.body ?? "{}") as {
      error?: { code: string };
    };
    expect(refused.error?.code).toBe("insufficient_funds");
    expect(runs.get("/api/model")).toBe(ran + 1);
    expect(await usdcOf(wallet.address)).toBe(0n);
    expect(await usdcOf(owner.address)).toBe(owned + MODEL_PRICE);
    expect(await ledgerStates(wallet.address)).toEqual(["settled"]);
  });

  it("on a route that reserves funds, serves a wallet that can afford two twice in a row: its first payment, landed, is not counted again", async () => {
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, 2n * MODEL_PRICE);
    const owned = await usdcOf(owner.address);
    const { pay } = buyerFetch(wallet);
    expect((await pay(`${shop.url}/api/model`)).status).toBe(200);
    // Settled a moment ago: its row still counts unless Solana shows its transaction in the balance read.
    expect((await pay(`${shop.url}/api/model`)).status).toBe(200);
    expect(await usdcOf(wallet.address)).toBe(0n);
    expect(await usdcOf(owner.address)).toBe(owned + 2n * MODEL_PRICE);
  });

  it("never charges a refused call: the handler's refusal, its upstream's failure", async () => {
    const buyer = buyers[1] as KeyPairSigner;
    const before = { buyer: await usdcOf(buyer.address), owner: await usdcOf(owner.address) };
    const { pay } = buyerFetch(buyer);
    expect((await pay(`${shop.url}/api/model?fail=400`)).status).toBe(400);
    expect((await pay(`${shop.url}/api/model?fail=502`)).status).toBe(502);
    expect((await pay(`${shop.url}/api/fail`)).status).toBe(502);
    expect(await usdcOf(buyer.address)).toBe(before.buyer);
    expect(await usdcOf(owner.address)).toBe(before.owner);
  });
});

describe("a merchant paid on Solana by an x402 v1 client", () => {
  it("is paid by x402-fetch 1.2.0 with a Solana signer twice by one wallet: its 402's v1 body lists Solana, both charged and delivered, the same X-PAYMENT again is refused", async () => {
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, 3n * PRICE);
    const owned = await usdcOf(owner.address);
    const path = "/api/echo?text=v1";
    const unpaid = (await (await fetch(`${shop.url}${path}`)).json()) as {
      x402Version: number;
      accepts: unknown[];
    };
    expect(unpaid.x402Version).toBe(1);
    expect(unpaid.accepts).toContainEqual(
      expect.objectContaining({
        scheme: "exact",
        network: "solana",
        asset: SOLANA_USDC_MINT,
        maxAmountRequired: PRICE.toString(),
        payTo: owner.address,
        extra: expect.objectContaining({ feePayer: devnet.feePayer.address }),
      }),
    );
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const header = new Request(input, init).headers.get("x-payment");
      if (header) sent.push(header);
      return fetch(input, init);
    };
    // As x402-fetch's README pays on Solana: a Solana signer, and the RPC to build the transaction on.
    const pay = wrapFetchWithPaymentV1(recording, wallet, undefined, undefined, {
      svmConfig: { rpcUrl: devnet.rpc },
    });
    const paid = await pay(`${shop.url}${path}`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ text: "v1", payer: wallet.address });
    expect(decodeXPaymentResponse(paid.headers.get("x-payment-response") as string)).toMatchObject({
      success: true,
      network: "solana",
      payer: wallet.address,
    });
    expect(await usdcOf(wallet.address)).toBe(2n * PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + PRICE);

    // The same wallet pays the same price to the same merchant again: x402 v1's SVM client puts no nonce in its
    // transaction, but signs it on the chain's latest blockhash, which the first payment's block moved, so this
    // is a payment of its own, charged and delivered.
    const ran = runs.get("/api/echo") ?? 0;
    const twice = await pay(`${shop.url}${path}`);
    expect(twice.status, await twice.clone().text()).toBe(200);
    expect(await twice.json()).toEqual({ text: "v1", payer: wallet.address });
    expect(sent).toHaveLength(2);
    expect(sent[1]).not.toBe(sent[0]);
    expect(await usdcOf(wallet.address)).toBe(PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + 2n * PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 1);

    // The very same X-PAYMENT again: refused, nothing moves, the handler does not run again.
    const again = await fetch(`${shop.url}${path}`, { headers: { "x-payment": sent[0] as string } });
    expect(again.status).toBe(402);
    expect(await usdcOf(wallet.address)).toBe(PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + 2n * PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 1);
  });

  it("is paid by x402-axios 0.7.2 with a Solana signer from its createSigner twice by one wallet: both charged and delivered, the same X-PAYMENT again is refused", async () => {
    // x402-axios 0.7.2 pays SVM through its x402 0.7.3: `createSigner("solana", key)` makes a @solana/kit signer of
    // a base58 key, and its interceptor signs the compute budget and a `TransferChecked` (no Memo), as
    // x402-fetch 1.2.0 does, building it against `svmConfig.rpcUrl`.
    const signer = (await createSigner(
      "solana",
      getBase58Decoder().decode(randomBytes(32)),
    )) as KeyPairSigner;
    const wallet = await walletHolding(rpc, buyers[0] as KeyPairSigner, 3n * PRICE, signer);
    const owned = await usdcOf(owner.address);
    const ran = runs.get("/api/echo") ?? 0;
    const client = withPaymentInterceptor(axios.create(), wallet, undefined, {
      svmConfig: { rpcUrl: devnet.rpc },
    });
    const sent: string[] = [];
    client.interceptors.request.use((config) => {
      const header = config.headers?.["X-PAYMENT"];
      if (typeof header === "string") sent.push(header);
      return config;
    });
    const paid = await client.get(`${shop.url}/api/echo?text=axios`);
    expect(paid.status).toBe(200);
    expect(paid.data).toEqual({ text: "axios", payer: wallet.address });
    expect(decodeAxiosPaymentResponse(paid.headers["x-payment-response"] as string)).toMatchObject({
      success: true,
      network: "solana",
      payer: wallet.address,
    });
    expect(sent).toHaveLength(1);
    expect(await usdcOf(wallet.address)).toBe(2n * PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 1);

    // The very same X-PAYMENT again: refused, nothing moves, the handler does not run again.
    const again = await fetch(`${shop.url}/api/echo?text=axios`, {
      headers: { "x-payment": sent[0] as string },
    });
    expect(again.status).toBe(402);
    expect(await usdcOf(wallet.address)).toBe(2n * PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 1);

    // A second payment of the same price to the same merchant from the same wallet: x402 v1's SVM client signs no
    // Memo, but the first payment's block moved the blockhash it signs on, so this is a new transaction: charged,
    // delivered. (On the devnet's blockhash of old, fixed for its life, it was the first again and refused.)
    const second = await client.get(`${shop.url}/api/echo?text=axios-again`);
    expect(second.status).toBe(200);
    expect(second.data).toEqual({ text: "axios-again", payer: wallet.address });
    expect(sent).toHaveLength(2);
    expect(sent[1]).not.toBe(sent[0]);
    expect(await usdcOf(wallet.address)).toBe(PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + 2n * PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 2);

    // And its X-PAYMENT sent again is refused as the first's was, nothing charged.
    const replayed = await fetch(`${shop.url}/api/echo?text=axios-again`, {
      headers: { "x-payment": sent[1] as string },
    });
    expect(replayed.status).toBe(402);
    expect(await usdcOf(wallet.address)).toBe(PRICE);
    expect(await usdcOf(owner.address)).toBe(owned + 2n * PRICE);
    expect(runs.get("/api/echo")).toBe(ran + 2);
  });
});
