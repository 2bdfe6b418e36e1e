import {
  type AnyEndpoint,
  CHANNEL_SCHEME,
  type ExactTransfer,
  exactTransfersOf,
  isMeteredOnly,
  type Merchant,
  resourceUrl,
  type Scheme,
  schemesOf,
} from "./endpoint.ts";
import { priceToAtomic } from "./price.ts";
import {
  channelTimeoutSeconds,
  MAX_TIMEOUT_SECONDS,
  type PaymentNetwork,
  type PaymentSettings,
  paymentNetworks,
} from "./routes.ts";

/**
 * A call's price as the agent ecosystem's OpenAPI discovery reads it (the Agentcash discovery profile,
 * `@agentcash/discovery`'s `PriceSchema`: only `fixed` and `dynamic` are modes it knows). `fixed`: the call
 * can be paid `amount` as listed (exact, whether or not upto is offered too). `dynamic`: it is metered (upto
 * only), and costs what it metered, from `min` (nothing moves) to `max`, the most the buyer authorises.
 */
export type PaymentPrice =
  | { mode: "fixed"; currency: "USD"; amount: string }
  | { mode: "dynamic"; currency: "USD"; min: "0"; max: string };

/**
 * An operation's `x-payment-info` in the OpenAPI document: `price` in dollars, and `protocols`, one
 * `{x402: ...}` entry per scheme offered, in the 402's order, carrying the x402 requirements themselves
 * (scheme, network, asset, atomic amount, payTo) for readers that want them before the 402. `exact` has an
 * entry per transfer the endpoint allows, as its 402 has an option per transfer: the one through Permit2
 * says so in `extra.assetTransferMethod`, as the 402's does. A payment channel's entry (`batch-settlement`)
 * lacks what only the facilitator knows (its receiver authorizer), which the 402 adds.
 */
export interface PaymentInfo {
  price: PaymentPrice;
  protocols: {
    x402: {
      scheme: Scheme;
      network: string;
      asset: string;
      amount: string;
      payTo: string;
      maxTimeoutSeconds: number;
      resource: string;
      /** `exact` through Permit2 only. */
      extra?: { assetTransferMethod: Exclude<ExactTransfer, "eip3009"> };
    };
  }[];
}

/** The price an endpoint's operation declares. */
export function paymentPrice(endpoint: AnyEndpoint): PaymentPrice {
  return isMeteredOnly(endpoint)
    ? { mode: "dynamic", currency: "USD", min: "0", max: endpoint.price }
    : { mode: "fixed", currency: "USD", amount: endpoint.price };
}

export function paymentInfo(
  merchant: Merchant,
  endpoint: AnyEndpoint,
  payments: PaymentSettings,
): PaymentInfo {
  const protocol = (on: PaymentNetwork, scheme: Scheme, transfer?: ExactTransfer) => ({
    x402: {
      scheme,
      network: on.network,
      asset: on.asset.address,
      amount: priceToAtomic(endpoint.price, on.asset.decimals).toString(),
      payTo: merchant.payTo,
      maxTimeoutSeconds: scheme === CHANNEL_SCHEME ? channelTimeoutSeconds(endpoint) : MAX_TIMEOUT_SECONDS,
      resource: resourceUrl(merchant, endpoint),
      ...(transfer === "permit2" && { extra: { assetTransferMethod: transfer } }),
    },
  });
  // Network by network, as the 402 lists them.
  return {
    price: paymentPrice(endpoint),
    protocols: paymentNetworks(payments).flatMap((on) =>
      schemesOf(endpoint).flatMap((scheme) =>
        scheme === "exact"
          ? exactTransfersOf(endpoint).map((transfer) => protocol(on, scheme, transfer))
          : [protocol(on, scheme)],
      ),
    ),
  };
}
