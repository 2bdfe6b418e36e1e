/**
 * Signed offers and receipts: x402's `offer-receipt` extension (`@x402/extensions/offer-receipt`, spec v1.0)
 * on every paid route of a merchant that has a receipt key (docs/platform.md, "Signed offers and receipts").
 *
 * - Each 402 carries, per way to pay, an offer the merchant signed (EIP-712): resource, scheme, network,
 *   token, wallet, amount and how long it holds. The SDK's own extension signs it.
 * - Each settled answer's `PAYMENT-RESPONSE` carries the SDK's receipt (payer, resource, network, the
 *   settlement's transaction, when) and, beside it in `info.charge`, the kit's own signed charge: the scheme,
 *   the amount charged beside the most the payment allowed, and the request's hash (receipts-charge.ts says
 *   why a message of its own). A streamed answer's receipt is in its last event, with its settlement.
 *
 * The resource both name is the endpoint's URL without its query: the query is the call's input, bound by the
 * request's hash, and left out of the signed URL it cannot blow a long GET's 402 and receipt past what a
 * client reads of a header (Node's fetch: 16 KiB), nor show the call's input to whoever the buyer shows its
 * receipt.
 */
import type { ResourceServerExtension, SettleResultContext } from "@x402/core/types";
import {
  createEIP712OfferReceiptIssuer,
  createOfferReceiptExtension,
  declareOfferReceiptExtension,
  type EIP712SignedReceipt,
  OFFER_RECEIPT,
  type OfferReceiptIssuer,
  type SignedOffer,
  type SignTypedDataFn,
} from "@x402/extensions/offer-receipt";
import type { Hex, LocalAccount } from "viem";
import { log } from "../../../common/log.ts";
import { scopeSlot } from "../../../common/request-scope.ts";
import {
  CHARGE_DOMAIN,
  CHARGE_TYPES,
  type ChargePayload,
  chargeMessage,
  type SignedCharge,
} from "./charge.ts";

export { OFFER_RECEIPT };

/**
 * The route's declaration: the receipt names the settlement's transaction. The spec leaves it out by default
 * for privacy; the receipt is the buyer's to show, and what it is shown for (audit, tax: x402 #1802) needs
 * the transaction to check it on chain.
 */
export function declareReceipts(): Record<string, unknown> {
  return declareOfferReceiptExtension(DECLARATION);
}

const DECLARATION = { includeTxHash: true };

/** The key id the host's offers and receipts carry: its signer's address as a `did:pkh` (CAIP-10 on chain 1, as the SDK's own examples name an EIP-712 signer). */
export const receiptKid = (address: string) => `did:pkh:eip155:1:${address}`;

