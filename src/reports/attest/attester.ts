/**
 * The attester: at the close of each week (weeks.ts), once the week's last block is final in the analytics
 * database, it seals the week's reports (seal.ts) and attests the seal on Base through EAS, signed by the
 * operator's own key, which pays its own gas.
 *
 * One attestation per week, however often the week is looked at, by however many processes:
 * - the transaction is signed and stored (store.ts) before it is broadcast, and a retry sends those very
 *   bytes again, so a crash or an RPC error between the two never makes a second one;
 * - before it signs anew (the stored one reverted, or its nonce went to another transaction), it looks on the
 *   chain for an attestation of the week by the same key, and takes that one if there is;
 * - two processes signing at once sign the same nonce, so at most one of their transactions is mined.
 * Each step (`attestDue`) does what it can without waiting: a transaction sent is looked at again next time.
 */
import {
  type Address,
  BaseError,
  createPublicClient,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  parseAbiItem,
  parseEventLogs,
  parseTransaction,
  zeroHash,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Analytics } from "../../analytics/duckdb.ts";
import { WEEK_BLOCKS } from "../../chain/base.ts";
import { EAS_ADDRESS, easAbi, SCHEMA_REGISTRY_ADDRESS, schemaRegistryAbi } from "../../chain/eas/index.ts";
import { log } from "../../common/log.ts";
import {
  decodeWeek,
  encodeWeek,
  WEEK_SCHEMA,
  WEEK_SCHEMA_RESOLVER,
  WEEK_SCHEMA_REVOCABLE,
  WEEK_SCHEMA_UID,
} from "./schema.ts";
import { recordAttested, recordConflict, recordSigned, type SealedWeekRow } from "./store.ts";
import { isWeekClose, lastWeekClose, mondayCloses } from "./weeks.ts";

/** How often the attester looks, besides each new build of the latest window. */
export const DEFAULT_INTERVAL_MS = 30_000;
/** Blocks one log query spans: many RPC providers refuse wider ones. */
const LOG_SPAN = 10_000n;
/** Gas estimates are raised by this much (percent): the estimate is the exact cost of the state it ran on. */
const GAS_MARGIN = 125n;

/**
 * What the attester needs of the report service, declared here so that attest/ does not import serve/
 * (serve/ sits above attest/ and answers readers with the seals): the report service is one.
 */
export interface WeekSealer {
  /** Seals the week ending at `end` (its reports built first); a week sealed before is answered as it was. */
  sealWeek(end: number): Promise<SealedWeekRow>;
  /** Calls `hook` after each new build of the latest window, before readers are served it. */
  onLatestBuilt(hook: (from: number, to: number) => Promise<void>): void;
}

export interface AttesterOptions {
  reports: WeekSealer;
  /** The store the reports are built in; the attester reads and writes it on a connection of its own. */
  analytics: Analytics;
  /** The chain attested on (Base), by JSON-RPC. */
  rpc: string;
  /** The operator's attester key: its own, funded with ETH for gas and used for nothing else. */
  key: Hex;
  /** Where weeks close (weeks.ts); default: Monday 00:00 UTC by the chain's genesis block. */
  closes?: number;
  /** The first week close to attest; default: the last week closed when the attester first looks. */
  from?: number;
  /** The most one transaction may cost, gas times its fee cap (src/services/attest-settings.ts has the default). */
  maxCostWei: bigint;
  intervalMs?: number;
  /** How long a transaction may wait unmined before it is replaced at a higher fee; default 10 minutes. */
  replaceAfterMs?: number;
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

const DEFAULT_REPLACE_AFTER_MS = 600_000;

const max = (a: bigint, b: bigint) => (a > b ? a : b);

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

const attestedEvent = parseAbiItem(
  "event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)",
);

/** Steps on one analytics database, one at a time, whichever attester takes them. */
const turns = new WeakMap<Analytics, Promise<unknown>>();

export class Attester {
  private readonly client: PublicClient;
  private readonly account: ReturnType<typeof privateKeyToAccount>;
  private chainId: number | undefined;
  private closes: number | undefined;
  private from: number | undefined;
  private registering: Hex | undefined;
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
    this.client = createPublicClient({ transport: http(options.rpc) }) as PublicClient;
    this.account = privateKeyToAccount(options.key);
    this.closes = options.closes;
    this.from = options.from;
  }

