/**
 * The attester's key on the chain: what it signs and sends, within its budget, and what the chain already
 * holds of it (an attestation of a week, the week schema). Apart from the attester's steps (attester.ts), which
 * decide what each week needs next, and from the store, which this never reads.
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
  zeroHash,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { EAS_ADDRESS, easAbi, SCHEMA_REGISTRY_ADDRESS, schemaRegistryAbi } from "../../chain/eas/index.ts";
import { log } from "../../common/log.ts";
import {
  decodeWeek,
  encodeWeek,
  WEEK_SCHEMA_RESOLVER,
  WEEK_SCHEMA_REVOCABLE,
  weekSchemaOf,
} from "./schema.ts";
import type { SealedWeekRow } from "./store.ts";

/** Blocks one log query spans: many RPC providers refuse wider ones. */
const LOG_SPAN = 10_000n;
/** Gas estimates are raised by this much (percent): the estimate is the exact cost of the state it ran on. */
const GAS_MARGIN = 125n;

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);

const attestedEvent = parseAbiItem(
  "event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)",
);

/** The call that attests a sealed week of `chain` under its week schema: what the attester signs for it. */
export function attestCall(chain: Pick<AnyChainRecord, "slug" | "caip2">, sealed: SealedWeekRow): Hex {
  const schema = weekSchemaOf(chain);
  return encodeFunctionData({
    abi: easAbi,
    functionName: "attest",
    args: [
      {
        schema: schema.uid,
        data: {
          recipient: "0x0000000000000000000000000000000000000000",
          expirationTime: 0n,
          revocable: WEEK_SCHEMA_REVOCABLE,
          refUID: zeroHash,
          data: encodeWeek({
            ...(schema.chain === undefined ? {} : { chain: schema.chain }),
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
}

export class AttesterChain {
  readonly client: PublicClient;
  private readonly account: ReturnType<typeof privateKeyToAccount>;
  /** The chain's id, read at the attester's first step. */
  chainId: number | undefined;
  /** Each schema's registration sent, by its UID, looked at again next step. */
  private readonly registering = new Map<Hex, Hex>();

  constructor(
    rpc: string,
    key: Hex,
    /** The most one transaction may cost, gas times its fee cap. */
    private readonly maxCostWei: bigint,
  ) {
    this.client = createPublicClient({ transport: http(rpc) }) as PublicClient;
    this.account = privateKeyToAccount(key);
  }

  /** The attester's address: the one readers check an attestation was made by. */
  get address(): Address {
    return this.account.address;
  }

  /**
   * This key's attestation of `chain`'s week ending at `end`, if the chain attested on has one, searched from its
   * block `since` (none is older than the week's close).
   */
  async onChain(
    chain: Pick<AnyChainRecord, "slug" | "caip2">,
    end: number,
    since: bigint,
  ): Promise<{ uid: Hex; tx: Hex } | undefined> {
    const schema = weekSchemaOf(chain);
    // Not viem's cached head (4 s): a block mined since would be left out of the search.
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    for (let from = since; from <= head; from += LOG_SPAN) {
      const logs = await this.client.getLogs({
        address: EAS_ADDRESS,
        event: attestedEvent,
        args: { attester: this.address, schemaUID: schema.uid },
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
        const week = decodeWeek(attestation.data, schema.uid);
        if (week.endBlock === end && week.chain === schema.chain) return { uid, tx: entry.transactionHash };
      }
    }
    return undefined;
  }

  /**
   * The first block of the chain attested on whose time is at or after `seconds` (its head when none is yet):
   * where a search for an attestation made after that time starts. A binary search over headers, about 25 reads
   * on Base Mainnet, done only when a week's transaction must be looked for.
   */
  async blockAt(seconds: number): Promise<bigint> {
    // Found once per time: a week waiting for its attestation is looked at every step.
    const known = this.blocksAt.get(seconds);
    if (known !== undefined) return known;
    const timeOf = async (n: bigint) => (await this.client.getBlock({ blockNumber: n })).timestamp;
    let hi = await this.client.getBlockNumber({ cacheTime: 0 });
    // Not yet made: no block is kept, the next look searches again.
    if ((await timeOf(hi)) < BigInt(seconds)) return hi;
    // The node's first block: a devnet (or a pruned node) starts above 0.
    let lo = (await this.client.getBlock({ blockTag: "earliest" })).number;
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      if ((await timeOf(mid)) >= BigInt(seconds)) hi = mid;
      else lo = mid + 1n;
    }
    this.blocksAt.set(seconds, lo);
    return lo;
  }

  /** `blockAt`'s answers, by time. */
  private readonly blocksAt = new Map<number, bigint>();

  /**
   * A transaction to `to` signed at `nonce`, within the budget; undefined (logged) when over it. The nonce is
   * the next mined one, not the next pending: two processes signing at once then sign the same nonce, and at
   * most one of their transactions is mined.
   */
  async signed(
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
    const budget = this.maxCostWei;
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
  async broadcast(raw: Hex, end?: number): Promise<boolean> {
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
  async schemaRegistered(schema: { schema: string; uid: Hex }): Promise<boolean> {
    const record = await this.client.readContract({
      address: SCHEMA_REGISTRY_ADDRESS,
      abi: schemaRegistryAbi,
      functionName: "getSchema",
      args: [schema.uid],
    });
    if (record.uid !== zeroHash) return true;
    const registering = this.registering.get(schema.uid);
    if (registering) {
      const receipt = await this.client.getTransactionReceipt({ hash: registering }).catch(() => undefined);
      if (!receipt) return false;
    }
    const data = encodeFunctionData({
      abi: schemaRegistryAbi,
      functionName: "register",
      args: [schema.schema, WEEK_SCHEMA_RESOLVER, WEEK_SCHEMA_REVOCABLE],
    });
    const nonce = await this.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    const signed = await this.signed(SCHEMA_REGISTRY_ADDRESS, data, nonce);
    if (signed && (await this.broadcast(signed.raw))) this.registering.set(schema.uid, signed.hash);
    return false;
  }
}