/** The resource an offer or receipt names: the URL without its query (and fragment). */
export function signedResource(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** How long a signed offer is used again for the same terms: a fifth of its validity, at most a minute. */
const OFFER_REUSE_MS = 60_000;
/** Offers kept for reuse: a 402 asked again (a crawler, a buyer's challenge then its paid call) is signed once. */
const OFFERS_KEPT = 500;

/**
 * The SDK's EIP-712 issuer, naming the resource without its query, and keeping each offer for reuse a while:
 * an offer costs about 1.6 ms of CPU to sign, a 402 has one per way to pay, and unpaid 402s are what a flood is
 * made of (src/common/rate-limit.ts).
 */
function issuer(account: LocalAccount): OfferReceiptIssuer {
  const sign: SignTypedDataFn = (data) =>
    account.signTypedData(data as Parameters<LocalAccount["signTypedData"]>[0]);
  const sdk = createEIP712OfferReceiptIssuer(receiptKid(account.address), sign);
  const kept = new Map<string, { offer: SignedOffer; until: number }>();
  return {
    ...sdk,
    async issueOffer(resourceUrl, input) {
      const resource = signedResource(resourceUrl);
      const { acceptIndex, ...terms } = input;
      const key = JSON.stringify([resource, terms]);
      const now = Date.now();
      const found = kept.get(key);
      if (found && found.until > now) return { ...found.offer, acceptIndex };
      const offer = await sdk.issueOffer(resource, input);
      const validity = (input.offerValiditySeconds ?? 300) * 1000;
      kept.delete(key);
      kept.set(key, { offer, until: now + Math.min(OFFER_REUSE_MS, validity / 5) });
      if (kept.size > OFFERS_KEPT) kept.delete(kept.keys().next().value as string);
      return offer;
    },
    issueReceipt: (resourceUrl, payer, network, transaction) =>
      sdk.issueReceipt(signedResource(resourceUrl), payer, network, transaction),
  };
}

/** The hash of the request being answered, while it is (set around its payment: paid-handler.ts). */
const requests = scopeSlot<() => Promise<Hex>>("receipt request hash");

/** Runs `work` (a paid request's payment and handler) with `hash` as its request's, computed once if asked. */
export function inReceiptRequest<T>(hash: () => Promise<Hex>, work: () => T): T {
  let once: Promise<Hex> | undefined;
  return requests.run(() => (once ??= hash()), work);
}

/**
 * The `offer-receipt` extension signing with `account`: the SDK's, with the kit's charge added to each receipt.
 * Register it on the merchant's resource servers, and declare it on its routes (`declareReceipts`).
 */
export function receiptsExtension(account: LocalAccount): ResourceServerExtension {
  const sdk = createOfferReceiptExtension(issuer(account));
  const sdkReceipt = sdk.enrichSettlementResponse;
  return {
    ...sdk,
    async enrichSettlementResponse(_declaration, context) {
      // Not the route's declaration: by settlement the SDK has replaced it with the 402's offers (it builds the
      // 402 of every request, paid ones too, and its extensions in place), so its `includeTxHash` is lost.
      const standard = (await sdkReceipt?.(DECLARATION, context)) as
        | { info: { receipt: EIP712SignedReceipt }; schema: { properties: Record<string, unknown> } }
        | undefined;
      const hash = requests.get();
      if (!standard || !hash) return standard;
      try {
        const charge = await signCharge(account, chargeOf(context, standard.info.receipt, await hash()));
        return {
          info: { ...standard.info, charge },
          schema: {
            ...standard.schema,
            properties: { ...standard.schema.properties, charge: CHARGE_SCHEMA },
          },
        };
      } catch (error) {
        // The answer is paid and delivered all the same; the receipt without the charge still says so.
        log("error", "a charge could not be signed", { error });
        return standard;
      }
    },
  };
}

/**
 * What this settlement charged: the requirements it settled (an `upto` call's, a metered channel call's
 * amount is the one the kit asked the facilitator to settle: a settlement succeeds for exactly it, or fails),
 * beside what the payment accepted (the offer's amount: `upto`'s maximum, a channel call's price).
 */
function chargeOf(
  context: SettleResultContext,
  receipt: EIP712SignedReceipt,
  requestHash: Hex,
): ChargePayload {
  const { requirements, paymentPayload, result } = context;
  const voucher = (paymentPayload.payload as { voucher?: { channelId?: string } }).voucher;
  return {
    version: 1,
    resourceUrl: receipt.payload.resourceUrl,
    network: receipt.payload.network,
    asset: requirements.asset,
    payTo: requirements.payTo,
    payer: receipt.payload.payer,
    scheme: requirements.scheme,
    amount: requirements.amount,
    ceiling: paymentPayload.accepted.amount,
    requestHash,
    transaction: result.transaction ?? "",
    channel: requirements.scheme === "batch-settlement" ? (voucher?.channelId ?? "") : "",
    issuedAt: receipt.payload.issuedAt,
  };
}

export async function signCharge(account: LocalAccount, payload: ChargePayload): Promise<SignedCharge> {
  const signature = await account.signTypedData({
    domain: CHARGE_DOMAIN,
    types: CHARGE_TYPES,
    primaryType: "Charge",
    message: chargeMessage(payload),
  });
  return { format: "eip712", payload, signature };
}

/** The charge's JSON Schema, beside the receipt's in the extension's schema. */
const CHARGE_SCHEMA = {
  type: "object",
  description:
    "The merchant's signed charge (EIP-712, domain x402-merchants charge v1): the amount charged beside the most the payment allowed, the scheme and the request's hash",
  properties: {
    format: { type: "string", const: "eip712" },
    payload: {
      type: "object",
      properties: Object.fromEntries(
        CHARGE_TYPES.Charge.map(({ name, type }) => [
          name,
          { type: type === "uint256" ? "integer" : "string" },
        ]),
      ),
      required: CHARGE_TYPES.Charge.map(({ name }) => name),
    },
    signature: { type: "string" },
  },
  required: ["format", "payload", "signature"],
};
