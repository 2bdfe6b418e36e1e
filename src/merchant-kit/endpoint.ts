/**
 * A merchant's catalogue as data: every paid endpoint is one entry (method, path, price, description,
 * input and output schemas with examples, handler). The x402 routes, the Bazaar extension, the OpenAPI
 * document, the reference page, `/.well-known/x402` and the listing feed are all built from it, so a price
 * or a description is written in exactly one place.
 */
import type { AuthorizerSigner } from "@x402/evm/batch-settlement/server";
import type { LocalAccount } from "viem";
import type { z } from "zod";
import type { Database, Migration } from "../common/db/index.ts";
import { AppError } from "../common/errors.ts";
import type { Streamed } from "./payments/streamed.ts";
import type { MerchantKitSettings } from "./settings.ts";

/** A dollar price exactly as the spec lists it, e.g. "0.001" (no "$", no exponent). */
export type PriceUsd = `${number}`;

export type HttpMethod = "GET" | "POST";

/** What every handler may use besides its input; one instance per process. */
export interface MerchantServices {
  db: Database;
  /** The kit's settings (payments, contact, hosts): a merchant's own reach it when it is built. */
  config: MerchantKitSettings;
}

/** The per-request context a handler receives. */
/** What a precheck may read: the host's services (e.g. a key kept in its database). */
export interface PrecheckContext {
  services: MerchantServices;
}

export interface HandlerContext {
  /**
   * The wallet that paid, lower-case, taken from the payment the facilitator verified. It is the caller's
   * identity for per-wallet data (`/api/store`, `/api/scratchpad`).
   */
  payer: `0x${string}`;
  /** Aborted when the caller goes away or the endpoint's time budget runs out: pass it to every fetch. */
  signal: AbortSignal;
  services: MerchantServices;
  /** The incoming request, for the few handlers that need headers (e.g. the caller's IP). */
  request: Request;
  /**
   * Present when the call is metered: paid with `upto`, or through a channel (`batch-settlement`) on an
   * endpoint that offers `upto`. What this call cost, in the token's atomic units, at most the price's.
   * Call it before answering; the kit settles that amount (0 settles nothing; a channel is charged 0).
   * An answer below 400 without it is the handler's bug: a 500, not charged. An endpoint that also offers
   * `exact` is paid its listed price when the buyer chose that, and gets no `meter`.
   */
  meter?: (atomic: bigint) => void;
}

/**
 * How a call is paid. `exact` (the default): the listed price. `upto`: the buyer authorises the listed price
 * as a maximum (a Permit2 signature) and pays what the handler metered (`HandlerContext.meter`).
 * `batch-settlement`: through a payment channel the buyer deposited into once, with a signed voucher per
 * call and no transaction (channels/ says how the merchant keeps, claims and refunds them); a channel pays
 * what `upto` would on an endpoint that offers `upto` (the metered amount), else the listed price.
 */
export type Scheme = "exact" | "upto" | "batch-settlement";

/**
 * How an `exact` payment may move the token (x402's `extra.assetTransferMethod`). `eip3009` (the default): the
 * buyer signs the token's own `transferWithAuthorization`, and needs nothing but the token. `permit2`: the
 * buyer signs a Permit2 transfer of exactly the price, spent only by x402's exact Permit2 proxy and only to
 * the merchant, for wallets that sign Permit2 rather than EIP-3009 (the buyer approves Permit2 for the token
 * once, as for `upto`; without it the payment is refused, 412 `permit2_allowance_required`).
 */
export type ExactTransfer = "eip3009" | "permit2";

/** The scheme of payment channels (x402's `batch-settlement`). */
export const CHANNEL_SCHEME = "batch-settlement" satisfies Scheme;

/** The schemes an endpoint offers, in the order its 402 lists them. */
export function schemesOf(endpoint: Pick<AnyEndpoint, "scheme">): readonly Scheme[] {
  const { scheme } = endpoint;
  return scheme === undefined ? ["exact"] : typeof scheme === "string" ? [scheme] : scheme;
}

