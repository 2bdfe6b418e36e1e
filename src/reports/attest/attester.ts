/**
 * The attester: at the close of each week of each chain (calendar.ts), once the week's last block is final in
 * the analytics database, it seals the chain's week's reports (seal.ts) and attests the seal on Base through
 * EAS, signed by the operator's own key, which pays its own gas: one attestation per chain and week.
 *
 * One attestation per chain and week, however often the week is looked at, by however many processes:
 * - the transaction is signed and stored (store.ts) before it is broadcast, and a retry sends those very
 *   bytes again, so a crash or an RPC error between the two never makes a second one;
 * - before it signs anew (the stored one reverted, or its nonce went to another transaction), it looks on the
 *   chain for an attestation of the week by the same key, and takes that one if there is;
 * - two processes signing at once sign the same nonce, so at most one of their transactions is mined.
 * Each step (`attestDue`) does what it can without waiting: a transaction sent is looked at again next time.
 */
import { type Address, type Hex, parseEventLogs, parseTransaction } from "viem";
import type { Analytics } from "../../analytics/duckdb.ts";
import { BlockClock } from "../../chain/block-clock.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { EAS_ADDRESS, easAbi } from "../../chain/eas/index.ts";
import { log } from "../../common/log.ts";
import { ClockCalendar, firstDue, StoredCalendar, type WeekCalendar } from "./calendar.ts";
import { AttesterChain, attestCall, type Fees } from "./chain.ts";
import { decodeWeek, weekSchemaOf } from "./schema.ts";
import { recordAttested, recordConflict, recordSigned, type SealedWeekRow } from "./store.ts";
import { WeekCloses } from "./weeks.ts";

/** How often the attester looks, besides each new build of the latest window. */
export const DEFAULT_INTERVAL_MS = 30_000;

/**
 * What the attester needs of the report service, declared here so that attest/ does not import serve/
 * (serve/ sits above attest/ and answers readers with the seals): the report service of a chain is one.
 */
export interface WeekSealer {
  /** The chain whose weeks it seals. */
  readonly chain: AnyChainRecord;
  /** Seals the week ending at `end` (its reports built first); a week sealed before is answered as it was. */
  sealWeek(end: number): Promise<SealedWeekRow>;
  /** Calls `hook` after each new build of the latest window, before readers are served it. */
  onLatestBuilt(hook: (from: number, to: number) => Promise<void>): void;
}

export interface AttesterOptions {
  /**
   * The report service of each chain whose weeks are attested, Base's first: each chain's weeks are sealed
   * apart and attested on Base, one attestation per chain and week.
   */
  reports: WeekSealer | readonly WeekSealer[];
  /** The store the reports are built in; the attester reads and writes it on a connection of its own. */
  analytics: Analytics;
  /** The chain attested on (Base), by JSON-RPC. */
  rpc: string;
  /** The operator's attester key: its own, funded with ETH for gas and used for nothing else. */
  key: Hex;
  /**
   * Where Base's weeks close (weeks.ts); default: Monday 00:00 UTC on the clock of the chain's genesis block.
   * Another chain's close where its stored data says (calendar.ts).
   */
  closes?: WeekCloses;
  /** Base's first week close to attest; default: the last week closed when the attester first looks (each chain's). */
  from?: number;
  /** The most one transaction may cost, gas times its fee cap (src/services/attest-settings.ts has the default). */
  maxCostWei: bigint;
  intervalMs?: number;
  /** How long a transaction may wait unmined before it is replaced at a higher fee; default 10 minutes. */
  replaceAfterMs?: number;
}

const DEFAULT_REPLACE_AFTER_MS = 600_000;

/** A signed transaction's fees raised by a quarter: nodes take a replacement at the same nonce from a tenth up. */
function bumped(raw: Hex): Fees {
  const tx = parseTransaction(raw);
  return {
    maxFeePerGas: ((tx.maxFeePerGas ?? 0n) * 5n) / 4n,
    maxPriorityFeePerGas: ((tx.maxPriorityFeePerGas ?? 0n) * 5n) / 4n,
  };
}

/** What one step did to one week. */
export type WeekStep =
  | "sealed_only"
  | "sent"
  | "unsent"
  | "rebroadcast"
  | "attested"
  | "found"
  | "conflict"
  | "over_budget"
  | "registering"
  | "replaced";

/** Steps on one analytics database, one at a time, whichever attester takes them. */
const turns = new WeakMap<Analytics, Promise<unknown>>();

