/**
 * A buyer's check of a merchant's receipt (docs/platform.md, "Signed offers and receipts"), and what
 * `x402-merchants verify-receipt` runs: the x402 receipt's signature (the SDK's own EIP-712 verification), the
 * kit's charge beside it signed by the same key and agreeing with it, the amount within the ceiling; and when
 * given, the signer the buyer trusts for the merchant, the offer it accepted, the request it sent.
 *
 * Without `signer`, a valid receipt proves only that whoever signed it signed it: the merchant's signer is the
 * address its offers recover to (`verifyOfferSignatureEIP712` on a 402 from its host), which a buyer pins.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import {
  type EIP712SignedOffer,
  type EIP712SignedReceipt,
  OFFER_RECEIPT,
  type OfferPayload,
  type ReceiptPayload,
  verifyOfferSignatureEIP712,
  verifyReceiptSignatureEIP712,
} from "@x402/extensions/offer-receipt";
import { type Address, getAddress, isAddress, recoverTypedDataAddress } from "viem";
import { AppError } from "../../../common/errors.ts";
import {
  CHARGE_DOMAIN,
  CHARGE_TYPES,
  type ChargePayload,
  chargeMessage,
  requestHash,
  type SignedCharge,
} from "./charge.ts";

/** Why a receipt is refused, in one line. */
export class ReceiptError extends AppError {
  constructor(message: string) {
    super(422, "receipt_refused", message);
  }
}

/** What a receipt was found to say, once verified. */
export interface VerifiedReceipt {
  /** The key that signed it (and its charge, and the offer when one was given). */
  signer: Address;
  /** Whether `signer` is the one the buyer said to trust (false: none was given). */
  signerTrusted: boolean;
  receipt: ReceiptPayload;
  /** The kit's charge: amount, ceiling, scheme, request hash. Absent from another server's plain x402 receipt. */
  charge?: ChargePayload;
  offer?: OfferPayload;
}

export interface ReceiptCheck {
  /** The merchant's signing address, as the buyer knows it: anything else signed is refused. */
  signer?: string;
  /** The offer the buyer accepted (from the 402): the receipt must be its signer's, for its terms. */
  offer?: EIP712SignedOffer;
  /** The request the buyer sent: the charge must be for it (its `requestHash`). */
  request?: Request;
}

/** A receipt found in `evidence`, signed and consistent, or a `ReceiptError` saying why not. */
export async function verifyReceipt(evidence: unknown, check: ReceiptCheck = {}): Promise<VerifiedReceipt> {
  const found = receiptEvidence(evidence);
  const offer = check.offer ?? found.offer;
  const { receipt, charge } = found;
  if (receipt.format !== "eip712")
    throw new ReceiptError(`a ${String(receipt.format)} receipt: only EIP-712 receipts are checked`);
  const signer = await recovered("the receipt", () => verifyReceiptSignatureEIP712(receipt));
  const payload = receipt.payload;
  if (payload.version !== 1)
    throw new ReceiptError(`receipt version ${payload.version}: only version 1 is known`);
  if (check.signer !== undefined) {
    if (!isAddress(check.signer, { strict: false }))
      throw new ReceiptError(`the signer to trust is not an address: "${check.signer}"`);
    if (getAddress(check.signer) !== signer)
      throw new ReceiptError(`signed by ${signer}, not by ${getAddress(check.signer)}`);
  }
  if (charge) await checkCharge(charge, payload, signer);
  if (offer) await checkOffer(offer, payload, charge, signer);
  if (check.request) {
    if (!charge) throw new ReceiptError("the receipt states no request: it has no charge");
    const hash = await requestHash(check.request);
    if (hash !== charge.payload.requestHash.toLowerCase())
      throw new ReceiptError(
        `the charge is for another request (${charge.payload.requestHash}, not ${hash})`,
      );
  }
  return {
    signer,
    signerTrusted: check.signer !== undefined,
    receipt: payload,
    ...(charge && { charge: charge.payload }),
    ...(offer && { offer: offer.payload }),
  };
}