/** How an endpoint's `exact` payments may move the token, in the order its 402 lists them. */
export function exactTransfersOf(endpoint: Pick<AnyEndpoint, "exactTransfers">): readonly ExactTransfer[] {
  return endpoint.exactTransfers ?? ["eip3009"];
}

/** Whether the listed price may be paid through Permit2 (`exact` offered with the `permit2` transfer). */
export function offersExactPermit2(endpoint: Pick<AnyEndpoint, "scheme" | "exactTransfers">): boolean {
  return schemesOf(endpoint).includes("exact") && exactTransfersOf(endpoint).includes("permit2");
}

/**
 * Whether a payment of the endpoint may be a Permit2 authorization (`upto`, or `exact` through Permit2):
 * the buyer's wallet must have approved Permit2 for the token.
 */
export function takesPermit2(endpoint: Pick<AnyEndpoint, "scheme" | "exactTransfers">): boolean {
  return isMetered(endpoint) || offersExactPermit2(endpoint);
}

/**
 * Whether a call may be metered (`upto` offered): its handler meters when `ctx.meter` is given, which it is
 * under `upto` and through a channel.
 */
export function isMetered(endpoint: Pick<AnyEndpoint, "scheme">): boolean {
  return schemesOf(endpoint).includes("upto");
}

/** Whether a call can only be metered: its price is a maximum, never charged as listed (no `exact`). */
export function isMeteredOnly(endpoint: Pick<AnyEndpoint, "scheme">): boolean {
  return isMetered(endpoint) && !schemesOf(endpoint).includes("exact");
}

/** Whether a call may be paid through a payment channel (`batch-settlement` offered). */
export function offersChannels(endpoint: Pick<AnyEndpoint, "scheme">): boolean {
  return schemesOf(endpoint).includes(CHANNEL_SCHEME);
}

/**
 * The endpoints with payment channels offered beside their schemes (after them in the 402: a buyer that
 * has no channel pays as before). A catalogue offers channels with this; the kit still offers them only
 * where the facilitator can serve them (payments/fronts.ts).
 */
export function withChannels<E extends AnyEndpoint>(endpoints: readonly E[]): E[] {
  return endpoints.map((e) => (offersChannels(e) ? e : { ...e, scheme: [...schemesOf(e), CHANNEL_SCHEME] }));
}

/** The merchant as it is paid without channels: `batch-settlement` taken out of every endpoint's schemes. */
export function withoutChannels(merchant: Merchant): Merchant {
  if (!merchant.endpoints.some(offersChannels)) return merchant;
  return {
    ...merchant,
    endpoints: merchant.endpoints.map((e) =>
      offersChannels(e) ? { ...e, scheme: schemesOf(e).filter((s) => s !== CHANNEL_SCHEME) } : e,
    ),
  };
}

/**
 * How a POST body arrives: `json` (the default), or `multipart` (a form with files, e.g. an audio upload,
 * the query string's parameters beside its fields):
 * its fields and files are what `input` validates, files as `File` objects (`z.file()`).
 */
export type BodyType = "json" | "multipart";

/**
 * The shape of an endpoint's refusals. `project` (the default): `{"error": {"code", "message"}}`. `openai`:
 * OpenAI's `{"error": {"message", "type", "code", "param"}}`, for endpoints that speak its dialect.
 */
export type ErrorDialect = "project" | "openai";

/** The HTTP status of a refusal an endpoint may answer. */
export type ErrorStatus =
  | 400
  | 401
  | 402
  | 404
  | 409
  | 412
  | 413
  | 415
  | 422
  | 429
  | 501
  | 502
  | 503
  | 504
  | 507;

/**
 * The refusals an endpoint answers itself, by status, each saying when it happens, for buyers: e.g.
 * `{ 404: "No location is known for the address (location_unknown).", 507: "..." }`. Only what the
 * endpoint's own input check, precheck or handler can answer; the kit documents what it answers for every
 * paid route (refusals.ts: bad input, payment, a payment in use, a facilitator away, the time budget, a body
 * too large...), and that no refusal is charged. A status both give is documented with both reasons.
 */
export type Errors = Readonly<Partial<Record<ErrorStatus, string>>>;

