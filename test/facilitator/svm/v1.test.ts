/**
 * x402 v1 on Solana through the project's facilitator (issue 86): an `x402-hono` 1.1.0 server selling on `solana`
 * as its README starts one (`paymentMiddleware(payTo, routes, {url})`, which reads the fee payer from the
 * facilitator's `/supported`), paid by `x402-fetch` 1.2.0 with a Solana signer. The v1 payment is settled as the v2
 * one it is: once, the same `X-PAYMENT` again refused.
 */
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  type Rpc,
  type SolanaRpcApi,
} from "@solana/kit";
import type { SupportedResponse } from "@x402/core/types";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeXPaymentResponse, wrapFetchWithPayment } from "x402-fetch";
import { paymentMiddleware } from "x402-hono";
import { SOLANA_NETWORK } from "../../../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  usdcAccountOf,
} from "../../../src/chain/solana/devnet/index.ts";
import { type Listening, listen } from "../../../src/common/listen.ts";
import type { Facilitator } from "../../../src/facilitator/index.ts";
import { createSvmFacilitator } from "../../../src/facilitator/svm/facilitator.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { openUsdcAccount, signerOf, walletHolding } from "../../helpers/solana-devnet.ts";

/** `$0.001` in USDC's 6 decimals. */
const PRICE = 1_000n;
const WEATHER = { city: "Lisbon", temperature: 21 };

let devnet: SolanaDevnet;
let rpc: Rpc<SolanaRpcApi>;
let facilitator: Facilitator;
let served: Listening;
let shop: Listening;
let owner: KeyPairSigner;
const closers: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 1 });
  closers.push(() => devnet.stop());
  rpc = createSolanaRpc(devnet.rpc) as Rpc<SolanaRpcApi>;
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await createSvmFacilitator({
    db: ledger.db,
    rpc: devnet.rpc,
    feePayerKey: devnet.feePayer.secretKey,
    pollingIntervalMs: 20,
  });
  closers.push(() => facilitator.close());
  served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  closers.push(() => served.close());
  owner = await generateKeyPairSigner();
  await openUsdcAccount(rpc, owner);
  const app = new Hono();
  app.use(
    paymentMiddleware(
      owner.address,
      { "/weather": { price: "$0.001", network: "solana", config: { description: "the weather" } } },
      { url: served.url as `${string}://${string}` },
    ),
  );
  app.get("/weather", (c) => c.json(WEATHER));
  shop = await listen(app.fetch, "127.0.0.1", 0);
  closers.push(() => shop.close());
});

const usdcOf = async (rpc: Rpc<SolanaRpcApi>, who: string) =>
  BigInt((await rpc.getTokenAccountBalance((await usdcAccountOf(who)) as Address).send()).value.amount);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("x402 v1 on Solana through the facilitator", () => {
  it("lists v1's exact on solana with its fee payer beside v2's kind", async () => {
    const supported = (await (await fetch(`${served.url}/supported`)).json()) as SupportedResponse;
    expect(supported.kinds).toContainEqual({
      x402Version: 1,
      scheme: "exact",
      network: "solana",
      extra: { feePayer: devnet.feePayer.address },
    });
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, network: SOLANA_NETWORK }),
    );
  });

  it("settles an x402-hono server's payment from x402-fetch once, and refuses the same X-PAYMENT again", async () => {
    const buyer = await walletHolding(rpc, await signerOf(devnet.buyers[0]?.secretKey as string), 5n * PRICE);
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const payment = new Headers(init?.headers).get("X-PAYMENT");
      if (payment) sent.push(payment);
      return fetch(input, init);
    };
    const pay = wrapFetchWithPayment(recording, buyer, undefined, undefined, {
      svmConfig: { rpcUrl: devnet.rpc },
    });
    const paid = await pay(`${shop.url}/weather`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual(WEATHER);
    expect(decodeXPaymentResponse(paid.headers.get("X-PAYMENT-RESPONSE") as string)).toMatchObject({
      success: true,
      network: "solana",
      payer: buyer.address,
    });
    expect(await usdcOf(rpc, owner.address)).toBe(PRICE);
    expect(await usdcOf(rpc, buyer.address)).toBe(4n * PRICE);

    const again = await fetch(`${shop.url}/weather`, { headers: { "X-PAYMENT": sent[0] as string } });
    expect(again.status).toBe(402);
    expect(await usdcOf(rpc, owner.address)).toBe(PRICE);
    expect(await usdcOf(rpc, buyer.address)).toBe(4n * PRICE);
  });
});
