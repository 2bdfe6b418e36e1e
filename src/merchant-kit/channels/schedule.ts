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
 * tests drive it with their own clock and gas price, no timer. What a look claims is decided in due.ts, and
 * sent in claimer.ts; here is when, by whom, and what is recorded.
 */
import type { FacilitatorClient } from "@x402/core/server";
import type { AuthorizerSigner } from "@x402/evm/batch-settlement/server";
import { createPublicClient } from "viem";
import { rpcTransport } from "../../chain/rpc-transport.ts";
import type { Database } from "../../common/db/index.ts";
import { log } from "../../common/log.ts";
import { ChannelClaimer } from "./claimer.ts";
import { type ClaimReason, type DueClaim, dueClaim } from "./due.ts";
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
  /**
   * A dollar amount in the asset's atomic units: the kit's `priceToAtomic`, given by the caller because
   * channels/ imports nothing of the kit around it. The ceiling (`maxUnclaimedUsd`) is converted at each
   * look, so a ceiling finer than the token fails the looks (logged), not the process's start.
   */
  atomic: (usd: `${number}`, decimals: number) => bigint;
  settings: ChannelSettings;
  /** The gas price now, in wei (default: `rpcUrl`'s). */
  gasPrice?: () => Promise<bigint>;
  rpcUrl?: string;
  now?: () => number;
  /**
   * Where the wallet is paid on several networks: this schedule claims and sweeps the channels of `network`
   * alone, its lease and clocks in its own row (`lease`: '' for the host's first network, the row a wallet had
   * before, else the network).
   */
  apart?: { lease: string };
}

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
  private readonly claimer: ChannelClaimer;
  private readonly now: () => number;
  private readonly gasPrice: () => Promise<bigint>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly options: ScheduleOptions) {
    this.now = options.now ?? Date.now;
    this.store = new ChannelStore(
      options.db,
      options.receiver,
      this.now,
      options.apart ? options.network : undefined,
    );
    this.claimer = new ChannelClaimer({
      store: this.store,
      receiver: options.receiver,
      facilitator: options.facilitator,
      authorizer: options.authorizer,
      network: options.network,
      asset: options.asset,
      withdrawDelaySeconds: options.settings.withdrawDelaySeconds,
    });
    this.gasPrice = options.gasPrice ?? chainGasPrice(options.rpcUrl);
  }

  /** The wallet whose channels it claims, lower-case. */
  get receiver(): `0x${string}` {
    return this.store.receiver as `0x${string}`;
  }

  /** The network it claims on. */
  get network(): `${string}:${string}` {
    return this.options.network;
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
      await this.record("leased_until_ms = 0", []);
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
      for (const channel of mine) refunded.push(...(await this.claimer.refund(channel)));
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

  private async claimDue(owed: readonly OwedChannel[], row: ScheduleRow, now: number, report: TickReport) {
    const { settings, asset, atomic } = this.options;
    const rules = {
      settings,
      ceiling: () => atomic(settings.maxUnclaimedUsd as `${number}`, asset.decimals),
      gasPrice: this.gasPrice,
      lastClaimMs: Number(row.last_claim_ms),
      now,
    };
    const due = await dueClaim(owed, rules, report);
    if (due) await this.claimChannels(due, row, now, report);
  }

  private async claimChannels(due: DueClaim, row: ScheduleRow, now: number, report: TickReport) {
    const ids = due.channels.map((c) => c.channelId);
    report.claimed = { reason: due.reason, channels: [], transactions: [] };
    // One claim transaction per batch, each recorded as it lands: a later batch's failure loses nothing.
    for (let i = 0; i < ids.length; i += this.options.settings.claimBatch) {
      const batch = new Set(ids.slice(i, i + this.options.settings.claimBatch));
      const results = await this.claimer.claim(batch);
      if (results.length === 0) continue;
      row.settle_due = true;
      await this.record("settle_due = true", []);
      report.claimed.channels.push(...batch);
      report.claimed.transactions.push(...results.map((r) => r.transaction));
    }
    // The routine's clock restarts only when everything owed was claimed.
    if (due.reason !== "deadline") await this.record("last_claim_ms = $3", [BigInt(now)]);
    log("info", "channels claimed", {
      receiver: this.options.receiver,
      reason: due.reason,
      channels: report.claimed.channels.length,
      transactions: report.claimed.transactions,
    });
  }

  private async settleDue(row: ScheduleRow, now: number, report: TickReport) {
    if (!row.settle_due) return;
    if (now - Number(row.last_settle_ms) < this.options.settings.settleIntervalSeconds * 1000) return;
    const { transaction } = await this.claimer.settle();
    await this.record("settle_due = false, last_settle_ms = $3", [BigInt(now)]);
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
    const row = [this.store.receiver, this.options.apart?.lease ?? ""];
    await this.options.db.query(
      "INSERT INTO merchant_channel_schedule (receiver, network) VALUES ($1, $2) ON CONFLICT DO NOTHING",
      row,
    );
    const { rows } = await this.options.db.query<ScheduleRow>(
      `UPDATE merchant_channel_schedule SET leased_until_ms = $3
       WHERE receiver = $1 AND network = $2 AND leased_until_ms < $4 AND ($5 OR settle_due)
       RETURNING last_claim_ms, last_settle_ms, settle_due`,
      [...row, BigInt(now + LEASE_MS), BigInt(now), owes],
    );
    if (rows[0]) return rows[0];
    const held = await this.options.db.query(
      "SELECT 1 FROM merchant_channel_schedule WHERE receiver = $1 AND network = $2 AND leased_until_ms >= $3",
      [...row, BigInt(now)],
    );
    return held.rowCount > 0 ? "leased" : "nothing";
  }

  /** Sets `set` (its parameters from $3) on this schedule's row. */
  private record(set: string, params: readonly unknown[]) {
    return this.options.db.query(
      `UPDATE merchant_channel_schedule SET ${set} WHERE receiver = $1 AND network = $2`,
      [this.store.receiver, this.options.apart?.lease ?? "", ...params],
    );
  }
}