/**
 * What a call does besides computing its answer. It decides how the kit guards the payment
 * (docs/platform.md, "When a call is charged"):
 * - `"writes"`: it changes stored data (the payer's collections, scratchpads). The handler's
 *   `services.db` is a transaction that commits only once the payment has settled, and the payer's funds
 *   are reserved first.
 * - `"upstream"`: it costs money outside (a language model, a search API, an image model). The payer's
 *   funds are reserved before the handler runs: a payment the payer's balance cannot cover on top of its
 *   payments in flight is refused (402 `insufficient_funds`) before any work.
 * - `"compute"`: it costs this host real work (a local language model: seconds of CPU on which other calls
 *   wait). Guarded as `"upstream"` is.
 * A guarded call that goes unpaid once its work began (its caller left, or it failed) counts against the
 * payer (payments/ledger.ts).
 */
export type Effect = "writes" | "upstream" | "compute";

/**
 * Tables an endpoint keeps its state in (one module of migrations, src/common/db/migrate.ts), applied
 * when the merchant's host starts. `sweep` runs then and hourly, on the database, outside any request:
 * the place for clean-ups across all payers (expired data).
 */
export interface Tables {
  module: string;
  migrations: readonly Migration[];
  sweep?: (db: Database) => Promise<void>;
}

/**
 * One paid endpoint. `input` validates the query (GET) or the JSON body (POST) before any payment is asked
 * for; `output` documents the answer (OpenAPI, Bazaar). A handler answers its output, or a `Response` for
 * non-JSON bodies; it throws an `AppError` (src/common/errors.ts) to refuse, which is never charged.
 */
export interface Endpoint<In extends z.ZodType = z.ZodType, Out extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /**
   * Absolute path, e.g. "/api/calc". A segment `:name` is a path parameter (`/pay/:agent_id`): its value
   * is part of the input, validated like a query parameter, and documents show it as `{name}`.
   */
  path: `/${string}`;
  /** What a call costs; under `upto`, the most it may cost. */
  price: PriceUsd;
  /**
   * Default `exact`. See `Scheme`; a list offers each, in that order (e.g. `["exact", "upto"]`).
   * `batch-settlement` never alone: where the facilitator cannot serve channels, the route is paid by its
   * other schemes (merchantApp refuses a route that would have none).
   */
  scheme?: Scheme | readonly Scheme[];
  /**
   * How an `exact` payment may move the token, each an `exact` option of the 402 in this order; default
   * `["eip3009"]`. See `ExactTransfer`. `["eip3009", "permit2"]` also takes wallets that sign Permit2: a
   * buyer that does not choose still pays with the first, EIP-3009.
   */
  exactTransfers?: readonly ExactTransfer[];
  /** POST only; default `json`. See `BodyType`. */
  body?: BodyType;
  /** Default `project`. See `ErrorDialect`. */
  errorDialect?: ErrorDialect;
  /** The refusals it answers itself besides the kit's, for its OpenAPI document. See `Errors`. */
  errors?: Errors;
  /** What the endpoint does, for buyers: the listing, the 402, the OpenAPI summary. */
  description: string;
  input: In;
  output: Out;
  /**
   * The media types a successful answer may carry, the usual one first (e.g. `["audio/mpeg", "audio/wav"]`).
   * Default `["application/json"]`, described by `output`; another type is documented as text (`text/*`)
   * or as bytes, its handler answering a `Response`.
   */
  outputMedia?: readonly string[];
  /** A valid input and the output it gives: shown in the 402 (Bazaar), the OpenAPI document and the docs. */
  example: { input: z.input<In>; output: z.output<Out> };
  /** Time budget of the handler, after which the caller gets a 504 and pays nothing. Default 30 s. */
  timeoutMs?: number;
  /**
   * What the handler needs loaded, once per process (its engine's module: `onFirstUse`), awaited once the
   * payment is verified and before the time budget starts: a cold host's first call waits for the import
   * instead of running out of a budget meant for the work (mathjs takes seconds to load on a busy machine,
   * more than `/api/calc`'s 5 s).
   */
  load?: () => Promise<unknown>;
  /**
   * Query parameters that are the caller's credentials (the social API's `auth_token` and `ct0`): left out
   * of the 402's resource URL, which travels to the facilitator and into discovery catalogues.
   */
  secretParams?: readonly string[];
  /** Largest accepted request body (POST). Default 1 MiB. */
  maxBodyBytes?: number;
  /** What the call does beyond its answer: none (the default), writes, costs upstream. See `Effect`. */
  effects?: readonly Effect[];
  /** The tables its state lives in, if any: one module, or several (e.g. its own and its provider's). */
  tables?: Tables | readonly Tables[];
  /**
   * Checked once the input is valid, before any payment is asked for: an error refuses the call (e.g. a
   * 503 when the program it needs is not installed here), undefined lets it go on. Never charged.
   */
  precheck?: (input: z.output<In>, ctx: PrecheckContext) => Promise<AppError | undefined>;
  /**
   * false: not advertised. It is served, priced and in the OpenAPI document, but declares no Bazaar
   * discovery extension and is left out of the merchant's listings and `/.well-known/x402`. Default true.
   */
  listed?: boolean;
  /**
   * Whether a payment must carry a buyer's id (x402's `payment-identifier` extension), so that a retry is
   * answered again and charged once (payments/extensions/payment-ids.ts): optional by default, required where the
   * catalogue or the operator (X402M_PAYMENT_ID_REQUIRED) says so. Declared in the route's 402 either way.
   */
  paymentId?: "optional" | "required";
  /**
   * The call sells access for a period: a payment buys its answer and, for the wallet that paid, this many
   * seconds in which that wallet signs in (x402's `sign-in-with-x`) instead of paying, and is served the same
   * path again without a charge (payments/extensions/siwx.ts). Only on a call priced as listed (no `upto`) that writes
   * nothing.
   */
  accessSeconds?: number;
  /**
   * With `accessSeconds`: the most calls a period serves signed in. A signed-in call is paid for by no payment
   * of its own, so what its handler spends outside (an upstream lookup) must fit in the period's price: the
   * count bounds it, where time alone would not (a wallet polling all day).
   */
  accessCalls?: number;
  /**
   * Answers the output (sent as JSON), a `Response`, or a `Streamed` answer: sent as it is produced and
   * settled for what reached the caller (payments/streamed.ts), when `streaming` says how.
   */
  handler: (input: z.output<In>, ctx: HandlerContext) => Promise<z.output<Out> | Response | Streamed>;
  /** How a streamed answer is charged, and where its receipt is, for the OpenAPI document. */
  streaming?: string;
}

