/**
 * What a kit merchant declaring a builder code accepts of the codes a buyer's payment carries (docs/platform.md,
 * "Builder codes (builder-code)"): the SDK's resource server checks the payment's `builder-code` against the
 * 402's before anything is verified. Added service codes are accepted and reach the chain; a changed or dropped
 * app code is refused with `extension_echo_mismatch`, nothing charged; a payment without the extension is
 * accepted.
 */
import type { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { BuilderCodeClientExtension, declareBuilderCodeExtension } from "@x402/extensions/builder-code";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builderCodesOf } from "../../../../src/indexer/builder-codes.ts";
import { echo, refusingFacilitator } from "../../../helpers/merchant.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { newMerchant, requirementsFor, usdcReader, x402ClientFor } from "../../../helpers/x402.ts";

const APP = "test_shop";
type Info = Record<string, unknown>;

describe("a kit merchant's builder code, and the codes a buyer sends", () => {
  let shop: PaidShop;
  beforeAll(async () => {
    shop = await startPaidShop([echo], { merchant: { builderCode: APP } });
  }, 60_000);
  afterAll(async () => {
    await shop?.close();
  });

  /**
   * Buys `/api/echo` with the SDK's client, its payment's `builder-code` info rewritten by `change` after the
   * client built it (as the 402 declared it, plus any code the client's extension added): the response, and
   * what the buyer's USDC went down by.
   */
  async function buy(
    change: (info: Info | undefined) => Info | undefined,
    client: x402Client = exactClient(),
  ) {
    client.onAfterPaymentCreation(async ({ paymentPayload }) => {
      const { "builder-code": entry, ...others } = paymentPayload.extensions ?? {};
      const info = change(structuredClone((entry as { info?: Info } | undefined)?.info));
      paymentPayload.extensions =
        info === undefined ? others : { ...others, "builder-code": { ...(entry as object), info } };
    });
    const before = await shop.balanceOf(shop.buyer().address);
    const res = await wrapFetchWithPayment(fetch, client)(`${shop.url}/api/echo?text=hi`);
    const paid = before - (await shop.balanceOf(shop.buyer().address));
    return { res, paid };
  }
  const exactClient = () => x402ClientFor(shop.buyer(), "exact");

  /** The codes at the end of the settlement a paid response names. */
  async function codesOnChain(res: Response) {
    const { transaction } = decodePaymentResponseHeader(res.headers.get("PAYMENT-RESPONSE") ?? "");
    const tx = await usdcReader(shop.devnet.rpc).client.getTransaction({ hash: transaction as Hex });
    return builderCodesOf(tx.input);
  }

  /** A refusal of the payment's codes: a 402 naming the mismatch, and nothing charged or sent. */
  async function expectRefused(bought: { res: Response; paid: bigint }) {
    expect(bought.res.status).toBe(402);
    const required = decodePaymentRequiredHeader(bought.res.headers.get("PAYMENT-REQUIRED") ?? "");
    expect(required.error).toBe("extension_echo_mismatch");
    expect(bought.paid).toBe(0n);
    expect(await shop.pending()).toBe(0);
  }

  it("accepts the 402's app code with the service codes a buyer adds, and the chain carries them", async () => {
    const client = exactClient().registerExtension(new BuilderCodeClientExtension(["my_agent", "my_wallet"]));
    const bought = await buy((info) => info, client);
    expect(bought.res.status, await bought.res.clone().text()).toBe(200);
    expect(bought.paid).toBe(2000n);
    expect(await codesOnChain(bought.res)).toEqual({
      app: APP,
      wallet: null,
      services: "my_agent,my_wallet",
    });
  });

  it("accepts ten service codes of 32 characters, of which the chain carries what fits the facilitator's cap", async () => {
    const ten = Array.from({ length: 10 }, (_, i) => `agent_${i}_`.padEnd(32, "x"));
    const bought = await buy((info) => ({ ...info, s: ten }));
    expect(bought.res.status, await bought.res.clone().text()).toBe(200);
    expect(bought.paid).toBe(2000n);
    // 32 bytes with the app code alone (this facilitator has none of its own): room for two (103 bytes).
    expect(await codesOnChain(bought.res)).toEqual({
      app: APP,
      wallet: null,
      services: ten.slice(0, 2).join(","),
    });
  });

  it("refuses a payment whose app code the buyer changed, or dropped while keeping the extension, and charges nothing", async () => {
    await expectRefused(await buy((info) => ({ ...info, a: "other_app" })));
    await expectRefused(await buy((info) => ({ ...info, a: undefined, s: ["my_agent"] })));
  });

  it("accepts a payment without the extension: settled, with no app code on chain", async () => {
    const bought = await buy(() => undefined);
    expect(bought.res.status, await bought.res.clone().text()).toBe(200);
    expect(bought.paid).toBe(2000n);
    // This shop's facilitator has no code of its own: no suffix at all.
    expect(await codesOnChain(bought.res)).toBeUndefined();
  });
});

