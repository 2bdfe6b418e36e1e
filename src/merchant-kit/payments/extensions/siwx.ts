/**
 * Access for a period, signed in: x402's `sign-in-with-x` extension (CAIP-122, `@x402/extensions/sign-in-with-x`;
 * docs/platform.md, "Access for a period (sign-in-with-x)") on the routes whose catalogue entry sells one
 * (`accessSeconds`). A payment buys the call and, for the wallet that paid, that many seconds of the same path;
 * within them the wallet signs the 402's challenge (the `SIGN-IN-WITH-X` header) instead of paying, and is served
 * without a settlement.
 *
 * The SDK's own parts make and check the messages: its declaration, its challenge (a fresh nonce and time per
 * 402), its parser, its field checks and its signature check. Its request and settlement hooks are not used,
 * and the kit does their work itself, for three reasons:
 * - the settlement hook records the path of the payment's `resource.url`, which is the buyer's to write: a
 *   payment for a cheap route naming this one would buy its period. The kit records the path it served and
 *   settled;
 * - the request hook checks a nonce and then records it, two steps that two concurrent replays of one message
 *   both pass; here one `INSERT` takes it;
 * - the request hook lets a failed sign-in fall through to the 402 without a word, and checks neither the
 *   chain nor the path the message names; here each refusal says why (402 with the challenge, so the SDK's
 *   client pays instead), and both are checked.
 */
