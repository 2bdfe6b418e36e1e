/**
 * Settlements committed in groups (issue 66): the exact EIP-3009 settlements of one signer that become ready
 * while a transaction of theirs is in flight go together into the next transaction, one
 * `transferWithAuthorization` call each through Multicall3's `aggregate3`, every call with `allowFailure`,
 * the way a database commits a group.
 *
 * - **Nothing in flight: at once, alone.** The first settlement takes the single path (`alone`: the token's
 *   own `transferWithAuthorization` in a transaction of its own), exactly as without groups, and is in flight
 *   until its receipt comes (or its wait ends).
 * - **Something in flight: the next group.** A settlement that arrives meanwhile waits; when nothing is in
 *   flight any more, everything waiting is sent: one transaction per group, a group being the waiting
 *   settlements with the same ERC-8021 suffix (the codes end the transaction's calldata, where readers find
 *   them, so payments with other codes never share a transaction), at most `MAX_GROUP` each; a group of one
 *   takes the single path. A group that fills while a transaction is in flight is sent at once, so a busy
 *   facilitator is never held below `MAX_GROUP` settlements a block.
 * - **Each its own outcome.** The group is simulated first (one `eth_call` of the `aggregate3`): a call that
 *   would fail is not sent, and its settlement is refused with the token's reason as the single path's gas
 *   estimate would refuse it (nothing broadcast, the authorization stays usable). What is sent fails or
 *   succeeds per call on chain: the receipt is read per payment (its own `AuthorizationUsed` and `Transfer`).
 * - **Per payment, as alone.** Every call's ledger row is moved to `pending` with the group's hash before
 *   the broadcast, and back when the node refuses it; a keyed settlement reserves its share of the group's
 *   worst case (a member its key cannot cover is left out and refused `key_over_budget`, the rest sent);
 *   the receipt's cost is shared equally (`settlementCost`, outcome.ts).
 * - **Bounds.** At most `MAX_GROUP` calls, and a transaction whose gas limit passes `MAX_GROUP_GAS` is split
 *   in two before anything is signed.
 *
 * The upto proxy's `settle` is never grouped: its witness binds `msg.sender` to the facilitator, so from
 * Multicall3 it reverts (`UnauthorizedFacilitator`). The exact Permit2 proxy may be called by anyone, but its
 * settlements are the SDK's scheme's, which reads a transaction's status as the payment's; they stay on the
 * single path (docs/facilitator.md, "Settlements in groups").
 */

