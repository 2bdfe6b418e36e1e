/**
 * The buyer simulator: plays the plan's actions on the devnet with real x402 payments (`@x402/fetch`:
 * 402, an EIP-3009 signature for `exact` or a Permit2 one for metered `upto` endpoints and for the
 * Permit2 payers' `exact`, the merchant's facilitator settles on chain; half the agents pay through the
 * hosts' MCP face instead, `viaMcp`; the channel agents through a channel, a voucher a call, channels.ts)
 * and real USDC transfers. A wallet approves Permit2 once, before its first payment through it, as a buyer
 * must.
 *
 * Time: the chain starts a week in the past. While the plan is behind the wall clock the simulator
 * compresses it: before each action it mines empty blocks (2 s apart, `anvil_mine`) up to the action's
 * time, and a miner puts waiting transactions in a block every few milliseconds. Authorizations stay
 * valid because x402 v2 signs `validAfter = 0` and `validBefore = now + timeout` by the wall clock, which
 * is ahead of the chain's. Once the plan reaches the present, the devnet mines a block every 2 s and the
 * simulator plays each action at its time.
 */

import type { Hash } from "viem";
import type { DevnetAccount } from "../chain/devnet/index.ts";
import { sleep } from "../common/sleep.ts";
import { ChannelClaims } from "./channel-claims.ts";
import { endSession } from "./channel-refund.ts";
import { McpFaces } from "./mcp-faces.ts";
import { pay } from "./payment.ts";
import { PendingTruth } from "./pending-truth.ts";
import { planSlot } from "./plan.ts";
import type { Action, PlanContext, WalletId } from "./plan-types.ts";
import { SimChain, type SimChainOptions } from "./sim-chain.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { SimWallets } from "./sim-wallets.ts";
import { readTruthComplete } from "./truth.ts";

/** What the simulator plays, and on which chain (`SimChainOptions`: the devnet, its token's owner, its first block). */
export interface SimulatorOptions extends SimChainOptions {
  /** The CAIP-2 network the wallets pay on (default Base's). */
  network?: `${string}:${string}`;
  plan: PlanContext;
  merchants: readonly SimMerchant[];
  wallets: ReadonlyMap<WalletId, DevnetAccount>;
  /** First slot to play (a resumed demo starts after the last one played). */
  startSlot: number;
  truthFile: string;
  /** Where the block up to which `truthFile` is complete is recorded after each batch (truth.ts). */
  truthCompleteFile?: string;
  /** Payments in flight at once while catching up. Default 16. */
  concurrency?: number;
  /** Wall clock, unix ms; tests move it. */
  now?: () => number;
  signal: AbortSignal;
  onEvent?: (event: SimulatorEvent) => void;
}

export type SimulatorEvent =
  | { type: "slot"; slot: number; chainTime: number; payments: number; failures: number; live: boolean }
  | { type: "caught_up"; slot: number; block: number; payments: number; failures: number }
  | { type: "payment_failed"; merchant: string; path: string; status: number; reason: string };

export interface SimulatorStats {
  payments: number;
  failures: number;
  slot: number;
}

