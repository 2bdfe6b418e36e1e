import type { RouteConfig } from "@x402/core/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { chains } from "../chain/chains.ts";
import { SOLANA_NETWORK, SOLANA_USDC_DECIMALS, SOLANA_USDC_MINT } from "../chain/solana/constants.ts";
import {
  type AnyEndpoint,
  CHANNEL_SCHEME,
  type ExactTransfer,
  exactTransfersOf,
  exampleJson,
  type Merchant,
  offersChannels,
  pathParams,
  type Scheme,
  schemesOf,
} from "./endpoint.ts";
import { jsonSchemaOf, objectProperties } from "./json-schema.ts";
import { declareBuilderCode, declareSignIn } from "./payments/extensions/index.ts";
import { DEFAULT_TIMEOUT_MS } from "./payments/paid-handler.ts";
import { declareReceipts } from "./payments/receipts/index.ts";
import { declareSponsoring, type SponsoringKey } from "./payments/sponsoring/index.ts";
import { priceToAtomic } from "./price.ts";
import type { MerchantKitSettings } from "./settings.ts";

/**
 * The payment settings the routes need: network and token (configuration's `payments`), and the further
 * networks the host takes payment on, when it takes more than one (`networks`, the first being these).
 */
export type PaymentSettings = Pick<MerchantKitSettings["payments"], "network" | "asset" | "rpcUrl"> &
  Partial<Pick<MerchantKitSettings["payments"], "networks" | "solanaRpcUrl">>;

/** One network a host is paid on: its CAIP-2 id, its token, the JSON-RPC where payers' funds are read. */
export type PaymentNetwork = MerchantKitSettings["payments"]["networks"][number];

/**
 * Every network the host takes payment on, its first one first: the first is always `network`, `asset`
 * and `rpcUrl` (what a process may have set for its own devnet), the rest `networks`' after the first.
 */
export function paymentNetworks(payments: PaymentSettings): PaymentNetwork[] {
  const { network, asset, rpcUrl } = payments;
  return [{ network, asset, rpcUrl }, ...(payments.networks ?? []).slice(1)];
}

/** Which of a route's `accepts` entries a front offers (payments/fronts.ts); default all. */
export type OfferFilter = (accept: { scheme: string; network: string; price?: unknown }) => boolean;

/** How long a buyer's authorization may wait for settlement (the SDK's default too). */
export const MAX_TIMEOUT_SECONDS = 300;

/** What a channel request's settlement may take beyond the handler's budget (a deposit lands on chain). */
export const CHANNEL_SETTLE_SECONDS = 60;

/**
 * A channel payment's `maxTimeoutSeconds`: the handler's time budget and its settlement. The SDK holds the
 * channel for a request this long (its reservation's lifetime, between 5 s and 10 min), so it must outlast
 * the request; and it is how long a process that crashed mid-request leaves its channel busy on a shared
 * PostgreSQL server (channels/storage.ts), so it is no longer than that. A deposit's ERC-3009 authorization
 * is valid as long.
 */
