/**
 * Solana lines for the import and the reports' tests: base58 keys and signatures from labels, and a small week of
 * slots dated by their own times (about 0.4 s apart, some skipped), as `index --chain solana` stores them.
 */
import { createHash } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import { SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";

const base58 = getBase58Decoder();
const digest = (text: string, bytes: number) => {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i * 32 < bytes; i++)
    createHash("sha256")
      .update(`${i}:${text}`)
      .digest()
      .copy(out, i * 32);
  return new Uint8Array(out);
};

/** A base58 public key from a label: the same label, the same key. */
export const solKey = (label: string): string => base58.decode(digest(label, 32));

let signatures = 0;
/** A fresh base58 transaction signature (64 bytes). */
export const solSignature = (): string => base58.decode(digest(`signature ${++signatures}`, 64));

/** The week's last slot and its time: 2026-11-22 00:00 UTC, as the EVM tests' END_TIME. */
export const SOL_END_SLOT = 400_000_000;
export const SOL_END_TIME = 1_795_305_600;
/** A slot's time: 0.4 s a slot back from the end, in whole seconds as `blockTime` gives them. */
export const solTime = (slot: number): number => SOL_END_TIME - Math.ceil((SOL_END_SLOT - slot) * 0.4);
/** The slots of a week: 7 days of 0.4 s slots. */
export const SOL_WEEK_SLOTS = (7 * 86_400) / 0.4;

export function solPayment(o: {
  payer: string;
  payTo: string;
  amount: number;
  slot?: number;
  feePayer?: string;
  index?: number;
}) {
  const slot = o.slot ?? SOL_END_SLOT - 1_000;
  return {
    type: "payment",
    chain: "solana",
    tx_hash: solSignature(),
    log_index: o.index ?? 2,
    block_number: slot,
    block_time: solTime(slot),
    facilitator: o.feePayer ?? "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
    payer: o.payer,
    pay_to: o.payTo,
    amount: String(o.amount),
    scheme: "exact",
  };
}

export function solTransfer(from: string, to: string, amount: number, slot = SOL_END_SLOT - 300_000) {
  return {
    type: "transfer",
    chain: "solana",
    tx_hash: solSignature(),
    log_index: 0,
    block_number: slot,
    block_time: solTime(slot),
    from,
    to,
    amount: String(amount),
  };
}

export const solCheckpoint = (slot = SOL_END_SLOT) => ({
  type: "checkpoint",
  chain: "solana",
  block_number: slot,
  block_time: solTime(slot),
});

export const SOL_USDC = SOLANA_USDC_MINT;
