/**
 * `x402-merchants verify-receipt FILE|- [--signer ADDRESS] [--json]`: a buyer's check of a merchant's signed
 * receipt, with nothing but the file (payments/receipts/verify.ts says what is checked). One line when it
 * verifies; else `<file>: <reason>` on stderr and exit 1. It reads no network and writes nothing.
 */
import fs from "node:fs";
import { isAddress } from "viem";
import { UsageError } from "../common/errors.ts";
import {
  ReceiptError,
  type VerifiedReceipt,
  verifyReceipt,
} from "../merchant-kit/payments/receipts/verify.ts";
import type { Flags } from "./flags.ts";

export async function runVerifyReceipt(args: string[], flags: Flags): Promise<number> {
  const [file, ...more] = args;
  if (file === undefined || more.length > 0)
    throw new UsageError("verify-receipt takes one FILE, or - for standard input");
  const signer = flags.signer;
  if (signer !== undefined && !isAddress(signer, { strict: false }))
    throw new UsageError(`--signer must be an address: 0x followed by 40 hex digits, not "${signer}"`);
  let text: string;
  try {
    text = fs.readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  let verified: VerifiedReceipt;
  try {
    verified = await verifyReceipt(text, { ...(signer !== undefined && { signer }) });
  } catch (error) {
    if (error instanceof ReceiptError) throw new ReceiptError(`${file}: ${error.message}`);
    throw error;
  }
  process.stdout.write(`${flags.json ? JSON.stringify(asJson(verified)) : line(verified)}\n`);
  return 0;
}

function asJson({ signer, signerTrusted, receipt, charge }: VerifiedReceipt) {
  return { ok: true, signer, signer_trusted: signerTrusted, receipt, charge: charge ?? null };
}

function line({ signer, signerTrusted, receipt, charge }: VerifiedReceipt): string {
  const issued = new Date(receipt.issuedAt * 1000).toISOString().replace(/\.000Z$/, "Z");
  const trust = signerTrusted ? "" : " (the signer is not checked: pass --signer with the merchant's)";
  if (!charge) {
    const tx = receipt.transaction ? `, transaction ${receipt.transaction}` : "";
    return `ok ${signer} signed a receipt: ${receipt.payer} paid for ${receipt.resourceUrl}${tx}, issued ${issued}; it states no amount${trust}`;
  }
  const settled = charge.transaction
    ? `transaction ${charge.transaction}`
    : charge.channel
      ? `channel ${charge.channel}, claimed later`
      : "no transaction";
  return `ok ${signer} charged ${charge.payer} ${charge.amount} of at most ${charge.ceiling} (${charge.scheme}, atomic units of ${charge.asset}) for ${charge.resourceUrl}, request ${charge.requestHash}, ${settled}, issued ${issued}${trust}`;
}