async function checkCharge(charge: SignedCharge, receipt: ReceiptPayload, signer: Address): Promise<void> {
  if (charge.format !== "eip712" || typeof charge.payload !== "object" || charge.payload === null)
    throw new ReceiptError("the charge is not an EIP-712 message with its payload");
  const payload = charge.payload;
  const by = await recovered("the charge", async () => ({
    signer: await recoverTypedDataAddress({
      domain: CHARGE_DOMAIN,
      types: CHARGE_TYPES,
      primaryType: "Charge",
      message: chargeMessage(payload),
      signature: charge.signature,
    }),
  }));
  if (by !== signer) throw new ReceiptError(`the charge is signed by ${by}, the receipt by ${signer}`);
  for (const field of ["resourceUrl", "network", "payer", "issuedAt"] as const) {
    if (String(payload[field]) !== String(receipt[field]))
      throw new ReceiptError(
        `the charge's ${field} (${payload[field]}) is not the receipt's (${receipt[field]})`,
      );
  }
  if (receipt.transaction && payload.transaction !== receipt.transaction)
    throw new ReceiptError(`the charge's transaction is not the receipt's (${receipt.transaction})`);
  const atomic = /^\d+$/;
  if (!atomic.test(payload.amount) || !atomic.test(payload.ceiling))
    throw new ReceiptError("the charge's amount and ceiling are not whole atomic units");
  if (BigInt(payload.amount) > BigInt(payload.ceiling))
    throw new ReceiptError(`the charge's amount ${payload.amount} is over its ceiling ${payload.ceiling}`);
}

async function checkOffer(
  offer: EIP712SignedOffer,
  receipt: ReceiptPayload,
  charge: SignedCharge | undefined,
  signer: Address,
): Promise<void> {
  const by = await recovered("the offer", () => verifyOfferSignatureEIP712(offer));
  if (by !== signer) throw new ReceiptError(`the offer is signed by ${by}, the receipt by ${signer}`);
  const terms = offer.payload;
  if (terms.resourceUrl !== receipt.resourceUrl || terms.network !== receipt.network)
    throw new ReceiptError(`the receipt is for ${receipt.resourceUrl}, the offer for ${terms.resourceUrl}`);
  if (!charge) return;
  const c = charge.payload;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (
    terms.scheme !== c.scheme ||
    terms.amount !== c.ceiling ||
    !same(terms.payTo, c.payTo) ||
    !same(terms.asset, c.asset)
  )
    throw new ReceiptError(
      `the charge (${c.scheme}, at most ${c.ceiling} to ${c.payTo}) is not on the offer's terms (${terms.scheme}, ${terms.amount} to ${terms.payTo})`,
    );
}

/** The signer a check recovers, or a `ReceiptError` naming what did not verify. */
async function recovered(what: string, verify: () => Promise<{ signer: Address }>): Promise<Address> {
  try {
    return getAddress((await verify()).signer);
  } catch (error) {
    throw new ReceiptError(`${what}'s signature does not verify: ${(error as Error).message.split("\n")[0]}`);
  }
}

interface Evidence {
  receipt: EIP712SignedReceipt;
  charge?: SignedCharge;
  offer?: EIP712SignedOffer;
}

/**
 * The receipt (and charge, and offer) in what a buyer kept: the `PAYMENT-RESPONSE` header as sent (base64) or
 * decoded, the extension's `info`, `{receipt, charge, offer}`, or a receipt alone; as a value or JSON text.
 */
export function receiptEvidence(evidence: unknown): Evidence {
  let value = evidence;
  if (typeof value === "string") {
    const text = value.trim();
    try {
      value = text.startsWith("{") ? JSON.parse(text) : decodePaymentResponseHeader(text);
    } catch {
      throw new ReceiptError("neither JSON nor a PAYMENT-RESPONSE header");
    }
  }
  const record = (v: unknown) =>
    v !== null && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  let found = record(value);
  const extension = record(record(found?.extensions)?.[OFFER_RECEIPT]);
  if (extension) found = record(extension.info);
  else if (record(found?.info)?.receipt) found = record(found?.info);
  if (found && !found.receipt && record(found.payload)?.payer !== undefined) found = { receipt: found };
  const receipt = record(found?.receipt);
  if (!found || !receipt || typeof receipt.signature !== "string" || !record(receipt.payload))
    throw new ReceiptError(
      `no signed receipt in it (an ${OFFER_RECEIPT} receipt, its payload and signature)`,
    );
  return {
    receipt: receipt as unknown as EIP712SignedReceipt,
    ...(found.charge !== undefined && { charge: found.charge as SignedCharge }),
    ...(found.offer !== undefined && { offer: found.offer as EIP712SignedOffer }),
  };
}
