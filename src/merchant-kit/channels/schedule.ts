/**
 * When a merchant claims its channels' vouchers and sweeps the claimed money to its wallet (x402 spec, "Claim
 * & Settlement Strategy"). A charge is the merchant's only once claimed: until then the payer may take it
 * back with a timed withdrawal, and a claim costs a transaction (a facilitator's gas, often billed). So the
 * schedule claims:
 *
 * - everything, once more than `maxUnclaimedUsd` is charged and unclaimed (the exposure's ceiling);
 * - a channel whose payer started a withdrawal, or whose oldest unclaimed charge is `maxUnclaimedSeconds`
 *   old, whatever gas costs (channels/settings.ts says why that bound keeps every charge claimable);
 * - everything every `claimIntervalSeconds`, when the gas price is at most `claimMaxGasGwei`.
 *
 * It sweeps (`settle`) claimed money every `settleIntervalSeconds`: claimed money is the merchant's already,
 * sweeping only moves it to the wallet, one transfer for every channel.
 *
 * It looks every `CHECK_EVERY_SECONDS`, and one process at a time does it for a wallet, whichever of the
 * merchant's processes (a lease row in `merchant_channel_schedule`). `tick()` is the whole of one look, so
 * tests drive it with their own clock and gas price, no timer.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type {
  AuthorizerSigner,
  BatchSettlementChannelManager,
  Channel,
} from "@x402/evm/batch-settlement/server";
import { createPublicClient, parseUnits } from "viem";
import { rpcTransport } from "../../chain/rpc-transport.ts";
import type { Database } from "../../common/db/index.ts";
import { log } from "../../common/log.ts";
import { type Merchant, offersChannels } from "../endpoint.ts";
import { priceToAtomic } from "../price.ts";
import { MerchantChannelScheme } from "./scheme.ts";
import { CHECK_EVERY_SECONDS, type ChannelSettings } from "./settings.ts";
import { ChannelStore, type OwedChannel } from "./storage.ts";

/** How long a process may hold a wallet's schedule: longer than any claim and settle it sends. */
const LEASE_MS = 10 * 60 * 1000;

export interface ScheduleOptions {
  db: Database;
  /** The wallet whose channels are claimed (the merchant's `payTo`). */
  receiver: `0x${string}`;
  /** Where claims and settles are sent: the merchants' facilitators (they must serve batch-settlement). */
  facilitator: FacilitatorClient;
  /**
   * The receiver's own channel authorizer: the claims of channels that name it carry its signature, so any
   * facilitator of the list can send them (the failover's next, when one is down). Channels that name
   * another authorizer (a facilitator's, from before the key was set) are sent unsigned, for it to sign.
   */
  authorizer?: AuthorizerSigner;
  network: `${string}:${string}`;
  asset: { address: string; decimals: number };
  settings: ChannelSettings;
  /** The gas price now, in wei (default: `rpcUrl`'s). */
  gasPrice?: () => Promise<bigint>;
  rpcUrl?: string;
  now?: () => number;
}

/** Why channels were claimed (`operator`: `channels claim` asked for it now). */
export type ClaimReason = "ceiling" | "interval" | "deadline" | "operator";

/** What one look did. */
export interface TickReport {
  /** Nothing to do, or another process holds the schedule. */
  idle?: "nothing" | "leased";
  claimed?: { reason: ClaimReason; channels: string[]; transactions: string[] };
  /** A claim nothing forced waited for a lower gas price (wei, now). */
  waitedForGas?: bigint;
  settled?: string;
  /** What failed (logged too); the next look tries again. */
  error?: string;
}

interface ScheduleRow {
  last_claim_ms: bigint;
  last_settle_ms: bigint;
  settle_due: boolean;
}

