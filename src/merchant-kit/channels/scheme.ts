/**
 * The SDK's batch-settlement server scheme as the kit runs it. Two of its habits do not fit a kit that
 * settles some answers after they have streamed (payments/streamed.ts), and are changed here:
 *
 * - It remembers a request's channel reservation by the payment payload's object. The kit settles a streamed
 *   answer with the payload decoded again (payments/resource-server.ts's `laterSettlement`): another object,
 *   whose reservation the scheme would not find, so the stream could never be charged. Within a request the
 *   kit serves, the reservation is remembered by the request instead (context.ts); elsewhere (a refund on the
 *   refund route, the claim schedule) by the payload, as the SDK does.
 * - It gives the reservation back when the payment middleware sees a refusal, and a streamed answer shows the
 *   middleware a placeholder refusal while it is still being delivered. The kit gives it back itself when the
 *   stream ends without a charge.
 *
 * It also leaves with the request how to give its reservation back (context.ts's `release`).
 *
 * And it does not refuse to start when the facilitator names no receiver authorizer: the kit then does not
 * offer channels at all (payments/fronts.ts), and still takes `exact` and `upto`.
 *
 * With an authorizer key of its own (`receiverAuthorizerSigner`), new channels name it and the scheme signs
 * their refunds; a channel opened before the key was set names the facilitator's authorizer, which must sign
 * its refund instead, so for that channel the scheme signs nothing (`signsFor`).
 *
 * It checks a voucher itself, natively and with the SDK's verdicts (voucher.ts: the SDK's check in JavaScript
 * was most of a voucher's CPU); deposits and refunds still go through the SDK's own hook.
 */
import type { DeepReadonly, PaymentPayload } from "@x402/core/types";
import { isBatchSettlementVoucherPayload } from "@x402/evm";
import {
  type AuthorizerSigner,
  BatchSettlementEvmScheme,
  type BatchSettlementRequestContext,
} from "@x402/evm/batch-settlement/server";
import { scopeSlot } from "../../common/request-scope.ts";
import { channelRequest } from "./context.ts";
import { ChannelStore } from "./storage.ts";
import { voucherCheck } from "./voucher.ts";

/** Set while the SDK prepares a refund of a channel that does not name the merchant's own authorizer. */
const unsigned = scopeSlot<true>("refund unsigned");

export class MerchantChannelScheme extends BatchSettlementEvmScheme {
  private readonly contexts = new WeakMap<object, BatchSettlementRequestContext>();

  constructor(...args: ConstructorParameters<typeof BatchSettlementEvmScheme>) {
    super(...args);
    const sdkEnrich = this.enrichSettlementPayload;
    this.enrichSettlementPayload = (context) => {
      const config = (context.paymentPayload.payload as { channelConfig?: { receiverAuthorizer?: string } })
        .channelConfig;
      if (!config?.receiverAuthorizer || this.signsFor(config.receiverAuthorizer)) return sdkEnrich(context);
      return unsigned.run(true, () => sdkEnrich(context));
    };
    const sdkCheck = this.schemeHooks.onBeforeVerify;
    const checkVoucher = voucherCheck(this);
    this.schemeHooks.onBeforeVerify = async function beforeVerify(context) {
      if (isBatchSettlementVoucherPayload(context.paymentPayload.payload)) return checkVoucher(context);
      return sdkCheck?.(context);
    };
  }

  override mergeRequestContext(
    payload: DeepReadonly<PaymentPayload>,
    context: BatchSettlementRequestContext,
  ): void {
    const key = keyOf(payload);
    this.contexts.set(key, { ...this.contexts.get(key), ...context });
    // The reservation this request is about to make, for the kit to give back if a writing call's
    // transaction undoes whatever gave it back (context.ts).
    const { channelId, pendingId } = context;
    const request = channelRequest();
    const storage = this.getStorage();
    if (request && channelId && pendingId && storage instanceof ChannelStore) {
      request.release = () => storage.releasePending(channelId, pendingId);
    }
  }

  override readRequestContext(
    payload: DeepReadonly<PaymentPayload>,
  ): BatchSettlementRequestContext | undefined {
    return this.contexts.get(keyOf(payload));
  }

  override takeRequestContext(
    payload: DeepReadonly<PaymentPayload>,
  ): BatchSettlementRequestContext | undefined {
    const key = keyOf(payload);
    const context = this.contexts.get(key);
    this.contexts.delete(key);
    return context;
  }

  override async clearPendingRequest(payload: DeepReadonly<PaymentPayload>): Promise<void> {
    if (channelRequest()?.handedOff) return;
    await super.clearPendingRequest(payload);
  }

  override validateFacilitatorSupport(): string | undefined {
    return undefined;
  }

  override getReceiverAuthorizerSigner(): AuthorizerSigner | undefined {
    return unsigned.get() ? undefined : super.getReceiverAuthorizerSigner();
  }

  /** Whether the merchant's own authorizer signs for a channel that names `authorizer`. */
  signsFor(authorizer: string): boolean {
    const own = super.getReceiverAuthorizerSigner()?.address;
    return own !== undefined && own.toLowerCase() === authorizer.toLowerCase();
  }
}

function keyOf(payload: DeepReadonly<PaymentPayload>): object {
  return channelRequest() ?? payload;
}