/** The gas price of the chain at `rpcUrl`, in wei. */
function chainGasPrice(rpcUrl: string | undefined): () => Promise<bigint> {
  if (!rpcUrl) return async () => 0n;
  const client = createPublicClient({ transport: rpcTransport(rpcUrl, { timeout: 10_000 }) });
  return () => client.getGasPrice();
}

/** A wallet channels are paid to, and its own authorizer key's signer: a merchant's `payTo` and `channelAuthorizer`. */
export interface ChannelWallet {
  payTo: `0x${string}`;
  channelAuthorizer?: AuthorizerSigner;
}

/** One network a wallet's channels are paid on: its id, its token, the RPC its gas price is read at. */
export interface ChannelNetwork {
  network: `${string}:${string}`;
  asset: { address: string; decimals: number };
  rpcUrl?: string;
}

/**
 * One schedule per wallet of `wallets`, with the first authorizer key given for it, not started: hosts that
 * share a wallet share its channels (an alias host and its source). Which wallets is the caller's: the
 * running schedules are those of the hosts whose catalogue offers channels (services/merchants.ts), and
 * `channels claim` acts on every host's. With `options.more` networks (a host paid on several), one per wallet and
 * network, each claiming its chain's channels.
 */
export function walletSchedules(
  wallets: readonly ChannelWallet[],
  {
    more = [],
    ...options
  }: Omit<ScheduleOptions, "receiver" | "authorizer" | "apart"> & {
    more?: readonly ChannelNetwork[];
  },
): ChannelSchedule[] {
  const receivers = new Map<`0x${string}`, AuthorizerSigner | undefined>();
  for (const m of wallets) {
    const receiver = m.payTo.toLowerCase() as `0x${string}`;
    receivers.set(receiver, receivers.get(receiver) ?? m.channelAuthorizer);
  }
  const networks = [
    { options, lease: "" },
    ...more.map((n) => ({ options: { ...options, ...n }, lease: n.network })),
  ];
  return [...receivers].flatMap(([receiver, authorizer]) =>
    networks.map(
      ({ options: on, lease }) =>
        new ChannelSchedule({
          ...on,
          receiver,
          authorizer,
          ...(networks.length > 1 && { apart: { lease } }),
        }),
    ),
  );
}