/**
 * An example input as JSON shows it: a file of a multipart example (a `File`) as its name and type, so
 * documents and the 402's discovery extension can show the form.
 */
export function exampleJson(input: unknown): unknown {
  if (typeof File !== "undefined" && input instanceof File)
    return `<${input.type || "file"} file ${input.name}>`;
  if (Array.isArray(input)) return input.map(exampleJson);
  if (input && typeof input === "object") {
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, exampleJson(v)]));
  }
  return input;
}

/** An endpoint of any schemas: what catalogues hold. */
// biome-ignore lint/suspicious/noExplicitAny: the handler's input type varies per entry; defineEndpoint checks it.
export type AnyEndpoint = Endpoint<any, any>;

/** A merchant host: its name, wallet, public base URL and endpoints. */
export interface Merchant {
  /** The host's name in configuration and in `serve`'s ready line, e.g. "utility". */
  name: string;
  /** Title of the API in the OpenAPI document and the reference page. */
  title: string;
  payTo: `0x${string}`;
  /** Public base URL, no trailing slash: resource URLs are built on it. */
  publicUrl: string;
  endpoints: readonly AnyEndpoint[];
  /** Routes served free beside the paid ones (no payment, not listed), e.g. a model list. */
  free?: readonly FreeRoute[];
  /**
   * What an agent should know to use this API well, beyond each operation's description: which call to
   * start with, how calls combine, what the data is (plain text, a paragraph or two). Its OpenAPI
   * document's `info.x-guidance` and its `/llms.txt` carry it, with the kit's own part (host-info.ts);
   * the operator may rewrite it (X402M_<HOST>_GUIDANCE).
   */
  guidance?: string;
  /**
   * Work its host starts once it listens, so that the first paid call does not wait for it (the inference
   * merchant's tokenizer). A failure is the host's to log: the first call that needs the work tries again.
   */
  warm?: () => Promise<void>;
  /**
   * The host's own channel authorizer (X402M_<HOST>_CHANNEL_AUTHORIZER_KEY): its channels name it as their
   * receiverAuthorizer and it signs their claims and refunds, so that any facilitator serving
   * batch-settlement settles them. None: the facilitator's authorizer, where it signs for this host.
   */
  channelAuthorizer?: AuthorizerSigner;
  /**
   * The key its offers and receipts are signed with (x402's `offer-receipt`, payments/receipts/receipts.ts):
   * X402M_<HOST>_RECEIPT_KEY, else one kept in the data directory. None: its 402s and receipts are unsigned.
   */
  receiptSigner?: LocalAccount;
  /**
   * Its ERC-8021 builder code (X402M_<HOST>_BUILDER_CODE), declared in each 402 as the app code its buyers'
   * clients copy into their payments (payments/extensions/builder-code.ts). None: no code declared.
   */
  builderCode?: string;
  /**
   * Its Solana wallet (X402M_<HOST>_SOLANA_PAY_TO, a base58 owner; issue 86): every route that takes `exact`
   * takes it on Solana too, in USDC at the same price, paid to this owner's USDC account. None: no Solana.
   */
  solanaPayTo?: string;
}

