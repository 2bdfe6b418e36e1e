/**
 * What x402 v1 clients are offered and how their payment is read (payments/v1/): only `exact` by EIP-3009, on
 * the networks v1 names (Arbitrum One has none), each entry one x402's v1 clients parse; a v1 payment made the
 * v2 payment of the requirements it pays, or none; an `X-PAYMENT` that is not a v1 payment refused with a 400.
 */
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { describe, expect, it } from "vitest";
import { PaymentRequirementsSchema } from "x402/types";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../../../src/chain/solana/constants.ts";
import { BadInputError } from "../../../../src/common/errors.ts";
import { caip2OfV1, v1NetworkOf } from "../../../../src/merchant-kit/payments/v1/networks.ts";
import { asV2Payment, v1PaymentOf } from "../../../../src/merchant-kit/payments/v1/payment.ts";
import { v1PaymentRequired } from "../../../../src/merchant-kit/payments/v1/required.ts";

const PAY_TO = "0x1111111111111111111111111111111111111111";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ARBITRUM_USDC = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831";
const DOMAIN = { name: "USD Coin", version: "2" };

const requirement = (over: Partial<PaymentRequirements>): PaymentRequirements => ({
  scheme: "exact",
  network: "eip155:8453",
  asset: BASE_USDC,
  amount: "1000",
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: DOMAIN,
  ...over,
});

/** A host paid on Arbitrum One first and Base second, each way it may offer. */
const REQUIRED: PaymentRequired = {
  x402Version: 2,
  error: "Payment required",
  resource: {
    url: "https://api.example.test/api/calc?expr=6*7",
    description: "Calculates.",
    mimeType: "application/json",
  },
  accepts: [
    requirement({ network: "eip155:42161", asset: ARBITRUM_USDC }),
    requirement({ network: "eip155:42161", scheme: "upto", extra: { facilitatorAddress: PAY_TO } }),
    requirement({}),
    requirement({ extra: { ...DOMAIN, assetTransferMethod: "permit2" } }),
    requirement({ scheme: "upto", extra: { facilitatorAddress: PAY_TO } }),
    requirement({ scheme: "batch-settlement", extra: { receiverAuthorizer: PAY_TO } }),
  ],
  extensions: { bazaar: { info: { input: { type: "http", method: "GET" } } } },
};

const SCHEMA = { input: { type: "http", method: "GET", discoverable: true, queryParams: {} }, output: {} };

describe("the networks as x402 v1 names them", () => {
  it("names Base, Polygon and Base Sepolia, and not Arbitrum One", () => {
    expect(v1NetworkOf("eip155:8453")).toBe("base");
    expect(v1NetworkOf("eip155:137")).toBe("polygon");
    expect(v1NetworkOf("eip155:84532")).toBe("base-sepolia");
    expect(v1NetworkOf("eip155:42161")).toBeUndefined();
    expect(caip2OfV1("base")).toBe("eip155:8453");
    expect(caip2OfV1("polygon")).toBe("eip155:137");
    expect(caip2OfV1("arbitrum")).toBeUndefined();
    // Solana's mainnet is `solana` to v1, as the SDK maps it.
    expect(v1NetworkOf(SOLANA_NETWORK)).toBe("solana");
    expect(caip2OfV1("solana")).toBe(V1_TO_V2_NETWORK_MAP.solana);
    expect(caip2OfV1("toString")).toBeUndefined();
  });
});

describe("the 402's v1 body", () => {
  it("offers v1 clients exact by EIP-3009 on the networks v1 names, each entry as x402's v1 parses it", () => {
    const body = v1PaymentRequired(REQUIRED, SCHEMA);
    expect(body).toEqual({
      x402Version: 1,
      error: "Payment required",
      accepts: [
        {
          scheme: "exact",
          network: "base",
          maxAmountRequired: "1000",
          resource: REQUIRED.resource.url,
          description: "Calculates.",
          mimeType: "application/json",
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          asset: BASE_USDC,
          outputSchema: SCHEMA,
          extra: DOMAIN,
        },
      ],
    });
    // x402's own v1 schema (x402-fetch and x402-axios parse every entry with it, and fail on any it refuses).
    for (const entry of body.accepts) expect(PaymentRequirementsSchema.parse(entry)).toEqual(entry);
  });

  it("says why a route offers v1 nothing: a chain v1 does not name, schemes v1 cannot pay, a payment id", () => {
    const arbitrumOnly = v1PaymentRequired({ ...REQUIRED, accepts: REQUIRED.accepts.slice(0, 2) }, SCHEMA);
    expect(arbitrumOnly.accepts).toEqual([]);
    expect(arbitrumOnly.error).toMatch(
      /^x402 v1 cannot pay this route: it takes exact on eip155:42161, upto on eip155:42161/,
    );
    const metered = v1PaymentRequired({ ...REQUIRED, accepts: REQUIRED.accepts.slice(3) }, SCHEMA);
    expect(metered.error).toContain(
      "exact through Permit2 on eip155:8453, upto on eip155:8453, batch-settlement on eip155:8453",
    );
    const closed = v1PaymentRequired(REQUIRED, SCHEMA, "it requires a payment id");
    expect(closed).toMatchObject({ accepts: [], error: expect.stringContaining("it requires a payment id") });
  });
});

