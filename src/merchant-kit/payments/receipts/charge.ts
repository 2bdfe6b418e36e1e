/**
 * The charge a merchant signs beside x402's receipt (docs/platform.md, "Signed offers and receipts"): what both
 * the merchant and a buyer need to agree on, its EIP-712 type and how a request is hashed into it.
 *
 * x402's `offer-receipt` receipt (spec v1.0, §5.2) states who paid for which resource and when, and no amount:
 * its EIP-712 type is fixed by the spec (§3.2.1: changing it is a new version), so a field cannot be added to
 * it. For `upto` and `batch-settlement` the amount is whatever the merchant settled (x402 #3001, #3003), and
 * that is what a buyer needs attested (#1802). So the kit signs a second EIP-712 message of its own type, a
 * `Charge`, with the same key, and carries it in the same extension's `info` beside the receipt
 * (`info.charge`): a client that knows only the spec reads the receipt and passes over the field it does not
 * know (§2), one that knows the kit reads the amount.
 */
import { createHash } from "node:crypto";
import type { Hex } from "viem";

/** The charge's EIP-712 domain: off-chain, chain id 1 whatever the network, as x402's own offers and receipts. */
export const CHARGE_DOMAIN = { name: "x402-merchants charge", version: "1", chainId: 1 } as const;

export const CHARGE_TYPES = {
  Charge: [
    { name: "version", type: "uint256" },
    { name: "resourceUrl", type: "string" },
    { name: "network", type: "string" },
    { name: "asset", type: "string" },
    { name: "payTo", type: "string" },
    { name: "payer", type: "string" },
    { name: "scheme", type: "string" },
    { name: "amount", type: "string" },
    { name: "ceiling", type: "string" },
    { name: "requestHash", type: "bytes32" },
    { name: "transaction", type: "string" },
    { name: "channel", type: "string" },
    { name: "issuedAt", type: "uint256" },
  ],
} as const;

/** What a merchant charged for one call, as it signs it. Amounts in the asset's atomic units. */
export interface ChargePayload {
  version: 1;
  /** The resource, as the receipt and the offers name it: the endpoint's URL without its query. */
  resourceUrl: string;
  network: string;
  asset: string;
  payTo: string;
  payer: string;
  scheme: string;
  /** What was charged: the price (`exact`), the metered amount (`upto`, a metered channel call). */
  amount: string;
  /** The most the payment allowed for this call: the offer's amount (`upto`'s maximum, a call's price). */
  ceiling: string;
  /** `requestHash` of the request paid for: method, path, query and body. */
  requestHash: Hex;
  /** The settlement's transaction; empty for a channel's voucher, whose charge is claimed later. */
  transaction: string;
  /** The payment channel's id (`batch-settlement`), else empty. */
  channel: string;
  /** Seconds since the epoch, the receipt's own `issuedAt`. */
  issuedAt: number;
}

export interface SignedCharge {
  format: "eip712";
  payload: ChargePayload;
  signature: Hex;
}

/** The message EIP-712 signs: its integers as bigints. */
export function chargeMessage(payload: ChargePayload) {
  return { ...payload, version: BigInt(payload.version), issuedAt: BigInt(payload.issuedAt) };
}

/** A request as `requestHash` reads it: a Fetch `Request`, or the parts a server has kept of one. */
export interface HashedRequest {
  method: string;
  url: string;
  contentType: string | undefined;
  /** A multipart form's fields, each name with its values in order. */
  form(): Promise<Record<string, string | File | (string | File)[]>>;
  bytes(): Promise<Uint8Array>;
}

/**
 * The request a charge was for, as a 32-byte SHA-256: the method, the path, the query (its parameters in order
 * of name) and the body; a multipart form's fields and files in order of name, since a form's encoding (its
 * boundary) differs each time it is sent. The same binding as a payment id's (payments/extensions/payment-ids.ts), so a
 * buyer recomputes it from the `Request` it sent (`new Request(url, init)`), body included.
 */
export async function requestHash(request: Request | HashedRequest): Promise<Hex> {
  const parts = request instanceof Request ? fromFetch(request) : request;
  const url = new URL(parts.url);
  url.searchParams.sort();
  const method = parts.method.toUpperCase();
  const hash = createHash("sha256").update(`${method}\n${url.pathname}\n${url.searchParams}\n`);
  if (method === "GET" || method === "HEAD") return `0x${hash.digest("hex")}`;
  if (/^multipart\/form-data\b/i.test(parts.contentType ?? "")) {
    const form = await parts.form();
    for (const name of Object.keys(form).sort()) {
      for (const value of [form[name]].flat()) {
        hash.update(`${name}\n`);
        if (typeof value === "string") hash.update(`s${value.length}:${value}\n`);
        else {
          const bytes = new Uint8Array(await (value as File).arrayBuffer());
          hash
            .update(`f${(value as File).name}:${bytes.byteLength}:`)
            .update(bytes)
            .update("\n");
        }
      }
    }
    return `0x${hash.digest("hex")}`;
  }
  return `0x${hash.update(await parts.bytes()).digest("hex")}`;
}

function fromFetch(request: Request): HashedRequest {
  return {
    method: request.method,
    url: request.url,
    contentType: request.headers.get("content-type") ?? undefined,
    form: async () => {
      const fields: Record<string, (string | File)[]> = {};
      for (const [name, value] of await request.clone().formData())
        fields[name] = [...(fields[name] ?? []), value];
      return fields;
    },
    bytes: async () => new Uint8Array(await request.clone().arrayBuffer()),
  };
}