export function channelTimeoutSeconds(endpoint: Pick<AnyEndpoint, "timeoutMs">): number {
  return Math.ceil((endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000) + CHANNEL_SETTLE_SECONDS;
}

/** The path of the cooperative refund route, on every host that offers channels (channels/refund-route.ts). */
export const REFUND_PATH = "/channels/refund";

/** The route key `@x402/hono` matches, e.g. "GET /api/calc". */
export function routeKey(endpoint: AnyEndpoint): string {
  return `${endpoint.method} ${endpoint.path}`;
}

/**
 * The x402 route of one endpoint: one payment option per scheme it offers (exact; upto when it meters),
 * `exact` once per transfer it allows (`exactTransfers`: EIP-3009, Permit2), the merchant's wallet, the
 * price in the token's atomic units (an explicit amount and asset, so no SDK price table decides what a
 * dollar is), the Bazaar discovery extension describing input and output, and the `payment-identifier`
 * extension (a buyer's id per payment: optional, or required where `paymentId` says so), and where a
 * Permit2 payment is taken, the gas sponsoring its facilitators list (`sponsoring`: payments/sponsoring/).
 * The resource URL is the one the buyer asked for, on the merchant's public URL
 * (payments/resource-server.ts), so it is not set here.
 */
export function x402Route(
  merchant: Merchant,
  endpoint: AnyEndpoint,
  payments: PaymentSettings,
  offers: OfferFilter = () => true,
  sponsoring: readonly SponsoringKey[] = [],
): RouteConfig {
  const output = { example: endpoint.example.output, schema: jsonSchemaOf(endpoint.output, "output") };
  const { input, inputSchema, path } = splitPathParams(endpoint);
  const amount = priceToAtomic(endpoint.price, payments.asset.decimals).toString();
  // The host's first network first, every way on it, then the next: a buyer's client takes the first it can pay.
  const all = paymentNetworks(payments).flatMap((on) =>
    schemesOf(endpoint).flatMap((scheme) =>
      scheme === "exact"
        ? exactTransfers(endpoint).map((transfer) =>
            paymentOption(merchant, endpoint, on, scheme, amount, transfer),
          )
        : [paymentOption(merchant, endpoint, on, scheme, amount)],
    ),
  );
  // Solana after the EVM networks, where the host has a Solana wallet (issue 86): exact only, USDC.
  if (merchant.solanaPayTo && payments.solanaRpcUrl && schemesOf(endpoint).includes("exact"))
    all.push(
      solanaOption(
        merchant.solanaPayTo,
        priceToAtomic(endpoint.price, SOLANA_USDC_DECIMALS).toString(),
      ) as (typeof all)[number],
    );
  // An endpoint none of whose ways is offered keeps them all: it cannot be paid, and its 402 says how it would be.
  const offered = all.filter(offers);
  const options = offered.length > 0 ? offered : all;
  const bodyType = endpoint.body === "multipart" ? "form-data" : "json";
  return {
    accepts: options.length === 1 ? (options[0] as (typeof options)[number]) : options,
    description: endpoint.description,
    mimeType: endpoint.outputMedia?.[0] ?? "application/json",
    extensions: {
      ...(endpoint.listed !== false &&
        declareDiscoveryExtension(
          endpoint.method === "GET"
            ? { input, inputSchema, ...path, output }
            : { input, inputSchema, ...path, bodyType, output },
        )),
      // A route that sells a period serves its payer again, signed in, until the period ends (payments/extensions/siwx.ts).
      ...declareSignIn(endpoint, payments.network),
      // Every paid route answers a retry with the same id again, charged once (payments/extensions/payment-ids.ts).
      [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(endpoint.paymentId === "required"),
      // Signed offers in its 402s and a signed receipt with each answer, where the host has a key (payments/receipts/receipts.ts).
      ...(merchant.receiptSigner && declareReceipts()),
      // The host's builder code, which the facilitator appends to the settlement (payments/extensions/builder-code.ts).
      ...declareBuilderCode(merchant.builderCode),
      // A wallet without a Permit2 allowance pays with a permit or approval the facilitator carries out.
      ...declareSponsoring(endpoint, sponsoring),
    },
  };
}

/** The endpoint's exact transfers; none is a catalogue's mistake (an `exact` that nobody could pay). */
function exactTransfers(endpoint: AnyEndpoint): readonly ExactTransfer[] {
  const transfers = exactTransfersOf(endpoint);
  if (transfers.length === 0 || new Set(transfers).size !== transfers.length)
    throw new Error(`${endpoint.path}: exactTransfers lists each way to pay exact once, at least one`);
  return transfers;
}

/**
 * One way to pay an endpoint: the 402's `accepts` entry for `scheme` (for `exact`, through `transfer`),
 * before the SDK completes it.
 */
function paymentOption(
  merchant: Merchant,
  endpoint: Pick<AnyEndpoint, "timeoutMs">,
  payments: Pick<PaymentNetwork, "network" | "asset">,
  scheme: Scheme,
  amount: string,
  transfer: ExactTransfer = "eip3009",
) {
  const domain = { name: payments.asset.name, version: payments.asset.version };
  return {
    scheme,
    network: payments.network as `${string}:${string}`,
    payTo: merchant.payTo,
    // exact signs an EIP-3009 authorization, which names the token's EIP-712 domain, and so does a channel's
    // deposit; upto signs for Permit2, whose domain is its own (the SDK adds the facilitator the buyer must
    // name; for a channel, its receiver authorizer and withdrawal delay). exact through Permit2 says so. Both
    // Permit2 ways keep the token's domain too, as the SDK's own server does for a token with EIP-2612 (USDC):
    // a wallet without the allowance signs its permit on it (gas sponsoring).
    price:
      scheme === "upto"
        ? { amount, asset: payments.asset.address, extra: domain }
        : {
            amount,
            asset: payments.asset.address,
            extra:
              scheme === "exact" && transfer === "permit2"
                ? { ...domain, assetTransferMethod: transfer }
                : domain,
          },
    maxTimeoutSeconds: scheme === CHANNEL_SCHEME ? channelTimeoutSeconds(endpoint) : MAX_TIMEOUT_SECONDS,
  };
}

/**
 * `exact` on Solana (issue 86): a transfer of USDC (6 decimals, as on the EVM chains: the same atomic amount
 * for the same price) to `payTo`'s associated token account, in a transaction the facilitator pays the fee of
 * (the SDK adds its `extra.feePayer` from the facilitator's /supported).
 */
function solanaOption(payTo: string, amount: string) {
  return {
    scheme: "exact",
    network: SOLANA_NETWORK as `${string}:${string}`,
    payTo,
    price: { amount, asset: SOLANA_USDC_MINT },
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
  };
}

/** Every endpoint's route, keyed as `paymentMiddleware` wants. */
export function x402Routes(
  merchant: Merchant,
  payments: PaymentSettings,
  offers?: OfferFilter,
  sponsoring?: readonly SponsoringKey[],
): Record<string, RouteConfig> {
  return Object.fromEntries(
    merchant.endpoints.map((e) => [routeKey(e), x402Route(merchant, e, payments, offers, sponsoring)]),
  );
}

/**
 * The cooperative refund route (`GET /channels/refund`) of a merchant whose endpoints offer channels: its
 * 402 offers `batch-settlement` alone, with the merchant's channel terms (any route's would do: a channel
 * is the buyer's with this wallet, whatever it paid for), so that the SDK client's `refundChannel` can
 * probe it with a GET, which a POST route cannot answer. It takes refunds only (channels/refund-route.ts); the
 * price shown is the cheapest channel call's, a refund costs nothing. Not listed, not in the Bazaar.
 */
export function refundRoute(
  merchant: Merchant,
  payments: PaymentSettings,
  /** The one network its channel is listed on (a further network's own path); unset, every network's. */
  network?: string,
): RouteConfig | undefined {
  const offering = merchant.endpoints.filter(offersChannels);
  const cheapest = offering
    .map((e) => priceToAtomic(e.price, payments.asset.decimals))
    .reduce<bigint | undefined>((low, p) => (low === undefined || p < low ? p : low), undefined);
  if (cheapest === undefined) return undefined;
  // A channel on each network the host is paid on: a buyer refunds the one on its chain.
  const accepts = paymentNetworks(payments)
    .filter((on) => network === undefined || on.network === network)
    .map((on) => paymentOption(merchant, {}, on, CHANNEL_SCHEME, cheapest.toString()));
  return {
    accepts: accepts.length === 1 ? (accepts[0] as (typeof accepts)[number]) : accepts,
    description: "Cooperative refund of the caller's payment channel with this merchant: no call, no charge.",
    mimeType: "application/json",
  };
}

/**
 * The refund routes: `REFUND_PATH`, whose 402 lists a channel on every network the host is paid on (its first
 * network's first), and for each further network `REFUND_PATH/<chain slug>` (`/channels/refund/polygon`), whose
 * 402 lists that network's alone: the SDK client's `refund(url)` takes the first channel a 402 lists, so a
 * buyer refunds a channel on a later network at its own path.
 */
export function refundPaths(payments: PaymentSettings): { path: string; network?: string }[] {
  return [
    { path: REFUND_PATH },
    ...paymentNetworks(payments)
      .slice(1)
      .map((on) => ({
        path: `${REFUND_PATH}/${chains.byCaip2.get(on.network)?.slug ?? on.network.replace(":", "-")}`,
        network: on.network,
      })),
  ];
}

/**
 * The example input and its schema for the Bazaar extension, path parameters apart (`pathParams`): the
 * extension fills in the route's template and the request's values when it enriches a 402.
 */
function splitPathParams(endpoint: AnyEndpoint): {
  input: Record<string, unknown>;
  inputSchema: Record<string, unknown>;
  path: { pathParams?: Record<string, unknown>; pathParamsSchema?: Record<string, unknown> };
} {
  const inputSchema = jsonSchemaOf(endpoint.input, "input");
  const input = exampleJson(endpoint.example.input) as Record<string, unknown>;
  const names = pathParams(endpoint.path);
  if (names.length === 0) return { input, inputSchema, path: {} };
  const { properties, required } = objectProperties(inputSchema);
  const pick = <T>(o: Record<string, T>, keep: boolean) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => names.includes(k) === keep));
  return {
    input: pick(input, false),
    inputSchema: {
      ...inputSchema,
      properties: pick(properties, false),
      required: required.filter((r) => !names.includes(r)),
    },
    path: {
      pathParams: pick(input, true),
      pathParamsSchema: { type: "object", properties: pick(properties, true), required: names },
    },
  };
}
