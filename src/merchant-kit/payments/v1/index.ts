/**
 * x402 v1 on the merchant hosts (docs/platform.md, "x402 v1 clients"): the front each paid route has before
 * its payment's checks (front.ts), and the names v1 gives networks (networks.ts).
 */
export { type V1Host, v1Bodies, v1Front } from "./front.ts";
export { caip2OfV1, v1NetworkOf } from "./networks.ts";
export type { V1PaymentRequired, V1Requirements } from "./required.ts";