import { eip3009ABI } from "@x402/evm";
import {
  type Chain,
  concat,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  multicall3Abi,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { MULTICALL3_ADDRESS } from "../chain/base.ts";
import { pollReceipt } from "../chain/receipt.ts";
import { log } from "../common/log.ts";
import { receiptCost } from "./outcome.ts";
import type { ContractCall, SignerHooks } from "./signer.ts";
import type { ReceiptBlocks } from "./signer-hooks.ts";
import type { Submitter } from "./submitter.ts";

/** The most calls in one group. */
export const MAX_GROUP = 50;
/**
 * The most gas one group's transaction may ask for: about 50 transfers (each 60-90k with the group's
 * share of the 21,000), far below a block's gas limit (Base's is hundreds of millions; anvil's 30 million).
 */
export const MAX_GROUP_GAS = 6_000_000n;

/** A settlement's call, as the single path would send it. */
export interface GroupCall {
  /** The token. */
  address: `0x${string}`;
  args: readonly unknown[];
  /** The payment's ERC-8021 suffix: only settlements with the same one share a transaction. */
  dataSuffix?: Hex;
}

/** What a grouped settlement's transaction did: mined (its receipt), or no receipt within the wait. */
export type GroupedOutcome =
  | { transaction: Hex; receipt: TransactionReceipt; size: number }
  | { transaction: Hex; receipt: undefined; size: number; message: string };

export interface SettlementGroups {
  /**
   * Runs `alone` (the single path) when nothing is in flight; otherwise waits for the next group and answers
   * its outcome. Throws when nothing was broadcast for this call (its simulation failed, its key's budget,
   * the node refused the transaction), with the reason in the message.
   */
  settle<T>(call: GroupCall, alone: () => Promise<T>): Promise<{ alone: T } | { grouped: GroupedOutcome }>;
  /** Settlements waiting for the next group. */
  waiting(): number;
  /** Settles once at least `n` settlements wait for the next group (they joined it; none was sent yet). */
  untilWaiting(n: number): Promise<void>;
}

export interface GroupOptions {
  client: PublicClient<Transport, Chain>;
  submitter: Submitter;
  /** The signer's hooks, run for each call of a group as for a transaction of its own. */
  hooks: SignerHooks;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
  /** Where a group's receipt is kept, each call's share, for the settlements that record it. */
  receiptBlocks: ReceiptBlocks;
  maxGroup?: number;
}

interface Waiting {
  call: GroupCall;
  alone: () => Promise<unknown>;
  resolve(value: { alone: unknown } | { grouped: GroupedOutcome }): void;
  reject(error: unknown): void;
}

/** A group's members whose keys could not cover their share: left out, the rest sent. */
class MembersRefused extends Error {
  constructor(readonly refused: Map<Waiting, unknown>) {
    super(`${refused.size} settlements of the group were refused before signing`);
  }
}

class GroupTooLarge extends Error {}

export function createSettlementGroups(options: GroupOptions): SettlementGroups {
  const { client, submitter, hooks } = options;
  const maxGroup = options.maxGroup ?? MAX_GROUP;
  let inFlight = 0;
  let queue: Waiting[] = [];
  /** Who waits for the queue to reach a length (`untilWaiting`): told as settlements join it. */
  let watchers: { n: number; resolve: () => void }[] = [];
  const notify = () => {
    const reached = watchers.filter((w) => queue.length >= w.n);
    watchers = watchers.filter((w) => queue.length < w.n);
    for (const w of reached) w.resolve();
  };

  /** Runs `send` as a transaction in flight; the last to end sends what waits. */
  const track = async (send: () => Promise<void>): Promise<void> => {
    inFlight++;
    try {
      await send();
    } finally {
      inFlight--;
      if (inFlight === 0) flush();
    }
  };

  const flush = () => {
    if (queue.length === 0) return;
    const taken = queue;
    queue = [];
    for (const group of partition(taken, maxGroup)) void track(() => sendGroup(group));
  };

  const alone = async (member: Waiting) => {
    try {
      member.resolve({ alone: await member.alone() });
    } catch (error) {
      member.reject(error);
    }
  };

  /** One group: simulated, its refused calls answered, the rest sent together (or alone, if one is left). */
  const sendGroup = async (members: Waiting[]): Promise<void> => {
    if (members.length === 1) return alone(members[0] as Waiting);
    let sendable: Waiting[];
    try {
      sendable = await simulate(client, submitter.address, members);
    } catch (error) {
      for (const m of members) m.reject(error);
      return;
    }
    if (sendable.length <= 1) return sendable.length === 1 ? alone(sendable[0] as Waiting) : undefined;
    let transaction: Hex;
    try {
      transaction = await submitGroup(submitter, hooks, sendable);
    } catch (error) {
      if (error instanceof MembersRefused) {
        for (const [m, why] of error.refused) m.reject(why);
        return sendGroup(sendable.filter((m) => !error.refused.has(m)));
      }
      if (error instanceof GroupTooLarge) {
        const half = Math.ceil(sendable.length / 2);
        await Promise.all([sendGroup(sendable.slice(0, half)), sendGroup(sendable.slice(half))]);
        return;
      }
      for (const m of sendable) m.reject(error);
      return;
    }
    const size = sendable.length;
    log("info", "settlement group sent", { transaction, size });
    let receipt: TransactionReceipt | undefined;
    let message = `no receipt for ${transaction} within ${options.confirmationTimeoutMs} ms`;
    try {
      receipt = await pollReceipt(
        client,
        transaction,
        options.confirmationTimeoutMs,
        options.pollingIntervalMs,
      );
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    if (receipt) keepShares(options.receiptBlocks, receipt, size);
    for (const m of sendable) {
      m.resolve({
        grouped: receipt ? { transaction, receipt, size } : { transaction, receipt, size, message },
      });
    }
  };

  return {
    settle<T>(call: GroupCall, run: () => Promise<T>) {
      return new Promise<{ alone: T } | { grouped: GroupedOutcome }>((resolve, reject) => {
        const member: Waiting = {
          call,
          alone: run,
          resolve: resolve as Waiting["resolve"],
          reject,
        };
        if (inFlight === 0) {
          void track(() => alone(member));
          return;
        }
        queue.push(member);
        notify();
        // A full group does not wait for the transaction in flight.
        if (queue.length >= maxGroup) flush();
      });
    },
    waiting: () => queue.length,
    untilWaiting: (n) =>
      queue.length >= n ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ n, resolve })),
  };
}

