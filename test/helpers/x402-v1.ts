/**
 * x402 v1 as its own packages speak it: `x402` 1.2.0, the copy `x402-fetch` 1.2.0 (and `x402-hono` 1.1.0,
 * `x402-express` 1.2.0) install beside them. The top-level `x402` is 0.7.3 (`x402-axios`'s), so the 1.2.0
 * code is imported from where `x402-fetch` finds it: the buyer's signing and the merchant's facilitator client
 * are the very ones the v1 middleware and wrapper run.
 */
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  preparePaymentHeader,
  signPaymentHeader,
} from "../../node_modules/x402-fetch/node_modules/x402/dist/esm/client/index.mjs";
import { decodePayment } from "../../node_modules/x402-fetch/node_modules/x402/dist/esm/schemes/index.mjs";
import type {
  PaymentPayload as PaymentPayloadV1,
  PaymentRequirements as PaymentRequirementsV1,
} from "../../node_modules/x402-fetch/node_modules/x402/dist/esm/types/index.mjs";
import { useFacilitator } from "../../node_modules/x402-fetch/node_modules/x402/dist/esm/verify/index.mjs";
import { BASE_USDC } from "../../src/chain/base.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";

export type { PaymentPayloadV1, PaymentRequirementsV1 };

/**
 * What a v1 merchant asks for on `base` (the devnet is Base's chain with Base's USDC at its address):
 * `amount` atomic USDC units to `payTo`, with the fields `x402-hono` fills in.
 */
export function v1RequirementsFor(payTo: `0x${string}`, amount = "1000"): PaymentRequirementsV1 {
  return {
    scheme: "exact",
    network: "base",
    maxAmountRequired: amount,
    resource: "http://127.0.0.1/weather",
    description: "the weather",
    mimeType: "application/json",
    payTo: getAddress(payTo),
    maxTimeoutSeconds: 300,
    asset: getAddress(BASE_USDC),
    extra: { name: "USD Coin", version: "2" },
  };
}

/**
 * A v1 exact payment signed by `buyer` with x402 1.2.0's own client (`preparePaymentHeader`,
 * `signPaymentHeader`): its `X-PAYMENT` header, and the payload a v1 middleware decodes from it and sends its
 * facilitator (`decodePayment`, then `x402Version` set to 1, as `x402-hono` does).
 */
export async function payV1(
  buyer: DevnetAccount,
  requirements: PaymentRequirementsV1,
): Promise<{ header: string; payload: PaymentPayloadV1 }> {
  const account = privateKeyToAccount(buyer.privateKey);
  const unsigned = preparePaymentHeader(account.address, 1, requirements);
  const header = await signPaymentHeader(account, requirements, unsigned);
  return { header, payload: { ...decodePayment(header), x402Version: 1 } };
}

/**
 * x402 1.2.0's facilitator client (`useFacilitator`), what `x402-hono` and `x402-express` call, with an API
 * key sent as their README's `createAuthHeaders` sends headers.
 */
export function v1FacilitatorClient(url: string, apiKey?: string) {
  const auth = apiKey ? { Authorization: `Bearer ${apiKey}` } : undefined;
  return useFacilitator({
    url: url as `${string}://${string}`,
    ...(auth ? { createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: {} }) } : {}),
  });
}