export class ChannelSchedule {
  private readonly store: ChannelStore;
  private readonly manager: BatchSettlementChannelManager;
  /** The claims of channels naming the receiver's own authorizer, signed by it. */
  private readonly signed:
    | { manager: BatchSettlementChannelManager; scheme: MerchantChannelScheme }
    | undefined;
  private readonly now: () => number;
  private readonly gasPrice: () => Promise<bigint>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly options: ScheduleOptions) {
    this.now = options.now ?? Date.now;
    this.store = new ChannelStore(options.db, options.receiver, this.now);
    const managerOf = (scheme: MerchantChannelScheme) =>
      scheme.createChannelManager(
        options.facilitator,
        options.network,
        options.asset.address as `0x${string}`,
      );
    const schemeWith = (receiverAuthorizerSigner?: AuthorizerSigner) =>
      new MerchantChannelScheme(options.receiver, {
        storage: this.store,
        withdrawDelay: options.settings.withdrawDelaySeconds,
        receiverAuthorizerSigner,
      });
    this.manager = managerOf(schemeWith());
    if (options.authorizer) {
      const scheme = schemeWith(options.authorizer);
      this.signed = { scheme, manager: managerOf(scheme) };
    }
    this.gasPrice = options.gasPrice ?? chainGasPrice(options.rpcUrl);
  }

  /** The wallet whose channels it claims, lower-case. */
  get receiver(): `0x${string}` {
    return this.store.receiver as `0x${string}`;
  }

  /** Looks every `CHECK_EVERY_SECONDS`, one look at a time; the timer does not keep the process alive. */
  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.tick().finally(() => {
        this.running = undefined;
      });
    }, CHECK_EVERY_SECONDS * 1000).unref();
  }

  /** Stops looking, once the look under way (if any) has finished. Nothing is claimed on the way out. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One look: claims what is due, then sweeps when it is time. */
  async tick(): Promise<TickReport> {
    const now = this.now();
    const owed = await this.store.owed();
    const row = await this.lease(now, owed.length > 0);
    if (row === "nothing") return { idle: "nothing" };
    if (row === "leased") return { idle: "leased" };
    const report: TickReport = {};
    try {
      await this.claimDue(owed, row, now, report);
      await this.settleDue(row, now, report);
    } catch (error) {
      report.error = (error as Error).message;
      log("warn", "claiming or settling the channels failed; the next look tries again", {
        receiver: this.options.receiver,
        error,
      });
    } finally {
      await this.options.db.query(
        "UPDATE merchant_channel_schedule SET leased_until_ms = 0 WHERE receiver = $1",
        [this.store.receiver],
      );
    }
    return report;
  }

  /**
   * Claims every channel that owes, now, whatever the schedule would wait for (`channels claim`), through the
   * same facilitators and signatures as the schedule. `leased`: another process is claiming this wallet's
   * channels at this moment (its claim lands without this one).
   */
  async claimNow(): Promise<TickReport> {
    return this.leased(async (row, now, report) => {
      const owed = await this.store.owed();
      if (owed.length === 0) return;
      await this.claimChannels({ reason: "operator", channels: owed }, row, now, report);
    });
  }

  /**
   * Refunds `payer`'s channels with this wallet cooperatively (`channels refund`): what each holds beyond its
   * charges goes back to the payer, the charges claimed in the same transaction. A channel naming the
   * receiver's own authorizer is signed here; another is sent unsigned, for its authorizer to sign.
   */
  async refundPayer(payer: string): Promise<{
    idle?: "nothing" | "leased";
    refunded: { channel: string; transaction: string }[];
    /** Channels a call held at that moment (the SDK refunds none of those): ask again. */
    busy: string[];
  }> {
    const mine = (await this.store.list()).filter(
      (c) => c.channelConfig.payer.toLowerCase() === payer.toLowerCase(),
    );
    const refunded: { channel: string; transaction: string }[] = [];
    if (mine.length === 0) return { idle: "nothing", refunded, busy: [] };
    const { idle } = await this.leased(async () => {
      for (const channel of mine) {
        const own = this.signed?.scheme.signsFor(channel.channelConfig.receiverAuthorizer) === true;
        const manager = own && this.signed ? this.signed.manager : this.manager;
        refunded.push(...(await manager.refund([channel.channelId])));
      }
    });
    const done = new Set(refunded.map((r) => r.channel.toLowerCase()));
    const busy = idle ? [] : mine.map((c) => c.channelId).filter((id) => !done.has(id.toLowerCase()));
    return idle ? { idle, refunded, busy } : { refunded, busy };
  }

  /** Runs `fn` holding the wallet's schedule (no look of the schedule meanwhile, here or elsewhere). */
  private async leased(
    fn: (row: ScheduleRow, now: number, report: TickReport) => Promise<void>,
  ): Promise<TickReport> {
    const now = this.now();
    const row = await this.lease(now, true);
    if (row === "nothing" || row === "leased") return { idle: row };
    const report: TickReport = {};
    try {
      await fn(row, now, report);
    } finally {
      await this.record("leased_until_ms = 0", []);
    }
    return report;
  }

  /** The channels due now and why, or none; reads the gas price only when nothing forces the claim. */
  private async due(
    owed: readonly OwedChannel[],
    row: ScheduleRow,
    now: number,
    report: TickReport,
  ): Promise<{ reason: ClaimReason; channels: readonly OwedChannel[] } | undefined> {
    const { settings } = this.options;
    if (owed.length === 0) return undefined;
    const total = owed.reduce((sum, c) => sum + c.owed, 0n);
    if (total > priceToAtomic(settings.maxUnclaimedUsd as `${number}`, this.options.asset.decimals))
      return { reason: "ceiling", channels: owed };
    const forced = owed.filter((c) => c.withdrawing || now - c.since >= settings.maxUnclaimedSeconds * 1000);
    if (now - Number(row.last_claim_ms) >= settings.claimIntervalSeconds * 1000) {
      const price = await this.gasPrice();
      if (price <= parseUnits(String(settings.claimMaxGasGwei), 9))
        return { reason: "interval", channels: owed };
      report.waitedForGas = price;
    }
    return forced.length > 0 ? { reason: "deadline", channels: forced } : undefined;
  }

  private async claimDue(owed: readonly OwedChannel[], row: ScheduleRow, now: number, report: TickReport) {
    const due = await this.due(owed, row, now, report);
    if (due) await this.claimChannels(due, row, now, report);
  }

  private async claimChannels(
    due: { reason: ClaimReason; channels: readonly OwedChannel[] },
    row: ScheduleRow,
    now: number,
    report: TickReport,
  ) {
    const ids = due.channels.map((c) => c.channelId);
    report.claimed = { reason: due.reason, channels: [], transactions: [] };
    // One claim transaction per batch, each recorded as it lands: a later batch's failure loses nothing.
    for (let i = 0; i < ids.length; i += this.options.settings.claimBatch) {
      const batch = new Set(ids.slice(i, i + this.options.settings.claimBatch));
      const results = await this.claimBatch(batch);
      if (results.length === 0) continue;
      row.settle_due = true;
      await this.record("settle_due = true", []);
      report.claimed.channels.push(...batch);
      report.claimed.transactions.push(...results.map((r) => r.transaction));
    }
    // The routine's clock restarts only when everything owed was claimed.
    if (due.reason !== "deadline") await this.record("last_claim_ms = $2", [BigInt(now)]);
    log("info", "channels claimed", {
      receiver: this.options.receiver,
      reason: due.reason,
      channels: report.claimed.channels.length,
      transactions: report.claimed.transactions,
    });
  }

  /**
   * Claims the channels of `batch`: those naming the receiver's own authorizer in a transaction it signs,
   * the others unsigned (an authorizer signs for its own channels only, and one signature covers a batch).
   */
  private async claimBatch(batch: ReadonlySet<string>) {
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

  private async settleDue(row: ScheduleRow, now: number, report: TickReport) {
    if (!row.settle_due) return;
    if (now - Number(row.last_settle_ms) < this.options.settings.settleIntervalSeconds * 1000) return;
    const { transaction } = await this.manager.settle();
    await this.record("settle_due = false, last_settle_ms = $2", [BigInt(now)]);
    report.settled = transaction;
    log("info", "claimed channel money settled to the wallet", {
      receiver: this.options.receiver,
      transaction,
    });
  }

  /**
   * Takes the wallet's schedule for this process, when there is something to do (owed charges or claimed
   * money to sweep) and no other process holds it.
   */
  private async lease(now: number, owes: boolean): Promise<ScheduleRow | "nothing" | "leased"> {
    const receiver = this.store.receiver;
    await this.options.db.query(
      "INSERT INTO merchant_channel_schedule (receiver) VALUES ($1) ON CONFLICT (receiver) DO NOTHING",
      [receiver],
    );
    const { rows } = await this.options.db.query<ScheduleRow>(
      `UPDATE merchant_channel_schedule SET leased_until_ms = $2
       WHERE receiver = $1 AND leased_until_ms < $3 AND ($4 OR settle_due)
       RETURNING last_claim_ms, last_settle_ms, settle_due`,
      [receiver, BigInt(now + LEASE_MS), BigInt(now), owes],
    );
    if (rows[0]) return rows[0];
    const held = await this.options.db.query(
      "SELECT 1 FROM merchant_channel_schedule WHERE receiver = $1 AND leased_until_ms >= $2",
      [receiver, BigInt(now)],
    );
    return held.rowCount > 0 ? "leased" : "nothing";
  }

  private record(set: string, params: readonly unknown[]) {
    return this.options.db.query(`UPDATE merchant_channel_schedule SET ${set} WHERE receiver = $1`, [
      this.store.receiver,
      ...params,
    ]);
  }
}

