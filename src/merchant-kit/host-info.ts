/**
 * What a merchant host says of itself to agents and the registries that list it, in its OpenAPI document
 * (`info.contact`, `info.x-guidance`) and its `/llms.txt`: who runs it, and what an agent should know to
 * use it well. The operator sets the contact and may rewrite a host's own paragraph of guidance
 * (configuration: X402M_CONTACT_EMAIL, X402M_CONTACT_URL, X402M_<HOST>_GUIDANCE); the paragraph defaults
 * to the merchant's (`Merchant.guidance`, written in its catalogue folder), and the kit adds how to pay and
 * where the documents are, from the catalogue.
 */
import { isMetered, isMeteredOnly, type Merchant, offersChannels, offersExactPermit2 } from "./endpoint.ts";
import { type PaymentSettings, paymentNetworks } from "./routes.ts";
import type { MerchantKitSettings } from "./settings.ts";

/** OpenAPI's `info.contact`: at least one way to reach the operator. */
export interface OpenApiContact {
  email?: string;
  url?: string;
}

export interface HostInfo {
  contact: OpenApiContact;
  /** Plain text, paragraphs separated by a blank line: `own`, `paying` and where the documents are. */
  guidance: string;
  /** The host's own paragraph (the operator's, else the catalogue's), if any. */
  own?: string;
  /** How to pay, from what the catalogue offers. */
  paying: string;
}

/** The configuration's part: the operator's contact, and the host's own paragraph if rewritten. */
export interface HostInfoSettings {
  contact: { email: string | null; url: string | null };
  guidance: string | null;
}

export const NO_HOST_SETTINGS: HostInfoSettings = { contact: { email: null, url: null }, guidance: null };

/** The settings of the host `name` (its configuration name; a host not configured by name has none of its own). */
export function hostInfoSettings(
  config: Pick<MerchantKitSettings, "contact" | "merchants">,
  name: string,
): HostInfoSettings {
  return { contact: config.contact, guidance: config.merchants[name]?.guidance ?? null };
}

/**
 * The contact: the operator's email and URL as configured; without a URL, the host's reference page,
 * which says what the host is and where it is paid (registries that verify ownership need the email).
 */
export function contactOf(publicUrl: string, settings: HostInfoSettings): OpenApiContact {
  return {
    ...(settings.contact.email ? { email: settings.contact.email } : {}),
    url: settings.contact.url ?? `${publicUrl}/docs`,
  };
}

/** How to pay, said once for the whole host, from what its catalogue offers. */
export function payingGuidance(
  merchant: Pick<Merchant, "endpoints" | "free">,
  payments: PaymentSettings,
): string {
  const token = paymentNetworks(payments)
    .map((on) => `${on.asset.name} (${on.asset.address}) on ${on.network}`)
    .join(", or ");
  const lines = [
    `Paying: a paid operation (one with x-payment-info) costs its price per call in ${token}, through x402 v2, no account and no key. Call it; the 402's PAYMENT-REQUIRED header (base64 JSON) says what to pay; sign and send the same request again with PAYMENT-SIGNATURE (an x402 client such as @x402/fetch does both). PAYMENT-RESPONSE is the receipt. x402 v1 clients pay too: the 402's JSON body lists what they can (exact), X-PAYMENT and X-PAYMENT-RESPONSE carry payment and receipt.`,
  ];
  if (merchant.endpoints.some(isMetered)) {
    const only = merchant.endpoints.some(isMeteredOnly);
    lines.push(
      `${only ? "Metered operations (price mode dynamic, x402 scheme upto) take" : "Operations that offer the x402 scheme upto take"} a Permit2 authorisation of their price as a maximum and settle what the call used, often less; the wallet approves Permit2 for the token once (else 412), or signs the permit or approval the 402's gas sponsoring declares, which the facilitator sends with the payment (@x402/evm's clients, given an RPC URL).`,
    );
  }
  if (merchant.endpoints.some(offersExactPermit2)) {
    lines.push(
      "Operations whose 402 lists an exact option with extra.assetTransferMethod \"permit2\" can be paid their price with a Permit2 transfer through x402's exact proxy, for wallets that sign Permit2 rather than EIP-3009 (with @x402/evm's exact client, choose that option); the wallet approves Permit2 for the token once (else 412 permit2_allowance_required), or signs the gas sponsoring the 402 declares, as for upto.",
    );
  }
  if (merchant.endpoints.some(offersChannels)) {
    lines.push(
      "Operations that list the x402 scheme batch-settlement take a payment channel: one deposit into x402's escrow, then a signed voucher per call and no transaction per call, charged as the other schemes would charge; calls on one channel run one at a time (a busy channel answers 402 channel_busy: retry). The balance not charged comes back on request (GET /channels/refund with a refund voucher, as @x402/evm's batch-settlement client's refund() sends it) or by the channel's timed withdrawal.",
    );
  }
  lines.push(
    "Input is checked before any payment: a 400 costs nothing, and no refusal or failed call is charged. Each payment pays for one call: sign a new one for every call (one already in use is refused with 409).",
  );
  if ((merchant.free ?? []).length > 0)
    lines.push("Operations without x-payment-info are free: call them directly.");
  return lines.join(" ");
}

/** Where the host's documents are. */
function documentsGuidance(publicUrl: string): string {
  return `Documents: ${publicUrl}/openapi.json (every operation with its input and output schemas and price), ${publicUrl}/llms.txt (this guidance and the prices in short), ${publicUrl}/mcp (the same operations as MCP tools), ${publicUrl}/docs (the reference page, to try a call).`;
}

/** The host's contact and guidance: its settings, else its catalogue's, with the kit's part added. */
export function hostInfo(
  merchant: Merchant,
  payments: PaymentSettings,
  settings: HostInfoSettings = NO_HOST_SETTINGS,
): HostInfo {
  const own = (settings.guidance ?? merchant.guidance)?.trim() || undefined;
  const paying = payingGuidance(merchant, payments);
  return {
    contact: contactOf(merchant.publicUrl, settings),
    guidance: [own, paying, documentsGuidance(merchant.publicUrl)].filter(Boolean).join("\n\n"),
    ...(own ? { own } : {}),
    paying,
  };
}
