import {
  type AnyEndpoint,
  isMeteredOnly,
  type Merchant,
  resourceUrl,
  type Scheme,
  schemesOf,
} from "./catalogue.ts";
import { priceToAtomic } from "./price.ts";
import { MAX_TIMEOUT_SECONDS, type PaymentSettings } from "./routes.ts";

/**
 * An operation's `x-payment-info` in the OpenAPI document: the shape x402 crawlers and comparable
 * services read (`price {mode, currency, amount}` in dollars, `protocols [{x402: ...}]`), with the x402
 * requirements themselves (scheme, network, asset, atomic amount, payTo) inside the x402 entry.
 */
export interface PaymentInfo {
  /**
   * `fixed`: the call can be paid `amount` as listed (exact, whether or not upto is offered too); `max`: it
   * costs what it metered, at most `amount` (upto only).
   */
  price: { mode: "fixed" | "max"; currency: "USD"; amount: string };
  /** One entry per scheme offered, in the 402's order. */
  protocols: {
    x402: {
      scheme: Scheme;
      network: string;
      asset: string;
      amount: string;
      payTo: string;
      maxTimeoutSeconds: number;
      resource: string;
    };
  }[];
}

export function paymentInfo(
  merchant: Merchant,
  endpoint: AnyEndpoint,
  payments: PaymentSettings,
): PaymentInfo {
  return {
    price: { mode: isMeteredOnly(endpoint) ? "max" : "fixed", currency: "USD", amount: endpoint.price },
    protocols: schemesOf(endpoint).map((scheme) => ({
      x402: {
        scheme,
        network: payments.network,
        asset: payments.asset.address,
        amount: priceToAtomic(endpoint.price, payments.asset.decimals).toString(),
        payTo: merchant.payTo,
        maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        resource: resourceUrl(merchant, endpoint),
      },
    })),
  };
}