import type { ResourceServerExtension } from "@x402/core/types";
import {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  InMemorySIWxStorage,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxPayload,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { Queryable } from "../../../common/db/index.ts";
import { AppError, BadInputError } from "../../../common/errors.ts";
import { log } from "../../../common/log.ts";
import { signedInCalls } from "../../../common/metrics.ts";
import { type AnyEndpoint, isMetered, type Merchant, type MerchantServices } from "../../endpoint.ts";
import type { MerchantEnv } from "../../merchant-env.ts";
import { paymentHeader } from "../ledger/index.ts";
import { DEFAULT_TIMEOUT_MS, startBudget } from "../paid-handler.ts";
import { Streamed } from "../streamed.ts";
import { type Access, AccessStore } from "./siwx-store.ts";

export { SIGN_IN_WITH_X };

/** The header a buyer's signed message travels in (the SDK's name; HTTP headers are read in any case). */
export const SIGN_IN_HEADER = "SIGN-IN-WITH-X";

/** The answer's header that says until when the wallet's access runs (ISO 8601), paid or signed in. */
export const ACCESS_UNTIL_HEADER = "Access-Until";
/** The answer's header that says how many signed-in calls the wallet's period has left, paid or signed in. */
export const ACCESS_CALLS_HEADER = "Access-Calls-Left";

/**
 * How long a challenge may be signed and sent: its `expirationTime`, and the age past which the SDK's check
 * refuses a message (its default too). A used nonce is kept as long, and a minute for clocks.
 */
const CHALLENGE_SECONDS = 300;
const NONCE_KEPT_SECONDS = CHALLENGE_SECONDS + 60;

/**
 * The most each field of a signed message may hold, in characters, checked before anything else is
 * (docs/platform.md, "Access for a period"). The SDK's parser takes strings of any length, and the SIWE grammar
 * its signature check formats a message by (EIP-4361) bounds none: an 8 KB nonce, validly signed, was stored.
 * What a buyer signs is this host's challenge, echoed: a 32-character nonce, a statement of about 100, the
 * route's URL as `uri` and its one resource, ISO times of 24, a 42-character address, a 132-character
 * signature. Each cap is several times that, or above the field's own bound (a DNS name of 253 and a port, a CAIP-2 chain id of 41);
 * the signature's leaves room for a smart wallet's (EIP-6492 wraps its deployment), which is refused on its
 * check anyway (see `verified`).
 */
export const SIGN_IN_CAPS = {
  domain: 300,
  address: 64,
  statement: 512,
  uri: 2048,
  version: 8,
  chainId: 64,
  nonce: 64,
  time: 64,
  requestId: 256,
  resource: 2048,
  resources: 8,
  signature: 4096,
} as const;

const capped = (field: string, max: number) =>
  z.string().max(max, `its ${field} is longer than ${max} characters`);

/**
 * The caps, and the two rules of SIWE's grammar a field is refused by here rather than in the SDK's formatting:
 * the nonce's (it is stored), and a statement's line break (it would write the message's next lines).
 */
const cappedMessage = z.object({
  domain: capped("domain", SIGN_IN_CAPS.domain),
  address: capped("address", SIGN_IN_CAPS.address),
  statement: capped("statement", SIGN_IN_CAPS.statement)
    .regex(/^[^\r\n]*$/, "its statement has a line break")
    .optional(),
  uri: capped("uri", SIGN_IN_CAPS.uri),
  version: capped("version", SIGN_IN_CAPS.version),
  chainId: capped("chainId", SIGN_IN_CAPS.chainId),
  nonce: capped("nonce", SIGN_IN_CAPS.nonce).regex(
    /^[A-Za-z0-9]{8,}$/,
    "its nonce is not 8 or more letters and digits (SIWE's nonce)",
  ),
  issuedAt: capped("issuedAt", SIGN_IN_CAPS.time),
  expirationTime: capped("expirationTime", SIGN_IN_CAPS.time).optional(),
  notBefore: capped("notBefore", SIGN_IN_CAPS.time).optional(),
  requestId: capped("requestId", SIGN_IN_CAPS.requestId).optional(),
  resources: z
    .array(capped("resource", SIGN_IN_CAPS.resource))
    .max(SIGN_IN_CAPS.resources, `it names more than ${SIGN_IN_CAPS.resources} resources`)
    .optional(),
  signature: capped("signature", SIGN_IN_CAPS.signature),
});

/** The route's declaration, on the merchant's network: nothing for a route that sells no period. */
export function declareSignIn(endpoint: AnyEndpoint, network: string): Record<string, unknown> {
  if (!endpoint.accessSeconds) return {};
  return declareSIWxExtension({
    network,
    statement: `Sign in with the wallet that paid: served again without paying for ${period(endpoint.accessSeconds)} after its payment`,
    expirationSeconds: CHALLENGE_SECONDS,
  });
}

/**
 * The extension the merchant's resource servers register: the SDK's, for its challenge alone (a fresh nonce
 * and time in every 402, the domain and URI of the merchant's public origin); the kit checks sign-ins itself.
 */
export function signInExtension(publicUrl: string): ResourceServerExtension {
  const sdk = createSIWxResourceServerExtension({
    origin: new URL(publicUrl).origin,
    storage: new InMemorySIWxStorage(),
  });
  return {
    key: sdk.key,
    // The payment a buyer signs echoes the 402's extensions; these change per 402 and are not compared.
    dynamicInfoFields: sdk.dynamicInfoFields,
    enrichPaymentRequiredResponse: sdk.enrichPaymentRequiredResponse,
  };
}

export interface AccessOptions {
  store: AccessStore;
  /** The merchant's name, for the metrics. */
  merchant: string;
  /** The merchant's public URL: the domain and URI a message must name. */
  publicUrl: string;
  /** The merchant's network (CAIP-2): the chain a message must name. */
  network: string;
  services: MerchantServices;
  /** The route's `PAYMENT-REQUIRED` header with `error` set, for a sign-in refused. */
  paymentRequired(c: Context<MerchantEnv>, error: string): Promise<Record<string, string>>;
}

/** What the sign-ins of `merchant`'s routes need: its store of periods, its origin and chain, its 402s. */
export function periodAccess(
  db: Queryable,
  merchant: Pick<Merchant, "name" | "payTo" | "publicUrl">,
  network: string,
  services: MerchantServices,
  paymentRequired: AccessOptions["paymentRequired"],
): AccessOptions {
  const store = new AccessStore(db, merchant.payTo);
  return {
    store,
    merchant: merchant.name,
    publicUrl: merchant.publicUrl,
    network,
    services,
    paymentRequired,
  };
}

/**
 * The route's sign-in, outside the payment's middlewares: a request with a payment goes on to be paid, and
 * once its answer is settled the payer's period is recorded; a request with a signed message and no payment
 * is checked and, when the wallet's period for this path runs, served without a payment; any other goes on
 * to its 402.
 */
export function accessForPeriod(
  endpoint: AnyEndpoint,
  options: AccessOptions,
): MiddlewareHandler<MerchantEnv> {
  const { accessSeconds: seconds, accessCalls: calls } = endpoint;
  if (!seconds) throw new Error(`${endpoint.path} sells no period`);
  if (!calls || !Number.isInteger(calls) || calls < 1) {
    throw new Error(`${endpoint.path} sells a period: it must say how many calls it serves (accessCalls)`);
  }
  // A signed-in call is served without a payment: nothing to meter, and no settlement to commit writes with.
  if (isMetered(endpoint) || endpoint.effects?.includes("writes")) {
    throw new Error(
      `${endpoint.path} sells a period: its calls must be priced as listed (no upto) and write nothing`,
    );
  }
  const origin = new URL(options.publicUrl);
  return async function accessForPeriod(c, next) {
    const proof = c.req.header(SIGN_IN_HEADER);
    if (paymentHeader(c.req.raw) !== undefined || proof === undefined) {
      await next();
      await recordPaid(c, seconds, calls, options.store);
      return;
    }
    const payer = await signedIn(c, proof, origin, options);
    const counted = { merchant: options.merchant, route: endpoint.path };
    let response: Response;
    try {
      response = await serve(c, endpoint, options.services, payer.address);
    } catch (error) {
      await giveBack(c, payer.address, options.store);
      signedInCalls.inc({ ...counted, outcome: "failed" });
      throw error;
    }
    if (response.status >= 400) await giveBack(c, payer.address, options.store);
    else setAccessHeaders(response.headers, payer);
    signedInCalls.inc({ ...counted, outcome: response.status >= 400 ? "failed" : "served" });
    return response;
  };
}

function setAccessHeaders(headers: Headers, access: Access): void {
  headers.set(ACCESS_UNTIL_HEADER, access.until.toISOString());
  headers.set(ACCESS_CALLS_HEADER, String(access.callsLeft));
}

/** A signed-in call whose answer failed gives its call back: a failed call costs nothing, paid or signed in. */
async function giveBack(c: Context<MerchantEnv>, payer: string, store: AccessStore): Promise<void> {
  try {
    await store.returnCall(c.req.path, payer);
  } catch (error) {
    log("error", "a failed signed-in call's call could not be given back", {
      payer,
      path: c.req.path,
      error,
    });
  }
}

/** After the payment's middlewares: an answer that was charged starts (or extends) the payer's period. */
async function recordPaid(
  c: Context<MerchantEnv>,
  seconds: number,
  calls: number,
  store: AccessStore,
): Promise<void> {
  const run = c.var.run;
  // Only a run of this request that was settled: a kept answer sent again for a payment id has no run.
  if (!run?.handled || c.res.status >= 400 || !c.res.headers.has("PAYMENT-RESPONSE")) return;
  try {
    setAccessHeaders(c.res.headers, await store.grant(c.req.path, run.key.payer, seconds, calls));
  } catch (error) {
    // The buyer has its answer and was charged for it; the period is what could not be kept.
    log("error", "a paid period could not be recorded", { payer: run.key.payer, path: c.req.path, error });
  }
}

/** A sign-in refused: answered as a call without payment, with the challenge to sign or pay anew. */
async function refused(
  c: Context<MerchantEnv>,
  options: AccessOptions,
  code: string,
  message: string,
): Promise<AppError> {
  return new AppError(402, code, message, { headers: await options.paymentRequired(c, code) });
}

/**
 * The wallet a signed message proves, with one call of its period for this path taken; refused (402 with the
 * route's challenge) when the message fails a check, was served before, or the wallet has no period running or
 * no call left in it. The nonce is taken first, so that a replayed message takes no call.
 */
async function signedIn(
  c: Context<MerchantEnv>,
  proof: string,
  origin: URL,
  options: AccessOptions,
): Promise<Access & { address: `0x${string}` }> {
  let message: SIWxPayload;
  try {
    message = parseSIWxHeader(proof);
  } catch (error) {
    throw new BadInputError(
      `the ${SIGN_IN_HEADER} header is not a signed message: ${(error as Error).message}`,
      "invalid_sign_in",
    );
  }
  const invalid = (why: string) =>
    refused(
      c,
      options,
      "sign_in_invalid",
      `the signed message cannot sign in: ${why}; sign the 402's challenge`,
    );
  // Before any other check: nothing past here works on, or stores, a field longer than its cap.
  const caps = cappedMessage.safeParse(message);
  if (!caps.success) throw await invalid(caps.error.issues.map((issue) => issue.message).join(", "));
  // Domain and URI of this host, not too old, not expired, not before its time (the SDK's checks).
  const fields = await verified(() =>
    validateSIWxMessage(message, origin, { maxAge: CHALLENGE_SECONDS * 1000 }),
  );
  if (!fields.isValid) throw await invalid(`${fields.invalidMessage} (${fields.invalidReason})`);
  const path = new URL(`${origin.origin}${origin.pathname.replace(/\/$/, "")}${c.req.path}`).pathname;
  if (new URL(message.uri).pathname !== path) {
    throw await invalid(`it names ${new URL(message.uri).pathname}, not ${path}`);
  }
  if (message.chainId !== options.network) {
    throw await invalid(`it names the chain ${message.chainId}, not ${options.network}`);
  }
  const signature = await verified(() => verifySIWxSignature(message));
  if (!signature.isValid) throw await invalid(`${signature.invalidMessage} (${signature.invalidReason})`);
  const address = signature.payer.toLowerCase() as `0x${string}`;
  if (!(await options.store.takeNonce(message.nonce, address, NONCE_KEPT_SECONDS))) {
    throw await refused(
      c,
      options,
      "sign_in_replayed",
      "this signed message was used already: each sign-in signs the 402's fresh challenge once",
    );
  }
  const taken = await options.store.takeCall(c.req.path, address);
  if (taken === "unpaid") {
    throw await refused(
      c,
      options,
      "access_not_paid",
      `${address} has no access to ${c.req.path} running: it never paid for it, or its period ended; pay for a new period`,
    );
  }
  if (taken === "used") {
    throw await refused(
      c,
      options,
      "access_used",
      `${address}'s period of ${c.req.path} has no signed-in call left; pay for more (a payment adds a period's calls and time)`,
    );
  }
  return { address, ...taken };
}

/**
 * One of the SDK's checks of a message, what it throws made a failed check: each is a function of the message
 * alone (no verifier is given, so a signature is checked as an externally owned wallet's, with no call to the
 * chain), so what it throws is about the message. The signature check formats the message by SIWE's grammar
 * first, and the SIWE library throws on a field the grammar refuses (a date that is not RFC 3339, a URI with a
 * `{`, a `version` other than 1, an address with a wrong EIP-55 checksum): that was a 500.
 */
async function verified<T>(
  check: () => Promise<T>,
): Promise<T | { isValid: false; invalidReason: string; invalidMessage: string }> {
  try {
    return await check();
  } catch (error) {
    return { isValid: false, invalidReason: "invalid_siwx_message", invalidMessage: notSiwe(error) };
  }
}

/**
 * Why the SIWE library refused a message, for the buyer: the lines of its error that name a field ("line 8:
 * invalid URI"), else the line its grammar stopped at; never its parser's state, which says nothing to a buyer.
 */
function notSiwe(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error)).split("\n");
  const named = lines.filter((line) => /^line \d+: /.test(line));
  const stopped = lines.map((line) => /max line number was (\d+)/.exec(line)?.[1]).find(Boolean);
  const why =
    named.length > 0
      ? named.join(", ")
      : stopped
        ? `its grammar fails at line ${stopped}`
        : (lines[0] ?? "").replace(/: \{.*$/, "");
  return `its fields do not make a SIWE message (EIP-4361): ${why.slice(0, 200)}`;
}

/** The endpoint's handler for a signed-in wallet, under its time budget: no payment, nothing settled. */
async function serve(
  c: Context<MerchantEnv>,
  endpoint: AnyEndpoint,
  services: MerchantServices,
  payer: `0x${string}`,
): Promise<Response> {
  await endpoint.load?.();
  const budget = startBudget(endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS, c.req.raw.signal);
  try {
    const result = await budget.race(
      endpoint.handler(c.var.input, { payer, signal: budget.signal, services, request: c.req.raw }),
    );
    if (result instanceof Streamed) throw new Error(`${endpoint.path} streamed a signed-in call's answer`);
    return result instanceof Response ? new Response(result.body, result) : c.json(result);
  } catch (error) {
    budget.abort(error);
    throw error;
  } finally {
    budget.end();
  }
}

/** A period as a buyer reads it, in the largest unit it holds more than one of: "24 hours", "2 days". */
function period(seconds: number): string {
  const [unit, size] = (
    [
      ["day", 86_400],
      ["hour", 3600],
      ["minute", 60],
    ] as const
  ).find(([, size]) => seconds % size === 0 && seconds > size) ?? ["second", 1];
  const count = seconds / size;
  return `${count} ${unit}${count === 1 ? "" : "s"}`;
}