/**
 * The SDK's echo check itself (`validateExtensions`, what the kit's resource server runs on every payment), for
 * each change docs/platform.md states: pinned so that an SDK upgrade that changes it shows here.
 */
describe("the SDK's echo check of builder codes", () => {
  const server = new x402ResourceServer(refusingFacilitator);
  const requirements = requirementsFor(newMerchant());
  const required = (extensions?: Record<string, unknown>): PaymentRequired => ({
    x402Version: 2,
    resource: { url: "http://shop.test/api/echo" },
    accepts: [requirements],
    ...(extensions ? { extensions } : {}),
  });
  const payment = (info?: Info, version = 2): PaymentPayload =>
    ({
      x402Version: version,
      accepted: requirements,
      payload: {},
      ...(info ? { extensions: { "builder-code": { info } } } : {}),
    }) as PaymentPayload;
  const declared = required({ "builder-code": declareBuilderCodeExtension(APP) });
  const declaredWithService = required({ "builder-code": declareBuilderCodeExtension(APP, "shop_service") });
  const verdict = (req: PaymentRequired, pay: PaymentPayload) => server.validateExtensions(req, pay);
  const ok = { valid: true };
  const mismatch = { valid: false, invalidReason: "extension_echo_mismatch", extensionKey: "builder-code" };
  const codes = (n: number) => Array.from({ length: n }, (_, i) => `agent_${i}`);

  it("accepts the same app code with service codes added, a `w`, codes outside the alphabet, or no extension", () => {
    expect(verdict(declared, payment({ a: APP }))).toEqual(ok);
    expect(verdict(declared, payment({ a: APP, s: codes(10) }))).toEqual(ok);
    // The count is checked only against a declared `s`: a merchant declaring its app code alone takes any.
    expect(verdict(declared, payment({ a: APP, s: codes(50) }))).toEqual(ok);
    expect(verdict(declared, payment({ a: APP, s: "one" }))).toEqual(ok);
    expect(verdict(declared, payment({ a: APP, w: "buyer_wallet" }))).toEqual(ok);
    expect(verdict(declared, payment({ a: APP, s: ["Not A Code"] }))).toEqual(ok);
    expect(verdict(declared, payment())).toEqual(ok);
    expect(verdict(declaredWithService, payment({ a: APP, s: ["mine", "shop_service"] }))).toEqual(ok);
    // A merchant declaring no code: a buyer may add service codes of its own.
    expect(verdict(required(), payment({ s: ["my_agent"] }))).toEqual(ok);
    // x402 v1 payments are not checked (and the facilitator reads no app code from them).
    expect(verdict(declared, payment({ a: "other_app" }, 1))).toEqual(ok);
  });

  it("refuses a changed or missing app code, an app code the merchant did not declare, the merchant's service code dropped, or more than ten with it", () => {
    expect(verdict(declared, payment({ a: "other_app" }))).toEqual(mismatch);
    expect(verdict(declared, payment({ s: ["my_agent"] }))).toEqual(mismatch);
    expect(verdict(required(), payment({ a: "my_app" }))).toEqual(mismatch);
    expect(verdict(declaredWithService, payment({ a: APP, s: ["shop_service", ...codes(10)] }))).toEqual(
      mismatch,
    );
    expect(verdict(declaredWithService, payment({ a: APP, s: ["mine"] }))).toEqual(mismatch);
  });
});
