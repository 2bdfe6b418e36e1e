/**
 * Starting the program's servers: `startServices` (the composition root) and the pieces it is made of.
 * See start.ts.
 */

export { type AdminRecord, readAdminRecord } from "./admin.ts";
export {
  type ChannelActions,
  type ChannelRequest,
  ChannelRequestError,
  MERCHANTS_ADMIN,
} from "./channel-admin.ts";
export type { Config } from "./config.ts";
export {
  devnetChainOptions,
  devnetFacilitatorOptions,
  type FacilitatorChainOptions,
  type FacilitatorServiceOptions,
  startFacilitatorService,
} from "./facilitator.ts";
export { type KeySpec, keyActions } from "./facilitator-admin.ts";
export { listenOn, listenWithUrlOn } from "./listen.ts";
export { configuredChannelActions, type ExtraHost, payToOf, startMerchantHosts } from "./merchants.ts";
export { startMetricsListener } from "./metrics.ts";
export { type AttestOptions, type FollowOptions, startReportService } from "./reports.ts";
export { type Services, type ServicesOptions, startServices } from "./start.ts";