/** The gas price of the chain at `rpcUrl`, in wei. */
function chainGasPrice(rpcUrl: string | undefined): () => Promise<bigint> {
  if (!rpcUrl) return async () => 0n;
  const client = createPublicClient({ transport: rpcTransport(rpcUrl, { timeout: 10_000 }) });
  return () => client.getGasPrice();
}

/**
 * One schedule per wallet that the `merchants` take channels for (an alias host shares its source's wallet,
 * and so its channels), not started. Started whatever `settings.mode` says: channels already open are the
 * merchant's money until claimed.
 */
export function channelSchedules(
  merchants: readonly Merchant[],
  options: Omit<ScheduleOptions, "receiver" | "authorizer">,
): ChannelSchedule[] {
  return walletSchedules(
    merchants.filter((m) => m.endpoints.some(offersChannels)),
    options,
  );
}

/**
 * One schedule per wallet of `wallets`, with the first authorizer key given for it: what `channelSchedules`
 * builds, for wallets known by configuration alone (`channels claim` beside a PostgreSQL server).
 */
export function walletSchedules(
  wallets: readonly Pick<Merchant, "payTo" | "channelAuthorizer">[],
  options: Omit<ScheduleOptions, "receiver" | "authorizer">,
): ChannelSchedule[] {
  const receivers = new Map<`0x${string}`, AuthorizerSigner | undefined>();
  for (const m of wallets) {
    const receiver = m.payTo.toLowerCase() as `0x${string}`;
    receivers.set(receiver, receivers.get(receiver) ?? m.channelAuthorizer);
  }
  return [...receivers].map(
    ([receiver, authorizer]) => new ChannelSchedule({ ...options, receiver, authorizer }),
  );
}