/** The members whose calls succeed in one `eth_call` of the group; the others are refused with the reason. */
async function simulate(
  client: PublicClient<Transport, Chain>,
  account: `0x${string}`,
  members: Waiting[],
): Promise<Waiting[]> {
  const data = await client.call({ account, to: MULTICALL3_ADDRESS, data: aggregate3Data(members) });
  const results = decodeFunctionResult({
    abi: multicall3Abi,
    functionName: "aggregate3",
    data: data.data ?? "0x",
  });
  return members.filter((m, i) => {
    const result = results[i];
    if (result?.success) return true;
    m.reject(new Error(`execution reverted: ${revertReason(result?.returnData ?? "0x")}`));
    return false;
  });
}

/**
 * One transaction for the members, through the submitter (one nonce sequence), with the signer's hooks run
 * for each member's call: its share of the worst case reserved, its row pending with the hash before the
 * broadcast, and back when the node refuses it.
 */
function submitGroup(submitter: Submitter, hooks: SignerHooks, members: Waiting[]): Promise<Hex> {
  const suffix = members[0]?.call.dataSuffix;
  const data = aggregate3Data(members);
  const calls = members.map((m) => contractCall(m.call));
  return submitter.submit(
    { to: MULTICALL3_ADDRESS, data: suffix ? concat([data, suffix]) : data },
    {
      async beforeSign(cost) {
        if (cost.gas > MAX_GROUP_GAS) throw new GroupTooLarge();
        const beforeSign = hooks.beforeSign;
        if (!beforeSign) return;
        // Each keyed call reserves its share of the worst case.
        const share = { gas: ceilDiv(cost.gas, BigInt(calls.length)), maxFeePerGas: cost.maxFeePerGas };
        const reserved = await Promise.allSettled(calls.map((call) => beforeSign(call, share)));
        const refused = new Map<Waiting, unknown>();
        reserved.forEach((r, i) => {
          if (r.status === "rejected") refused.set(members[i] as Waiting, r.reason);
        });
        if (refused.size > 0) throw new MembersRefused(refused);
      },
      async beforeBroadcast(tx) {
        // Every row pending with the group's hash, or none: a row recorded alone would wait for a
        // transaction that is never sent.
        const recorded = await Promise.allSettled(calls.map((call) => hooks.beforeBroadcast(call, tx)));
        const failed = recorded.find((r) => r.status === "rejected");
        if (!failed) return;
        await Promise.allSettled(
          calls.filter((_, i) => recorded[i]?.status === "fulfilled").map((c) => hooks.onRejected(c, tx)),
        );
        throw failed.reason;
      },
      async onRejected(tx) {
        await Promise.all(calls.map((call) => hooks.onRejected(call, tx)));
      },
    },
  );
}

/** A group's receipt: each call's share, for the settlement that records it (broadcast.ts takes one each). */
function keepShares(receiptBlocks: ReceiptBlocks, receipt: TransactionReceipt, size: number): void {
  const share = (x: bigint) => ceilDiv(x, BigInt(size));
  receiptBlocks.set(receipt.transactionHash.toLowerCase(), {
    block: receipt.blockNumber,
    cost: share(receiptCost(receipt)),
    gasUsed: share(receipt.gasUsed),
    readers: size,
  });
}

/** The waiting settlements in groups of the same suffix, at most `max` each, in arrival order. */
function partition(waiting: Waiting[], max: number): Waiting[][] {
  const bySuffix = new Map<string, Waiting[]>();
  for (const w of waiting) {
    const key = (w.call.dataSuffix ?? "").toLowerCase();
    const list = bySuffix.get(key) ?? [];
    list.push(w);
    bySuffix.set(key, list);
  }
  const groups: Waiting[][] = [];
  for (const list of bySuffix.values()) {
    for (let i = 0; i < list.length; i += max) groups.push(list.slice(i, i + max));
  }
  return groups;
}

function contractCall(call: GroupCall): ContractCall {
  return { address: call.address, functionName: "transferWithAuthorization", args: call.args };
}

/** Multicall3's `aggregate3` of the members' calls, each allowed to fail on its own. */
function aggregate3Data(members: Waiting[]): Hex {
  return encodeFunctionData({
    abi: multicall3Abi,
    functionName: "aggregate3",
    args: [
      members.map((m) => ({
        target: m.call.address,
        allowFailure: true,
        callData: encodeFunctionData({
          abi: eip3009ABI,
          functionName: "transferWithAuthorization",
          args: m.call.args as never,
        }),
      })),
    ],
  });
}

/** A failed call's reason, as the token said it (`Error(string)`), else its raw data. */
function revertReason(data: Hex): string {
  if (data === "0x") return "no reason given";
  try {
    const decoded = decodeErrorResult({ abi: [], data });
    return decoded.args?.map(String).join(", ") || decoded.errorName;
  } catch {
    return data;
  }
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
