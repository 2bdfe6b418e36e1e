/**
 * The merchant's side of a payment channel (docs/platform.md, "Payment channels"): the scheme and its voucher
 * check, the channels' store, the claim schedule, the cooperative refund route, the operator's view. The rest
 * of the kit enters here (or, for the configuration's section, through the light door settings.ts), and
 * nothing here imports the kit around it: what a channel needs of a merchant or of its payments, the caller
 * gives (the wallets to schedule, `RefundFronts`, the schedule's `atomic`), so the arrow runs one way, from the
 * payments and the host (app.ts) into channels/.
 *
 * A voucher's path, top to bottom. The SDK's resource server drives the middle of it through the scheme's
 * hooks, which take no request: what the kit must carry from one hook to the next rides in the request's
 * `ChannelRequest` (context.ts), opened around the payment middleware (`@x402/hono`'s, for a voucher as for a
 * deposit).
 * 1. The host's front (payments/fronts.ts) has offered `batch-settlement` in the route's 402, when the
 *    facilitators serve channels; the buyer's client opened a channel by deposit and now signs a voucher.
 * 2. payments/paid-handler.ts `settleAndRecord` opens the request's `ChannelRequest` (`inChannelRequest`)
 *    and calls the payment middleware inside it.
 * 3. Verify: the scheme's `onBeforeVerify` (scheme.ts) checks the voucher natively (voucher.ts
 *    `voucherCheck`: the id bound to the config, the cumulative amount on the stored charge, the signature,
 *    the balance and what was claimed), with the SDK's verdicts and without the facilitator.
 * 4. The SDK's `onAfterVerify` reserves the channel for this request: a `pendingRequest` written through
 *    storage.ts `updateChannel` (one conditional statement on the channel's row; on PGlite held in the
 *    process), and scheme.ts `mergeRequestContext` leaves on the `ChannelRequest` how to give it back.
 * 5. payments/paid-handler.ts `paidHandler` runs the endpoint: the payment's ledger row left on the
 *    `ChannelRequest` (`ledger`, payments/ledger/payment-ledger.ts: written with the charge), a writing call's
 *    transaction put there too (`tx`), the handler under its budget; a streamed answer marks the request
 *    `handedOff`, and is charged at the stream's end (payments/streamed.ts).
 * 6. Settle: the SDK's `onBeforeSettle` charges the channel through storage.ts `updateChannel`, the new
 *    cumulative amount written only over the one the voucher builds on (in the call's transaction, when it
 *    has one), the reservation cleared and the call's ledger row written `settled`, in one statement; then it
 *    skips the facilitator; the answer's `PAYMENT-RESPONSE` carries the channel's state. A failure to save is
 *    noted on the `ChannelRequest` (`unsaved`).
 * 7. Back in `settleAndRecord`: a writing call's transaction commits with its ledger row and its charge, or
 *    rolls back and the reservation is given back; an unsaved charge withholds the answer (500, nothing charged).
 * 8. Later, the claim schedule (schedule.ts: due.ts decides what is owed, claimer.ts sends) claims the
 *    charges through the facilitator; the payer may ask a cooperative refund (refund-route.ts).
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