export class Attester {
  /** The key's side on the chain: signing, sending, and what the chain already holds. */
  private readonly chain: AttesterChain;
  private closes: WeekCloses | undefined;
  /** Each chain's first week close to look at, by slug, once known. */
  private readonly from = new Map<string, number>();
  private readonly sealers: readonly WeekSealer[];
  private timer: NodeJS.Timeout | undefined;
  /** When this process first sent or saw each transaction still unmined. */
  private readonly waiting = new Map<Hex, number>();
  private running: Promise<unknown> | undefined;
  /**
   * Its own connection (a fork of `analytics`): on the report service's, its writes could land inside a
   * build's transaction, and be undone with it.
   */
  private connection: Analytics | undefined;
  private stopped = false;

  constructor(private readonly options: AttesterOptions) {
    this.chain = new AttesterChain(options.rpc, options.key, options.maxCostWei);
    this.closes = options.closes;
    // Every chain's, Solana's too: its reports' leaves name the chain and the owner's 32-byte key (tree.ts).
    this.sealers = "sealWeek" in options.reports ? [options.reports as WeekSealer] : options.reports;
    const first = this.sealers[0];
    if (first && options.from !== undefined) this.from.set(first.chain.slug, options.from);
  }

  /** The attester's address: the one readers check an attestation was made by. */
  get address(): Address {
    return this.chain.address;
  }

  /** Looks every `intervalMs` and after each new latest window, until `stop`. */
  start(): void {
    const kick = () => {
      if (this.stopped) return;
      this.running ??= this.attestEveryChain()
        .catch((error: unknown) =>
          log("warn", "attesting failed: tried again later", { error: String(error) }),
        )
        .finally(() => {
          this.running = undefined;
        });
    };
    for (const sealer of this.sealers) sealer.onLatestBuilt(async () => kick());
    this.timer = setInterval(kick, this.options.intervalMs ?? DEFAULT_INTERVAL_MS);
    this.timer.unref();
    kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    this.connection?.close();
    this.connection = undefined;
  }

  private async db(): Promise<Analytics> {
    this.connection ??= await this.options.analytics.fork();
    return this.connection;
  }

  /** One step (`attestEveryChain`); what was done to the first chain's weeks (Base's), by week close. */
  async attestDue(): Promise<Map<number, WeekStep>> {
    const steps = await this.attestEveryChain();
    return steps.get(this.sealers[0]?.chain.slug ?? "") ?? new Map();
  }

  /**
   * One step for every closed week of every chain from its `from`: sealed, then attested, or its transaction
   * looked at; by chain slug and week close, what was done.
   */
  attestEveryChain(): Promise<Map<string, Map<number, WeekStep>>> {
    const { analytics } = this.options;
    const next = (turns.get(analytics) ?? Promise.resolve()).then(() => this.step());
    turns.set(
      analytics,
      next.catch(() => undefined),
    );
    return next;
  }

  /** Where `chain`'s weeks close. */
  private async calendar(chain: AnyChainRecord): Promise<WeekCalendar> {
    const db = await this.db();
    if (chain.clock.kind === "stamped") return new StoredCalendar(db, chain);
    this.chain.chainId ??= await this.chain.client.getChainId();
    this.closes ??= WeekCloses.mondays(
      BlockClock.anchored(0, Number((await this.chain.client.getBlock({ blockNumber: 0n })).timestamp)),
    );
    return new ClockCalendar(db, chain, this.closes);
  }

  private async step(): Promise<Map<string, Map<number, WeekStep>>> {
    const all = new Map<string, Map<number, WeekStep>>();
    // Each chain's weeks oldest first, the chains one after another (Base's first), one transaction at a time
    // across them all: a week's transaction is mined before the next is signed, whatever its chain, so that no
    // two of this key's transactions wait at once (a signer takes the next mined nonce, see `week`).
    for (const sealer of this.sealers) {
      const { chain } = sealer;
      const steps = new Map<number, WeekStep>();
      all.set(chain.slug, steps);
      const calendar = await this.calendar(chain);
      const last = await calendar.lastClose();
      if (last === undefined) continue;
      this.chain.chainId ??= await this.chain.client.getChainId();
      const from = this.from.get(chain.slug) ?? (await firstDue(await this.db(), chain, calendar, last));
      this.from.set(chain.slug, from);
      if (!(await this.chain.schemaRegistered(weekSchemaOf(chain)))) {
        for (
          let end: number | undefined = from;
          end !== undefined && end <= last;
          end = await calendar.next(end)
        )
          steps.set(end, "registering");
        return all;
      }
      for (
        let end: number | undefined = from;
        end !== undefined && end <= last;
        end = await calendar.next(end)
      ) {
        const step = await this.week(chain, calendar, await sealer.sealWeek(end));
        steps.set(end, step);
        if (step !== "sealed_only") return all;
      }
    }
    return all;
  }