/** Plays slots from `startSlot` until the signal aborts; resolves when stopped. */
export async function runSimulator(options: SimulatorOptions): Promise<SimulatorStats> {
  const now = options.now ?? Date.now;
  const merchants = new Map(options.merchants.map((m) => [m.id, m]));
  const stats: SimulatorStats = { payments: 0, failures: 0, slot: options.startSlot };
  const wallets = new SimWallets(options.wallets, options.rpc, options.network, options.chainId);
  const faces = new McpFaces();
  const chain = new SimChain(options, wallets, now);
  const inFlight = new Set<Promise<void>>();
  // Claims are read from where the truth is complete (a resumed demo's), else from the chain's head now.
  const claims = new ChannelClaims(
    chain,
    wallets,
    new Map(options.merchants.map((m) => [m.payTo.toLowerCase(), m.id])),
    options.genesisNumber ?? 0,
    (options.truthCompleteFile ? readTruthComplete(options.truthCompleteFile) : undefined) ??
      (await chain.head()),
  );
  const truth = new PendingTruth(chain, options.truthFile, options.truthCompleteFile, claims);

  const payment = async (action: Extract<Action, { type: "pay" }>) => {
    const merchant = merchants.get(action.merchant);
    const endpoint = merchant?.endpoints[action.endpoint];
    if (!merchant || !endpoint) throw new Error(`unknown endpoint ${action.merchant}#${action.endpoint}`);
    const outcome = await pay(action, merchant, endpoint, { wallets, faces, chain });
    if ("failed" in outcome) {
      stats.failures++;
      options.onEvent?.({
        type: "payment_failed",
        merchant: merchant.id,
        path: endpoint.path,
        ...outcome.failed,
      });
    } else if ("settled" in outcome) {
      stats.payments++;
      truth.add(outcome.settled);
    } else if ("voucher" in outcome) {
      stats.payments++;
    }
  };

  const refund = async (action: Extract<Action, { type: "refund" }>) => {
    const merchant = merchants.get(action.merchant);
    if (!merchant) throw new Error(`unknown merchant ${action.merchant}`);
    const outcome = await endSession(action, merchant, wallets, chain);
    if ("failed" in outcome) {
      stats.failures++;
      options.onEvent?.({
        type: "payment_failed",
        merchant: merchant.id,
        path: "(channel refund)",
        ...outcome.failed,
      });
    }
  };

  try {
    for (let slot = options.startSlot; !options.signal.aborted; slot++) {
      stats.slot = slot;
      const actions = planSlot(options.plan, slot);
      const slotEnd = options.plan.epoch + (slot + 1) * options.plan.slotSeconds;
      if (!chain.live && slotEnd > now() / 1000) {
        await truth.flush(inFlight);
        await chain.goLive();
        options.onEvent?.({
          type: "caught_up",
          slot,
          block: await chain.head(),
          payments: stats.payments,
          failures: stats.failures,
        });
      }
      await playSlot(actions, {
        chain,
        inFlight,
        concurrency: options.concurrency ?? 16,
        now,
        signal: options.signal,
        pay: payment,
        refund,
      });
      if (truth.size >= 200 || chain.live) await truth.flush(inFlight);
      options.onEvent?.({
        type: "slot",
        slot,
        chainTime: Math.min(slotEnd, Math.floor(now() / 1000)),
        payments: stats.payments,
        failures: stats.failures,
        live: chain.live,
      });
    }
  } finally {
    chain.stopMiner();
    await faces.close();
    await truth.flush(inFlight).catch(() => undefined);
    await chain.idle();
  }
  return stats;
}

/** What a slot's actions are played with. */
interface SlotPlayer {
  chain: SimChain;
  /** The payments under way; the truth is complete once none is. */
  inFlight: Set<Promise<void>>;
  /** Payments in flight at once while catching up. */
  concurrency: number;
  now: () => number;
  signal: AbortSignal;
  pay(action: Extract<Action, { type: "pay" }>): Promise<void>;
  refund(action: Extract<Action, { type: "refund" }>): Promise<void>;
}

/**
 * Plays a slot's actions at their times: by mining up to each while catching up, by waiting for it when
 * live. Payments run side by side; a slot's transfers are in a block before it ends.
 */
async function playSlot(actions: readonly Action[], player: SlotPlayer): Promise<void> {
  const { chain, inFlight, signal } = player;
  const transfers: Hash[] = [];
  // What each wallet was sent in this slot and is not yet known to be in a block: a wallet passes money
  // on (a deposit, a chain of private wallets) only once what it was sent is there to spend.
  const incoming = new Map<WalletId, Hash[]>();
  for (const action of actions) {
    if (signal.aborted) break;
    if (chain.live) await sleepUntil(action.at * 1000, player.now, signal);
    else await chain.mineTo(action.at);
    if (action.type === "refund") {
      // After the session's calls: those in flight may be its own.
      await Promise.all(inFlight);
      const p = player.refund(action).finally(() => inFlight.delete(p));
      inFlight.add(p);
      continue;
    }
    if (action.type !== "pay") {
      if (action.type === "transfer" && incoming.has(action.from)) {
        await Promise.all((incoming.get(action.from) as Hash[]).map((hash) => chain.confirmed(hash)));
        incoming.delete(action.from);
      }
      const hash = await chain.transfer(action);
      transfers.push(hash);
      incoming.set(action.to, [...(incoming.get(action.to) ?? []), hash]);
      continue;
    }
    // Payments by a wallet funded in this slot wait for the funding to be in a block.
    if (transfers.length > 0) {
      await Promise.all(transfers.splice(0).map((hash) => chain.confirmed(hash)));
    }
    while (inFlight.size >= (chain.live ? 64 : player.concurrency)) await Promise.race(inFlight);
    const p = player.pay(action).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  if (transfers.length > 0) {
    await Promise.all(transfers.map((hash) => chain.confirmed(hash)));
  }
}

/** Waits until the wall clock reads `ms`, or the signal aborts. */
function sleepUntil(ms: number, now: () => number, signal: AbortSignal): Promise<void> {
  const wait = ms - now();
  return wait <= 0 ? Promise.resolve() : sleep(wait, signal);
}
