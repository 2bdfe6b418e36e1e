import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { createPublicClient, encodeFunctionData, getAddress, type Hex, http, parseSignature } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_USDC } from "../../src/chain/base.ts";
import { type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";

export const NETWORK = "eip155:8453" as const;

/** A fresh payee, so each case reads balances no other case touches. */
export function newMerchant(): `0x${string}` {
  return privateKeyToAccount(generatePrivateKey()).address;
}

/** What a merchant asks for: `amount` atomic USDC units on the devnet (Base) to `payTo`. */
export function requirementsFor(payTo: `0x${string}`, amount = "1000"): PaymentRequirements {
  return {
    scheme: "exact",
    network: NETWORK,
    asset: getAddress(BASE_USDC),
    amount,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  };
}

/**
 * What a merchant metering its calls asks for: at most `max` atomic USDC units to `payTo` under the upto
 * scheme, settled only by `facilitator` (what its /supported names, and the buyer signs for).
 */
export function uptoRequirementsFor(
  payTo: `0x${string}`,
  max: string,
  facilitator: `0x${string}`,
): PaymentRequirements {
  return {
    scheme: "upto",
    network: NETWORK,
    asset: getAddress(BASE_USDC),
    amount: max,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { facilitatorAddress: facilitator },
  };
}

/** `fetch` that keeps each PAYMENT-SIGNATURE it sends, so that a test can send one again (a replay). */
export function recordingFetch(): { fetch: typeof fetch; signatures: string[] } {
  const signatures: string[] = [];
  return {
    signatures,
    fetch: (input, init) => {
      // @x402/fetch sends Request objects, of whichever Request class is global (@hono/node-server has its own).
      const signature = (input as Request).headers?.get("PAYMENT-SIGNATURE");
      if (signature) signatures.push(signature);
      return fetch(input, init);
    },
  };
}

/** The SDK's own x402 client paying as `buyer` with the exact and the upto schemes, as a wallet that has both. */
export function x402ClientOf(buyer: DevnetAccount): x402Client {
  const account = privateKeyToAccount(buyer.privateKey);
  return new x402Client()
    .register(NETWORK, new ExactEvmScheme(account))
    .register(NETWORK, new UptoEvmScheme(account));
}

/** A client that pays with `scheme` only, whatever else the 402 offers: the scheme a test exercises. */
export function x402ClientFor(buyer: DevnetAccount, scheme: "exact" | "upto"): x402Client {
  const account = privateKeyToAccount(buyer.privateKey);
  return new x402Client().register(
    NETWORK,
    scheme === "exact" ? new ExactEvmScheme(account) : new UptoEvmScheme(account),
  );
}

/** A Permit2 authorization for at most the requirements' amount, signed with the SDK's own upto client. */
export function payUpto(buyer: DevnetAccount, requirements: PaymentRequirements): Promise<PaymentPayload> {
  const client = new x402Client().register(NETWORK, new UptoEvmScheme(privateKeyToAccount(buyer.privateKey)));
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://shop.test/v1/chat/completions" },
    accepts: [requirements],
  });
}

/** The `bazaar` extension of a GET resource, as a resource server enriched it (with its method). */
export function bazaarGet(example: Record<string, unknown> = { city: "Lisbon" }) {
  const declared = declareDiscoveryExtension({
    input: example,
    inputSchema: { properties: { city: { type: "string" } } },
    output: { example: { temperature: 21 } },
  });
  const bazaar = declared.bazaar as { info: { input: Record<string, unknown> } };
  bazaar.info.input.method = "GET";
  return declared;
}

/**
 * A payment signed by `buyer` with the SDK's own client (exact scheme, EIP-3009), for `requirements`,
 * echoing the resource and extensions as a real buyer would.
 */
/** The calldata of USDC's `transferWithAuthorization` for a buyer's signed EIP-3009 payment, as anyone may submit it. */
export function transferWithAuthorizationData(payment: PaymentPayload): Hex {
  const { authorization: a, signature } = payment.payload as {
    authorization: Record<string, string>;
    signature: Hex;
  };
  const { v, r, s } = parseSignature(signature);
  return encodeFunctionData({
    abi: usdcAbi,
    functionName: "transferWithAuthorization",
    args: [
      a.from as `0x${string}`,
      a.to as `0x${string}`,
      BigInt(a.value as string),
      BigInt(a.validAfter as string),
      BigInt(a.validBefore as string),
      a.nonce as `0x${string}`,
      Number(v),
      r,
      s,
    ],
  });
}

export async function pay(
  buyer: DevnetAccount,
  requirements: PaymentRequirements,
  resource: { url: string; description?: string; mimeType?: string } = { url: "http://shop.test/weather" },
  extensions?: Record<string, unknown>,
): Promise<PaymentPayload> {
  const client = new x402Client().register(
    NETWORK,
    new ExactEvmScheme(privateKeyToAccount(buyer.privateKey)),
  );
  return client.createPaymentPayload({
    x402Version: 2,
    resource,
    accepts: [requirements],
    ...(extensions ? { extensions } : {}),
  });
}

/** Reads USDC balances on the devnet. */
export function usdcReader(rpc: string, token: string = BASE_USDC) {
  // No block-number cache: a test reads right after mining.
  const client = createPublicClient({
    chain: devnetChain(rpc),
    transport: http(rpc),
    pollingInterval: 20,
    cacheTime: 0,
  });
  return {
    client,
    balanceOf: (address: `0x${string}`) =>
      client.readContract({
        address: getAddress(token),
        abi: usdcAbi,
        functionName: "balanceOf",
        args: [address],
      }),
    nonceOf: (address: `0x${string}`) => client.getTransactionCount({ address, blockTag: "pending" }),
    /** Waits (10 s at most) for a receipt by polling for it: viem's block-watching wait can miss the block
     * on a devnet that mines only on demand (see src/facilitator/outcome.ts). */
    async receipt(hash: `0x${string}`) {
      const receipt = await pollReceipt(client, hash, 10_000, 20);
      if (!receipt) throw new Error(`no receipt for ${hash} within 10 s`);
      return receipt;
    },
  };
}