  /** The chain's week's attestation a step further. */
  private async week(
    chain: AnyChainRecord,
    calendar: WeekCalendar,
    sealed: SealedWeekRow,
  ): Promise<WeekStep> {
    if (sealed.uid || sealed.conflict_uid) return "sealed_only";
    const end = sealed.end_block;
    let reverted = false;
    if (sealed.tx) {
      const receipt = await this.chain.client
        .getTransactionReceipt({ hash: sealed.tx })
        .catch(() => undefined);
      if (receipt?.status === "success") {
        const [event] = parseEventLogs({ abi: easAbi, eventName: "Attested", logs: receipt.logs });
        if (event) return this.attested(chain, sealed, event.args.uid, sealed.tx, "attested");
      }
      reverted = receipt !== undefined;
    }
    // The nonce before the chain is searched: an attestation of the week by another process of this key,
    // mined after the search, took this nonce, so the one signed below can never be mined beside it.
    const nonce = await this.chain.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    const searchFrom = await calendar.attestedFrom(end, (seconds) => this.chain.blockAt(seconds));
    const found = await this.chain.onChain(chain, end, searchFrom ?? BigInt(end));
    if (found) return this.attested(chain, sealed, found.uid, found.tx, "found");
    if (sealed.tx && !reverted && sealed.nonce !== null && sealed.raw_tx && nonce <= sealed.nonce) {
      // Waiting too long, its fee too low for the chain's now: the same nonce at a higher fee replaces it, so
      // that whichever of the two is mined, it is the only one.
      if (this.waitedTooLong(sealed.tx))
        return this.sign(chain, sealed, sealed.nonce, bumped(sealed.raw_tx), "replaced");
      await this.chain.broadcast(sealed.raw_tx, end);
      return "rebroadcast";
    }
    return this.sign(chain, sealed, nonce);
  }

  /** Records the attestation `uid` of the week, unless it states another root (another store's reports). */
  private async attested(
    chain: AnyChainRecord,
    sealed: SealedWeekRow,
    uid: Hex,
    tx: Hex,
    step: WeekStep,
  ): Promise<WeekStep> {
    const attestation = await this.chain.client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [uid],
    });
    const week = decodeWeek(attestation.data, attestation.schema);
    if (week.reportsRoot.toLowerCase() !== sealed.root.toLowerCase()) {
      log(
        "error",
        "this key attested the week under another root: its reports here are not the attested ones",
        {
          chain: chain.slug,
          end_block: sealed.end_block,
          uid,
          attested_root: week.reportsRoot,
          sealed_root: sealed.root,
        },
      );
      await recordConflict(await this.db(), chain, sealed.end_block, uid);
      return "conflict";
    }
    await recordAttested(await this.db(), chain, sealed.end_block, {
      chainId: this.chain.chainId as number,
      attester: this.address,
      uid,
      tx,
      time: new Date(Number(attestation.time) * 1000),
    });
    log("info", "week attested", {
      chain: chain.slug,
      end_block: sealed.end_block,
      uid,
      tx,
      root: sealed.root,
    });
    return step;
  }

  /** Whether the transaction `tx` has waited unmined longer than `replaceAfterMs` since this process first sent or saw it. */
  private waitedTooLong(tx: Hex): boolean {
    const now = Date.now();
    const since = this.waiting.get(tx) ?? now;
    this.waiting.set(tx, since);
    return now - since >= (this.options.replaceAfterMs ?? DEFAULT_REPLACE_AFTER_MS);
  }

  /** Signs the week's attestation, stores the transaction, then broadcasts it. */
  private async sign(
    chain: AnyChainRecord,
    sealed: SealedWeekRow,
    nonce: number,
    minFees?: Fees,
    step: WeekStep = "sent",
  ): Promise<WeekStep> {
    const data = attestCall(chain, sealed);
    const signed = await this.chain.signed(EAS_ADDRESS, data, nonce, sealed.end_block, minFees);
    if (!signed) return "over_budget";
    await recordSigned(await this.db(), chain, sealed.end_block, {
      chainId: this.chain.chainId as number,
      attester: this.address,
      nonce: signed.nonce,
      tx: signed.hash,
      raw: signed.raw,
    });
    this.waiting.set(signed.hash, Date.now());
    return (await this.chain.broadcast(signed.raw, sealed.end_block)) ? step : "unsent";
  }
}
