/**
 * x402 settlements found in a run of USDC and upto-proxy logs.
 *
 * - exact (EIP-3009): `transferWithAuthorization` (and `receiveWithAuthorization`) mark the authorization
 *   as used, then move the money: `AuthorizationUsed` at log n and `Transfer(authorizer -> payee)` at log
 *   n + 1 of the same transaction, as Circle's FiatToken and the devnet's token both do.
 * - Permit2 (upto, and exact for wallets without EIP-3009): the x402 proxy has Permit2 move the money
 *   (`Transfer(payer -> payee)`), then emits `Settled()` (or `SettledWithPermit()`): the Transfer is the last
 *   USDC log before it in the transaction. USDC logs of other kinds are not fetched, so it is the log just
 *   before, of the same transaction.
 * - batch-settlement: the escrow's own events (`channels.ts` turns them into payments and moves). The USDC
 *   Transfers into and out of the escrow and its deposit collectors are its plumbing: a deposit's EIP-3009
 *   half is no payment to the collector, a sweep no payment to the receiver (its claims were). They are set
 *   apart here, never payments, candidates or funding edges: the channel's own moves replace them.
 *
 * One transaction may carry several settlements (a facilitator batching them through a contract): each
 * pair is one settlement, keyed by its Transfer log. Whether a settlement is an x402 payment depends on who
 * sent the transaction, which logs do not say: see `classify.ts`.
 */
import { escrowWallets, X402_CONTRACTS } from "../chain/chains.ts";
import type { ChannelLog } from "./channel-logs.ts";
import type { TransferLog, UsdcLog, X402Log } from "./decode.ts";

/** The x402 schemes a payment can be paid with. */
export type Scheme = "exact" | "upto" | "batch-settlement";
/** How the money moved: an EIP-3009 authorization, Permit2 through a proxy, or a claim on a channel. */
export type TransferMethod = "eip3009" | "permit2" | "channel";

export interface Settlement {
  /** The Transfer log of the pair; its (tx, logIndex) is the payment's key. */
  transfer: TransferLog;
  scheme: Scheme;
  method: TransferMethod;
}

export interface PairedLogs {
  settlements: Settlement[];
  /** Every Transfer that is not the second half of a settlement (mints, burns, plain transfers). */
  transfers: TransferLog[];
  /** The batch-settlement escrow's events, in chain order. */
  channels: ChannelLog[];
  /** AuthorizationUsed or Settled logs without their Transfer (none on USDC; counted, not stored). */
  unpaired: number;
}

/** The escrow and its collectors: USDC moving through them is a channel's, not a wallet's (one address on every chain). */
const ESCROW_WALLETS = escrowWallets(X402_CONTRACTS);
const PLUMBING = new Set([ESCROW_WALLETS.escrow, ...ESCROW_WALLETS.collectors]);

/** A USDC Transfer into or out of the batch-settlement escrow or one of its deposit collectors. */
export function isChannelPlumbing(t: { from: string; to: string }): boolean {
  return PLUMBING.has(t.from) || PLUMBING.has(t.to);
}

/**
 * Pairs each AuthorizationUsed with the Transfer that follows it, and each upto Settled with the Transfer
 * before it. `logs` must be in chain order (block, then log index), as eth_getLogs returns them; only the
 * logs `decodeLog` knows are expected.
 */
export function pairSettlements(all: readonly X402Log[]): PairedLogs {
  const channels: ChannelLog[] = [];
  const logs: UsdcLog[] = [];
  for (const log of all) {
    if (log.kind === "channel") channels.push(log);
    else logs.push(log);
  }
  const paired = pairUsdc(logs);
  return {
    settlements: paired.settlements.filter((s) => !isChannelPlumbing(s.transfer)),
    transfers: paired.transfers.filter((t) => !isChannelPlumbing(t)),
    channels,
    unpaired: paired.unpaired,
  };
}

function pairUsdc(logs: readonly UsdcLog[]): Omit<PairedLogs, "channels"> {
  const settlements: Settlement[] = [];
  const transfers: TransferLog[] = [];
  let unpaired = 0;
  for (let i = 0; i < logs.length; i++) {
    const log = logs[i] as UsdcLog;
    if (log.kind === "transfer") {
      transfers.push(log);
      continue;
    }
    if (log.kind === "proxy") {
      const previous = logs[i - 1];
      const last = transfers[transfers.length - 1];
      // The Transfer just before, not already taken by an earlier settlement (it is still the last plain one).
      if (
        previous?.kind === "transfer" &&
        previous === last &&
        previous.tx === log.tx &&
        previous.block === log.block
      ) {
        transfers.pop();
        settlements.push({ transfer: previous, scheme: log.scheme, method: "permit2" });
      } else {
        unpaired++;
      }
      continue;
    }
    const next = logs[i + 1];
    if (
      next?.kind === "transfer" &&
      next.tx === log.tx &&
      next.block === log.block &&
      next.logIndex === log.logIndex + 1 &&
      next.from === log.authorizer
    ) {
      settlements.push({ transfer: next, scheme: "exact", method: "eip3009" });
      i++;
    } else {
      unpaired++;
    }
  }
  return { settlements, transfers, unpaired };
}