/** A free route: documented in the OpenAPI document and the reference page, never charged. */
export interface FreeRoute {
  method: "GET";
  path: `/${string}`;
  description: string;
  /** An example answer, for the documentation. */
  example: unknown;
  /** The shape of its refusals. Default `project`. */
  errorDialect?: ErrorDialect;
  /** The refusals it answers (a free route has no kit refusal). See `Errors`. */
  errors?: Errors;
  handler: (request: Request, services: MerchantServices) => Response | Promise<Response>;
}

/**
 * An endpoint's `precheck` from a check that throws its refusal (the same check its handler runs): an
 * `AppError` is the refusal, anything else stays the bug it is.
 */
export function precheckOf<I>(
  check: (input: I, ctx: PrecheckContext) => Promise<unknown>,
): (input: I, ctx: PrecheckContext) => Promise<AppError | undefined> {
  return async (input, ctx) => {
    try {
      await check(input, ctx);
      return undefined;
    } catch (error) {
      if (error instanceof AppError) return error;
      throw error;
    }
  };
}

/** Types one catalogue entry: the handler's input is the schema's output. */
export function defineEndpoint<In extends z.ZodType, Out extends z.ZodType>(
  endpoint: Endpoint<In, Out>,
): Endpoint<In, Out> {
  return endpoint;
}

/**
 * A merchant that lists some endpoints of another under its own host (docs/http.md, "The merchant hosts"): same handlers,
 * descriptions and prices, filtered from the source catalogue, never copied. Paths the source does not
 * (yet) have are left out; `missingAliasPaths` names them.
 */
export function aliasOf(
  source: Merchant,
  alias: { name: string; payTo: `0x${string}`; publicUrl: string; paths: readonly string[] },
): Merchant {
  return {
    name: alias.name,
    title: source.title,
    payTo: alias.payTo,
    publicUrl: alias.publicUrl,
    endpoints: source.endpoints.filter((e) => alias.paths.includes(e.path)),
  };
}

/** The endpoint's full URL on the merchant's host. */
export function resourceUrl(merchant: Merchant, endpoint: AnyEndpoint): string {
  return `${merchant.publicUrl}${templatePath(endpoint.path)}`;
}

/** The names of a path's parameters: `/pay/:agent_id` -> `["agent_id"]`. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string);
}

/**
 * A path as documents write it, its parameters in braces (`/pay/{agent_id}`: OpenAPI's and URI
 * templates' form); the routers take the `:name` form the catalogue writes.
 */
export function templatePath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
}

/** The alias paths its source catalogue does not have. */
export function missingAliasPaths(source: Merchant, paths: readonly string[]): string[] {
  return paths.filter((p) => !source.endpoints.some((e) => e.path === p));
}