  /** The attester's address: the one readers check an attestation was made by. */
  get address(): Address {
    return this.account.address;
  }

  /** Looks every `intervalMs` and after each new latest window, until `stop`. */
  start(): void {
    const kick = () => {
      if (this.stopped) return;
      this.running ??= this.attestDue()
        .catch((error: unknown) =>
          log("warn", "attesting failed: tried again later", { error: String(error) }),
        )
        .finally(() => {
          this.running = undefined;
        });
    };
    this.options.reports.onLatestBuilt(async () => kick());
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

  /**
   * One step for every closed week from `from`: sealed, then attested, or its transaction looked at; by
   * week close, what was done.
   */
  attestDue(): Promise<Map<number, WeekStep>> {
    const { analytics } = this.options;
    const next = (turns.get(analytics) ?? Promise.resolve()).then(() => this.step());
    turns.set(
      analytics,
      next.catch(() => undefined),
    );
    return next;
  }

  private async step(): Promise<Map<number, WeekStep>> {
    const steps = new Map<number, WeekStep>();
    const checkpoint = await (await this.db()).one<{ block: bigint | null }>(
      "SELECT max(block_number) AS block FROM checkpoints WHERE chain = 'base'",
    );
    if (checkpoint?.block == null) return steps;
    this.chainId ??= await this.client.getChainId();
    this.closes ??= mondayCloses(Number((await this.client.getBlock({ blockNumber: 0n })).timestamp));
    const last = lastWeekClose(Number(checkpoint.block), this.closes);
    if (last === undefined) return steps;
    this.from ??= await this.firstDue(last);
    if (!(await this.schemaRegistered())) {
      for (let end = this.from; end <= last; end += WEEK_BLOCKS) steps.set(end, "registering");
      return steps;
    }
    // Oldest first, one at a time: a week's transaction is mined before the next is signed, so that no two
    // of this key's transactions wait at once (a signer takes the next mined nonce, see `week`).
    for (let end = this.from; end <= last; end += WEEK_BLOCKS) {
      const step = await this.week(await this.options.reports.sealWeek(end));
      steps.set(end, step);
      if (step !== "sealed_only") break;
    }
    return steps;
  }

  /**
   * Where to pick up at the first look: a week sealed and not attested yet, else the week after the last one
   * attested (weeks that closed while the service was down), else the last week closed.
   */
  private async firstDue(last: number): Promise<number> {
    const closes = this.closes as number;
    const rows = await (await this.db()).all<{ end_block: number; attested: boolean }>(
      "SELECT end_block::DOUBLE AS end_block, uid IS NOT NULL AS attested FROM attestations WHERE conflict_uid IS NULL",
    );
    const weeks = rows.filter((r) => isWeekClose(r.end_block, closes) && r.end_block <= last);
    const pending = weeks.filter((r) => !r.attested).map((r) => r.end_block);
    const after = Math.max(-1, ...weeks.filter((r) => r.attested).map((r) => r.end_block)) + WEEK_BLOCKS;
    return Math.min(last, ...pending, ...(after >= WEEK_BLOCKS && after <= last ? [after] : []));
  }

  /** The week's attestation a step further. */
  private async week(sealed: SealedWeekRow): Promise<WeekStep> {
    if (sealed.uid || sealed.conflict_uid) return "sealed_only";
    const end = sealed.end_block;
    let reverted = false;
    if (sealed.tx) {
      const receipt = await this.client.getTransactionReceipt({ hash: sealed.tx }).catch(() => undefined);
      if (receipt?.status === "success") {
        const [event] = parseEventLogs({ abi: easAbi, eventName: "Attested", logs: receipt.logs });
        if (event) return this.attested(sealed, event.args.uid, sealed.tx, "attested");
      }
      reverted = receipt !== undefined;
    }
    // The nonce before the chain is searched: an attestation of the week by another process of this key,
    // mined after the search, took this nonce, so the one signed below can never be mined beside it.
    const nonce = await this.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    const found = await this.onChain(end);
    if (found) return this.attested(sealed, found.uid, found.tx, "found");
    if (sealed.tx && !reverted && sealed.nonce !== null && sealed.raw_tx && nonce <= sealed.nonce) {
      // Waiting too long, its fee too low for the chain's now: the same nonce at a higher fee replaces it, so
      // that whichever of the two is mined, it is the only one.
      if (this.waitedTooLong(sealed.tx))
        return this.sign(sealed, sealed.nonce, bumped(sealed.raw_tx), "replaced");
      await this.broadcast(sealed.raw_tx, end);
      return "rebroadcast";
    }
    return this.sign(sealed, nonce);
  }

  /** Records the attestation `uid` of the week, unless it states another root (another store's reports). */
  private async attested(sealed: SealedWeekRow, uid: Hex, tx: Hex, step: WeekStep): Promise<WeekStep> {
    const attestation = await this.client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [uid],
    });
    const week = decodeWeek(attestation.data);
    if (week.reportsRoot.toLowerCase() !== sealed.root.toLowerCase()) {
      log(
        "error",
        "this key attested the week under another root: its reports here are not the attested ones",
        {
          end_block: sealed.end_block,
          uid,
          attested_root: week.reportsRoot,
          sealed_root: sealed.root,
        },
      );
      await recordConflict(await this.db(), sealed.end_block, uid);
      return "conflict";
    }
    await recordAttested(await this.db(), sealed.end_block, {
      chainId: this.chainId as number,
      attester: this.address,
      uid,
      tx,
      time: new Date(Number(attestation.time) * 1000),
    });
    log("info", "week attested", { end_block: sealed.end_block, uid, tx, root: sealed.root });
    return step;
  }

  /** This key's attestation of the week ending at `end`, if the chain has one (made after the week closed). */
  private async onChain(end: number): Promise<{ uid: Hex; tx: Hex } | undefined> {
    // Not viem's cached head (4 s): a block mined since would be left out of the search.
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    for (let from = BigInt(end); from <= head; from += LOG_SPAN) {
      const logs = await this.client.getLogs({
        address: EAS_ADDRESS,
        event: attestedEvent,
        args: { attester: this.address, schemaUID: WEEK_SCHEMA_UID },
        fromBlock: from,
        toBlock: from + LOG_SPAN - 1n < head ? from + LOG_SPAN - 1n : head,
      });
      for (const entry of logs) {
        const uid = entry.args.uid as Hex;
        const attestation = await this.client.readContract({
          address: EAS_ADDRESS,
          abi: easAbi,
          functionName: "getAttestation",
          args: [uid],
        });
        if (decodeWeek(attestation.data).endBlock === end) return { uid, tx: entry.transactionHash };
      }
    }
    return undefined;
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
    sealed: SealedWeekRow,
    nonce: number,
    minFees?: Fees,
    step: WeekStep = "sent",
  ): Promise<WeekStep> {
    const data = encodeFunctionData({
      abi: easAbi,
      functionName: "attest",
      args: [
        {
          schema: WEEK_SCHEMA_UID,
          data: {
            recipient: "0x0000000000000000000000000000000000000000",
            expirationTime: 0n,
            revocable: WEEK_SCHEMA_REVOCABLE,
            refUID: zeroHash,
            data: encodeWeek({
              startBlock: sealed.start_block,
              endBlock: sealed.end_block,
              methodology: sealed.methodology,
              reportsRoot: sealed.root,
              reports: sealed.reports,
              feedHash: sealed.feed_hash,
              publicUrl: sealed.public_url,
            }),
            value: 0n,
          },
        },
      ],
    });
    const signed = await this.signed(EAS_ADDRESS, data, nonce, sealed.end_block, minFees);
    if (!signed) return "over_budget";
    await recordSigned(await this.db(), sealed.end_block, {
      chainId: this.chainId as number,
      attester: this.address,
      nonce: signed.nonce,
      tx: signed.hash,
      raw: signed.raw,
    });
    this.waiting.set(signed.hash, Date.now());
    return (await this.broadcast(signed.raw, sealed.end_block)) ? step : "unsent";
  }

  /**
   * A transaction to `to` signed at `nonce`, within the budget; undefined (logged) when over it. The nonce is
   * the next mined one, not the next pending: two processes signing at once then sign the same nonce, and at
   * most one of their transactions is mined.
   */
  private async signed(
    to: Address,
    data: Hex,
    nonce: number,
    end?: number,
    minFees?: Fees,
  ): Promise<{ raw: Hex; hash: Hex; nonce: number } | undefined> {
    const [gas, estimated, balance] = await Promise.all([
      this.client.estimateGas({ account: this.address, to, data }),
      this.client.estimateFeesPerGas(),
      this.client.getBalance({ address: this.address }),
    ]);
    const fees = {
      maxFeePerGas: max(estimated.maxFeePerGas, minFees?.maxFeePerGas ?? 0n),
      maxPriorityFeePerGas: max(estimated.maxPriorityFeePerGas, minFees?.maxPriorityFeePerGas ?? 0n),
    };
    const gasLimit = (gas * GAS_MARGIN) / 100n;
    const cost = gasLimit * fees.maxFeePerGas;
    const budget = this.options.maxCostWei;
    if (cost > budget || cost > balance) {
      log("error", "not attesting: the transaction would cost more than the attester may spend or holds", {
        end_block: end,
        attester: this.address,
        cost_wei: cost.toString(),
        budget_wei: budget.toString(),
        balance_wei: balance.toString(),
      });
      return undefined;
    }
    const raw = await this.account.signTransaction({
      chainId: this.chainId as number,
      type: "eip1559",
      to,
      data,
      nonce,
      gas: gasLimit,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return { raw, hash: keccak256(raw), nonce };
  }

  /** Sends signed bytes; an error (the RPC down, the nonce taken) is logged and left to the next step. */
  private async broadcast(raw: Hex, end?: number): Promise<boolean> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
      return true;
    } catch (error) {
      const message =
        error instanceof BaseError
          ? [error.shortMessage, error.details].filter(Boolean).join(": ")
          : String(error);
      // The node holds these very bytes already: sent before.
      if (/already known|already imported/i.test(message)) return true;
      log("warn", "an attester transaction was not sent: tried again later", {
        end_block: end,
        error: message,
      });
      return false;
    }
  }

  /**
   * Whether the week schema is registered; when it is not, registers it (one transaction, looked at again
   * next step). Registering is idempotent on chain: a second registration of the same schema reverts.
   */
  private async schemaRegistered(): Promise<boolean> {
    const record = await this.client.readContract({
      address: SCHEMA_REGISTRY_ADDRESS,
      abi: schemaRegistryAbi,
      functionName: "getSchema",
      args: [WEEK_SCHEMA_UID],
    });
    if (record.uid !== zeroHash) return true;
    if (this.registering) {
      const receipt = await this.client
        .getTransactionReceipt({ hash: this.registering })
        .catch(() => undefined);
      if (!receipt) return false;
    }
    const data = encodeFunctionData({
      abi: schemaRegistryAbi,
      functionName: "register",
      args: [WEEK_SCHEMA, WEEK_SCHEMA_RESOLVER, WEEK_SCHEMA_REVOCABLE],
    });
    const nonce = await this.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    const signed = await this.signed(SCHEMA_REGISTRY_ADDRESS, data, nonce);
    if (signed && (await this.broadcast(signed.raw))) this.registering = signed.hash;
    return false;
  }
}
