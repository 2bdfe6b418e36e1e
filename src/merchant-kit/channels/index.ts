/**
 * The merchant's side of a payment channel (docs/platform.md, "Payment channels"): the scheme and its voucher
 * check, the channels' store, the claim schedule, the cooperative refund route, the operator's view. The rest
 * of the kit enters here (or, for the configuration's section, through the light door settings.ts), and
 * nothing here imports the kit around it: what a channel needs of a merchant or of its payments, the caller
 * gives (the wallets to schedule, `RefundFronts`, the schedule's `atomic`), so the arrow runs one way, from the
 * payments and the host (app.ts) into channels/.
 */
export { type ChannelRequest, channelRequest, inChannelRequest } from "./context.ts";
export { lateChannels, openChannels } from "./operator.ts";
export { refundHandled, refundOnly } from "./refund-route.ts";
export { type ChannelSchedule, walletSchedules } from "./schedule.ts";
export { MerchantChannelScheme } from "./scheme.ts";
// Its readers are the light door settings.ts's: every command reads the configuration, and the readers from
// here would cost each command the SDK's and viem's modules (0.6 CPU-s more to load merchant-kit/settings.ts).
export type { ChannelSettings } from "./settings.ts";
export { ChannelStore, releaseCrashedReservations } from "./storage.ts";