/** A v1 payment of `value` to `to` on `network`, as x402's v1 client writes it. */
function v1Payment(over: { network?: string; scheme?: string; value?: string; to?: string } = {}) {
  return {
    x402Version: 1,
    scheme: over.scheme ?? "exact",
    network: over.network ?? "base",
    payload: {
      signature: `0x${"ab".repeat(65)}`,
      authorization: {
        from: "0x2222222222222222222222222222222222222222",
        to: over.to ?? PAY_TO.toLowerCase(),
        value: over.value ?? "1000",
        validAfter: "0",
        validBefore: "9999999999",
        nonce: `0x${"cd".repeat(32)}`,
      },
    },
  };
}
const header = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

describe("a v1 payment", () => {
  it("is the v2 payment of the requirements it pays: network, scheme, wallet and amount, EIP-3009", () => {
    const payment = v1PaymentOf(header(v1Payment()));
    expect(asV2Payment(payment, REQUIRED)).toEqual({
      x402Version: 2,
      resource: REQUIRED.resource,
      accepted: REQUIRED.accepts[2],
      payload: payment.payload,
      extensions: REQUIRED.extensions,
    });
  });

  it("pays nothing the route takes from v1 when its amount, network, wallet or scheme is another", () => {
    for (const other of [
      v1Payment({ value: "999" }),
      v1Payment({ network: "polygon" }),
      v1Payment({ network: "arbitrum" }),
      v1Payment({ to: "0x3333333333333333333333333333333333333333" }),
      v1Payment({ scheme: "upto" }),
    ])
      expect(asV2Payment(v1PaymentOf(header(other)), REQUIRED)).toBeUndefined();
  });

  it("on Solana is the v2 payment of the route's one Solana way, its transaction as it is; never an EVM way's", () => {
    const owner = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    const solana = requirement({
      network: SOLANA_NETWORK,
      asset: SOLANA_USDC_MINT,
      payTo: owner,
      extra: { feePayer: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4" },
    });
    const required = { ...REQUIRED, accepts: [...REQUIRED.accepts, solana] };
    const transaction = {
      x402Version: 1,
      scheme: "exact",
      network: "solana",
      payload: { transaction: "AQID" },
    };
    const payment = v1PaymentOf(header(transaction));
    expect(asV2Payment(payment, required)?.accepted).toEqual(solana);
    expect(asV2Payment(payment, required)?.payload).toEqual({ transaction: "AQID" });
    // Offered to v1 clients as x402 1.2.0 parses it.
    const offered = v1PaymentRequired(required, SCHEMA).accepts.find((a) => a.network === "solana");
    expect(PaymentRequirementsSchema.safeParse(offered).success).toBe(true);
    // A transaction said to be on Base, or an EIP-3009 authorization said to be on Solana, pays nothing here.
    expect(asV2Payment(v1PaymentOf(header({ ...transaction, network: "base" })), required)).toBeUndefined();
    expect(asV2Payment(v1PaymentOf(header(v1Payment({ network: "solana" }))), required)).toBeUndefined();
    // A route with no Solana way takes no Solana payment.
    expect(asV2Payment(payment, REQUIRED)).toBeUndefined();
  });

  it("is refused with a 400 invalid_payment_signature when X-PAYMENT is not one", () => {
    const { payload: _, ...noPayload } = v1Payment();
    for (const [sent, why] of [
      ["%%%", /it is not base64/],
      [Buffer.from("not json").toString("base64"), /does not decode to JSON/],
      [header([1]), /not an object/],
      [header({ ...v1Payment(), x402Version: 2 }), /x402Version/],
      [header(noPayload), /payload/],
      [header({ ...v1Payment(), payload: { signature: "0x12", authorization: {} } }), /authorization/],
    ] as const) {
      let error: unknown;
      try {
        v1PaymentOf(sent);
      } catch (e) {
        error = e;
      }
      expect(error, sent).toBeInstanceOf(BadInputError);
      expect((error as BadInputError).code).toBe("invalid_payment_signature");
      expect((error as BadInputError).message).toMatch(/^the X-PAYMENT header is not an x402 v1 payment/);
      expect((error as BadInputError).message).toMatch(why);
    }
  });
});
