/**
 * Solana's payment channels: x402's `upto` and `batch-settlement` settle through the Solana Foundation's
 * payment-channels program (`PAYMENT_CHANNELS_PROGRAM`, github.com/solana-foundation/payment-channels, its
 * `docs/003-program-instructions.md` and IDL), not by a transfer from the buyer to the merchant. The buyer
 * deposits into a channel, an escrow token account owned by the channel's PDA (`open`, `topUp`); the program pays
 * out of it with `distribute`, which anyone may crank and which x402's facilitators send, fee payers of their own
 * transactions. Each instruction's data starts with a one-byte discriminator.
 *
 * Read as x402scan reads them (its pull request #1091): one payment per `distribute` payout leg, from the channel's
 * payer (the instruction's account 1) to the owner of the leg's token account, the scheme told by the transaction.
 * What else moves the channel's money is a transfer, for the provenance screens, as the EVM escrow's deposits and
 * refunds are (`../channels.ts`): a deposit from the payer to the channel, named by its PDA (the escrow's owner);
 * a refund, a payee's share or the treasury's dust from the channel to the owner of the account paid.
 */

import { base58Bytes } from "../../chain/solana/base58.ts";
import { PAYMENT_CHANNELS_PROGRAM } from "../../chain/solana/constants.ts";
import { moveOf, type ParsedTransaction, type SolanaMove, type UsdcLeg, usdcLegs } from "./decode.ts";

export type ChannelScheme = "upto" | "batch-settlement";

/** A payout leg: the channel's payer paid the leg's owner. */
export interface ChannelPayment extends SolanaMove {
  scheme: ChannelScheme;
  /** The channel's PDA. */
  channel: string;
}

export interface ChannelRead {
  payments: ChannelPayment[];
  /** Deposits (payer to channel), and the legs that are no payment (channel to the owner paid). */
  moves: SolanaMove[];
  /** Channels whose `open` carries the batch-settlement binding memo (below). */
  batchChannels: string[];
  /** The payers' own token accounts the transaction names, whose funding the screens read. */
  payerAccounts: string[];
}

const OPEN = 1;
const TOP_UP = 3;
const SETTLE_AND_SEAL = 4;
const DISTRIBUTE = 7;
const WITHDRAW_PAYER = 8;
/** `distribute`'s fixed accounts; the recipients' token accounts follow them, in the order of its preimage. */
const DISTRIBUTE_FIXED_ACCOUNTS = 11;
/**
 * The memo every batch-settlement `open` carries since the scheme's SVM spec binds a channel to its receiver
 * authorizer (`scheme_batch_settlement_svm.md`, section 3); an `upto` open has none.
 */
export const BATCH_BINDING_MEMO = "x402:batch-settlement:svm:rcvauth:v1:";

interface Call {
  index: number;
  discriminator: number;
  accounts: string[];
}

/** The payment-channels program's top-level instructions (the RPC leaves them unparsed: accounts and data). */
function calls(tx: ParsedTransaction): Call[] {
  const out: Call[] = [];
  tx.transaction.message.instructions.forEach((ix, index) => {
    // Only the program's own instructions: a look-alike program with the same layout is not the program, and
    // only the program can sign for its channels' PDAs, so nothing it pays out is a channel's payout.
    if (ix.programId !== PAYMENT_CHANNELS_PROGRAM || ix.data === undefined || !ix.accounts) return;
    const discriminator = base58Bytes(ix.data)?.[0];
    if (discriminator !== undefined) out.push({ index, discriminator, accounts: ix.accounts });
  });
  return out;
}

const memos = (tx: ParsedTransaction): string[] =>
  tx.transaction.message.instructions.flatMap((ix) =>
    ix.program === "spl-memo" && typeof ix.parsed === "string" ? [ix.parsed] : [],
  );

/**
 * The channel rows of one landed transaction (the caller checks whose fee payer it is). The scheme is x402scan's
 * rule: a transaction holding `settleAndSeal` is `upto`'s settlement (`settleAndSeal` then the sealed
 * `distribute`, scheme_upto_svm.md), any other is `batch-settlement`'s (`settle` then `distribute` on an open
 * channel). A batch-settlement channel's cooperative close is `settleAndSeal` too: the caller corrects its scheme
 * when it has seen the channel's `open` carry the batch binding memo (`batchChannels`).
 */
export function channelMoves(tx: ParsedTransaction, mint: string): ChannelRead {
  const out: ChannelRead = { payments: [], moves: [], batchChannels: [], payerAccounts: [] };
  const found = calls(tx);
  if (found.length === 0) return out;
  const legs = usdcLegs(tx, mint);
  const scheme: ChannelScheme = found.some((c) => c.discriminator === SETTLE_AND_SEAL)
    ? "upto"
    : "batch-settlement";
  const bound = memos(tx).some((m) => m.startsWith(BATCH_BINDING_MEMO));
  for (const { index, discriminator, accounts: a } of found) {
    const mine = legs.filter((l) => l.parent === index);
    if (discriminator === OPEN || discriminator === TOP_UP) {
      // open: payer 0, channel 5, payer's token account 6, escrow 7; topUp: payer 0, channel 1, 2, 3.
      const [channel, from, escrow] = discriminator === OPEN ? [a[5], a[6], a[7]] : [a[1], a[2], a[3]];
      if (!channel || !from || !escrow) continue;
      out.payerAccounts.push(from);
      if (discriminator === OPEN && bound) out.batchChannels.push(channel);
      for (const leg of mine)
        if (leg.source === from && leg.destination === escrow && leg.to === channel)
          out.moves.push(moveOf(leg));
    } else if (discriminator === DISTRIBUTE && a.length >= DISTRIBUTE_FIXED_ACCOUNTS) {
      distribute(a, mine, scheme, out);
    } else if (discriminator === WITHDRAW_PAYER) {
      // The payer's refund of a sealed channel: channel 1, escrow 2.
      for (const leg of mine) if (leg.source === a[2] && leg.from === a[1]) out.moves.push(moveOf(leg));
    }
  }
  return out;
}

/**
 * `distribute`'s legs: channel 0, payer 1, escrow 3, the payer's token account 4, the payee's 5, the treasury's 6,
 * the recipients' from 11 on. Only legs out of the escrow, which the channel owns, are its payouts. A leg to a
 * recipient's account is a payment: the program pays the recipients first (then the payee's remainder, the payer's
 * refund and the treasury's dust, `distribute.rs`), each recipient once, so when a recipient's account is also the
 * payer's or the treasury's (a payer paying itself, a client that passed a recipient's account as the treasury),
 * the first leg to it is the payout and the later one the refund or the dust. x402scan's decoder has read it both
 * other ways (one version skips every leg to the payer's, payee's or treasury's account, another counts every leg to
 * a recipient's); here a payment the payer makes to itself is counted once, as a payment (the `self_payment` screen
 * flags it), and its refund is a transfer back.
 */
function distribute(a: string[], legs: UsdcLeg[], scheme: ChannelScheme, out: ChannelRead): void {
  const [channel, payer, escrow, payerAccount] = [a[0], a[1], a[3], a[4]] as [string, string, string, string];
  out.payerAccounts.push(payerAccount);
  const recipients = new Set(a.slice(DISTRIBUTE_FIXED_ACCOUNTS));
  for (const leg of legs) {
    if (leg.source !== escrow || leg.from !== channel) continue;
    if (recipients.delete(leg.destination))
      out.payments.push({ ...moveOf(leg), from: payer, scheme, channel });
    else out.moves.push(moveOf(leg));
  }
}
