/**
 * How a wallet's claims, refunds and sweeps are sent: through the SDK's channel manager, over the merchants'
 * facilitators. Apart from the schedule (schedule.ts), which decides when, because which manager sends a
 * channel's claim depends on the authorizer the channel names, not on why it is claimed.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type {
  AuthorizerSigner,
  BatchSettlementChannelManager,
  Channel,
} from "@x402/evm/batch-settlement/server";
import { MerchantChannelScheme } from "./scheme.ts";
import type { ChannelStore } from "./storage.ts";

export interface ClaimerOptions {
  store: ChannelStore;
  receiver: `0x${string}`;
  facilitator: FacilitatorClient;
  /** The receiver's own channel authorizer (schedule.ts's `ScheduleOptions` says what it changes). */
  authorizer?: AuthorizerSigner;
  network: `${string}:${string}`;
  asset: { address: string };
  withdrawDelaySeconds: number;
}

export class ChannelClaimer {
  private readonly manager: BatchSettlementChannelManager;
  /** The claims of channels naming the receiver's own authorizer, signed by it. */
  private readonly signed:
    | { manager: BatchSettlementChannelManager; scheme: MerchantChannelScheme }
    | undefined;

  constructor(options: ClaimerOptions) {
    const managerOf = (scheme: MerchantChannelScheme) =>
      scheme.createChannelManager(
        options.facilitator,
        options.network,
        options.asset.address as `0x${string}`,
      );
    const schemeWith = (receiverAuthorizerSigner?: AuthorizerSigner) =>
      new MerchantChannelScheme(options.receiver, {
        storage: options.store,
        withdrawDelay: options.withdrawDelaySeconds,
        receiverAuthorizerSigner,
      });
    this.manager = managerOf(schemeWith());
    if (options.authorizer) {
      const scheme = schemeWith(options.authorizer);
      this.signed = { scheme, manager: managerOf(scheme) };
    }
  }

  /**
   * Claims the channels of `batch`: those naming the receiver's own authorizer in a transaction it signs,
   * the others unsigned (an authorizer signs for its own channels only, and one signature covers a batch).
   */
  async claim(batch: ReadonlySet<string>) {
    const inBatch = (c: Channel) => batch.has(c.channelId.toLowerCase());
    const signed = this.signed;
    if (!signed)
      return this.manager.claim({
        maxClaimsPerBatch: batch.size,
        selectClaimChannels: (channels) => channels.filter(inBatch),
      });
    const own = (c: Channel) => signed.scheme.signsFor(c.channelConfig.receiverAuthorizer);
    return [
      ...(await signed.manager.claim({
        maxClaimsPerBatch: batch.size,
        selectClaimChannels: (channels) => channels.filter((c) => inBatch(c) && own(c)),
      })),
      ...(await this.manager.claim({
        maxClaimsPerBatch: batch.size,
        selectClaimChannels: (channels) => channels.filter((c) => inBatch(c) && !own(c)),
      })),
    ];
  }

  /** Refunds `channel` cooperatively: signed here when it names the receiver's own authorizer. */
  refund(channel: Channel) {
    const own = this.signed?.scheme.signsFor(channel.channelConfig.receiverAuthorizer) === true;
    const manager = own && this.signed ? this.signed.manager : this.manager;
    return manager.refund([channel.channelId]);
  }

  /** Sweeps every claimed channel's money to the wallet, in one transfer. */
  settle() {
    return this.manager.settle();
  }
}
