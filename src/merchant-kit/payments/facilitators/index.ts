export { COINBASE_FACILITATOR_URL, cdpKeySecret, facilitatorAuthHeaders, parseHeaderLines } from "./auth.ts";
export { DEFAULT_TIMEOUTS, FailoverFacilitator, type FailoverOptions, httpFacilitator } from "./failover.ts";
export type { Verdict, WayToPay } from "./offers.ts";
export { networkWayOf, settleableWays } from "./offers.ts";
export { networkAuthorizationReader } from "./settled-on-chain.ts";
export { FACILITATOR_RETRY_AFTER_S, facilitatorTrouble, WatchedFacilitator } from "./watch.ts";
