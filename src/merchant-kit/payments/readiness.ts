/**
 * What a merchant host needs to take a payment, as `/readyz` checks it (src/common/health.ts): its state
 * database, its facilitator, and the chain it reads payers' balances from.
 */
import { formatUnits } from "viem";
import type { Database } from "../../common/db/index.ts";
import { type CheckFn, cachedCheck, chainCheck, rpcCall } from "../../common/health.ts";
import { log } from "../../common/log.ts";
import { type ChannelSettings, lateChannels, openChannels } from "../channels/index.ts";
import { type Merchant, offersChannels } from "../endpoint.ts";
import type { WatchedFacilitator } from "./facilitators/index.ts";

export interface PaymentReadinessOptions {
  /** The merchant's state: the ledger, the endpoints' tables. */
  db: Database;
  facilitator: WatchedFacilitator;
  /**
   * The chain whose balances the host reads before guarded work (payments/ledger/funds.ts): checked when the host
   * has such an endpoint and reads the chain itself. None: no chain check.
   */
  rpcUrl?: string;
  /** Solana's JSON-RPC, likewise, where the host is paid on Solana too (payments/ledger/svm-funds.ts). */
  solanaRpcUrl?: string;
  /** A host whose catalogue offers channels: its wallet's unclaimed money is watched (`channels`). */
  channels?: { merchant: string; receiver: string; settings: ChannelSettings; decimals: number };
}

/**
 * The checks: `database` (a `SELECT 1`), `facilitator` (its watch's last outcome, or a fresh probe of
 * `/supported`: payments/facilitators/watch.ts), with `rpcUrl` `chain` (`eth_blockNumber`), with `solanaRpcUrl`
 * `solana` (`getSlot`).
 */
export function paymentReadiness(options: PaymentReadinessOptions): Record<string, CheckFn> {
  const { db, facilitator, rpcUrl, solanaRpcUrl, channels } = options;
  return {
    database: cachedCheck("merchant database", async () => {
      await db.query("SELECT 1");
    }),
    facilitator: async () => {
      const health = await facilitator.health();
      return health.reachable
        ? { ok: true }
        : { ok: false, reason: `cannot be reached: ${health.error}`, since: health.since };
    },
    ...(rpcUrl !== undefined && { chain: chainCheck(rpcUrl, "merchant chain") }),
    ...(solanaRpcUrl !== undefined && {
      solana: cachedCheck(
        "merchant solana",
        async (signal) => ({ slot: await rpcCall(solanaRpcUrl, "getSlot", [], signal) }),
        { timeoutMs: 3_000 },
      ),
    }),
    ...(channels && { channels: channelCheck(db, channels) }),
  };
}

/** A host's channels for its `channels` check, when its catalogue offers them. */
export function watchedChannels(
  merchant: Merchant,
  settings: ChannelSettings,
  decimals: number,
): PaymentReadinessOptions["channels"] {
  if (!merchant.endpoints.some(offersChannels)) return undefined;
  return { merchant: merchant.name, receiver: merchant.payTo, settings, decimals };
}

/**
 * Ok, and degraded while money charged through the wallet's channels is unclaimed past the schedule's margin
 * (channels/operator.ts, `lateChannels`): the host still takes payments, so it stays ready (as the report
 * service's lagging indexer does, `degraded: true`), and a withdrawal could soon take that money, so the
 * `warning` tells the operator which merchant and how much.
 */
function channelCheck(db: Database, options: NonNullable<PaymentReadinessOptions["channels"]>): CheckFn {
  // Said in the log when it starts, as a failing check is: a degraded one that is not would go unseen.
  let wasLate = false;
  return cachedCheck(
    "merchant channels",
    async () => {
      const now = Date.now();
      const late = lateChannels(await openChannels(db, [options.receiver]), options.settings, now);
      if (late.length === 0) {
        wasLate = false;
        return {};
      }
      const unclaimed = formatUnits(
        late.reduce((sum, c) => sum + c.unclaimed, 0n),
        options.decimals,
      );
      const soonest = Math.min(...late.map((c) => c.withdrawalEndsMs as number));
      const hours = Math.max(0, (soonest - now) / 3_600_000).toFixed(1);
      const warning = `${options.merchant}: $${unclaimed} unclaimed in ${late.length} channel(s), a withdrawal could take it in ${hours} h; the claim schedule is late (x402-merchants channels claim)`;
      if (!wasLate) log("warn", "channel money near a withdrawal's end is unclaimed", { warning });
      wasLate = true;
      return {
        degraded: true,
        warning,
        unclaimed,
        lateChannels: late.length,
      };
    },
    { keepMs: 30_000 },
  );
}
