import type { Network, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { isBatchSettlementDepositPayload } from "@x402/evm";
import type { DiscoveryResourcesResponse } from "@x402/extensions/bazaar";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorBody } from "../common/errors.ts";
import { type CheckFn, cachedCheck, chainCheck, healthRoutes, rpcCall } from "../common/health.ts";
import { onError, onNotFound } from "../common/http.ts";
import { isLoopback } from "../common/listen.ts";
import { log } from "../common/log.ts";
import { answerEveryMethod } from "../common/methods.ts";
import { plainAddress, remoteAddressOf } from "../common/rate-limit.ts";
import { requestLog } from "../common/request-log.ts";
import type { Admission, Gate, Grant } from "./access/index.ts";
import { secondsToNextUtcDay } from "./access/units.ts";
import { type DiscoveryQuery, parseDiscoveryQuery } from "./bazaar.ts";
import { isChannelAction } from "./channels/payloads.ts";
import { checkChannelAction } from "./channels/wire.ts";
import { countRefused } from "./counted.ts";
import {
  INVALID_PAYLOAD,
  KEY_OVER_BUDGET,
  UNEXPECTED_SETTLE_ERROR,
  UNEXPECTED_VERIFY_ERROR,
} from "./error-codes.ts";
import type { Rejection } from "./rejection.ts";
import { answerIn, versionOf } from "./v1.ts";
import { checkPayment, parseRequestBody, type Scope } from "./wire.ts";

/** What the HTTP face needs of a facilitator. */
export interface FacilitatorService {
  readonly scope: Scope;
  /** Its settling account (an EVM chain's: the receiverAuthorizer of channels whose claims it signs). */
  readonly address: string;
  verify(payload: unknown, requirements: unknown): Promise<VerifyResponse>;
  settle(
    payload: unknown,
    requirements: unknown,
    grant?: Grant,
    origin?: "http" | "loopback",
  ): Promise<SettleResponse>;
  /** Who may verify and settle for which payee; none: anyone for any payee. */
  readonly gate?: Gate;
  supported(): SupportedResponse;
  discoveryResources(query: DiscoveryQuery): Promise<DiscoveryResourcesResponse>;
  /** Throws when the facilitator cannot work (its database unreachable). */
  ping(): Promise<void>;
  /**
   * Why a well-formed envelope's payment is malformed (400), for a chain whose payloads are not EVM's (Solana:
   * svm/); unset, the EVM checks of wire.ts.
   */
  checkRequest?(payload: unknown, requirements: unknown): Pick<Rejection, "reason" | "message"> | undefined;
}

/** A verify/settle body is at most a few kilobytes; anything much larger is not one. */
export const MAX_BODY_BYTES = 64 * 1024;
/** The spec's side channel for extension outcomes (recording in the Bazaar) to the resource server. */
const EXTENSION_RESPONSES_HEADER = "EXTENSION-RESPONSES";

/**
 * The facilitator over HTTP, as the x402 v2 spec (section 7) and `HTTPFacilitatorClient` define it:
 *
 * - `POST /verify`, `POST /settle`: body `{x402Version, paymentPayload, paymentRequirements}`. Every
 *   judged payment is a 200 with a `VerifyResponse` / `SettleResponse` (invalid, failed and pending
 *   included, as the spec's error responses); a body that is not a well-formed x402 v2 request (or v1
 *   one, as the v1 packages' `useFacilitator` sends it: v1.ts) is a 400 and an internal failure a 500,
 *   both still in that response's shape (`isValid: false` / `success: false` with an `invalidReason` /
 *   `errorReason`), which is what the SDK client and the v1 packages read. A v1 request's settle answer
 *   names its network by v1's name.
 * - A payee beyond the allow-list needs `Authorization: Bearer <key>` (access/gate.ts): refused in the
 *   same shapes, 401 without a valid key, 403 with a key that does not allow the payee, 429 (with
 *   `Retry-After`) over the key's rate or gas budget. The SDK client throws those as `VerifyError` /
 *   `SettleError` with the reason and message.
 * - `GET /supported`: `{kinds, extensions, signers}`, v1's exact kind among the kinds where v1 names the chain.
 * - `GET /discovery/resources?type=&payTo=&scheme=&network=&extensions=&limit=&offset=`: the Bazaar.
 * - `GET /healthz`; `GET /livez`, and `GET /readyz`: its database, and the chain's checks
 *   (`addReadinessChecks`, `chainReadiness`) once its service adds them (src/common/health.ts).
 * `/supported`, `/discovery/resources` and the health checks are open to anyone.
 * Other errors are `{"error": {"code", "message"}}`. See docs/facilitator.md. Each request has its id (a
 * merchant's, when it sends `X-Request-Id`) and its line in the log (src/common/request-log.ts).
 */
export function facilitatorRoutes(facilitator: FacilitatorService): Hono {
  const app = new Hono();
  app.onError(onError);
  app.notFound(onNotFound);
  app.use("*", requestLog({ service: "facilitator" }));
  const database = cachedCheck("facilitator database", () => facilitator.ping());
  healthRoutes(app, () => ({ database, ...readinessChecks.get(app) }));
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json(errorBody("payload_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`), 413),
  });

  app.post("/verify", limit, async (c) => {
    const bad = await readPayment(c, facilitator, "verify");
    if ("reason" in bad) {
      countRefused("verify", bad.reason, versionOf(bad.payload));
      return c.json({ isValid: false, invalidReason: bad.reason, invalidMessage: bad.message }, 400);
    }
    try {
      // A deposit is refused at /verify already where its /settle would be (`readPayment`).
      const admitted = await admit(c, facilitator.gate, bad.requirements, "verify", bad.deposit);
      if (!admitted.ok) {
        countRefused("verify", admitted.reason, versionOf(bad.payload));
        return c.json(
          { isValid: false, invalidReason: admitted.reason, invalidMessage: admitted.message },
          admitted.status,
          retryAfter(admitted.retryAfterS),
        );
      }
      return c.json(await facilitator.verify(bad.payload, bad.requirements));
    } catch (error) {
      logUnhandled("/verify", error);
      return c.json(
        { isValid: false, invalidReason: UNEXPECTED_VERIFY_ERROR, invalidMessage: "internal error" },
        500,
      );
    }
  });

  app.post("/settle", limit, async (c) => {
    const network = facilitator.scope.network;
    const bad = await readPayment(c, facilitator, "settle");
    // A v1 request is answered in v1's words: its network's v1 name (v1.ts).
    const answer = <T extends { network: Network }>(body: T) => answerIn(bad.payload, body);
    if ("reason" in bad) {
      countRefused("settle", bad.reason, versionOf(bad.payload));
      return c.json(
        answer({
          success: false,
          errorReason: bad.reason,
          errorMessage: bad.message,
          transaction: "",
          network,
        }),
        400,
      );
    }
    try {
      const admitted = await admit(c, facilitator.gate, bad.requirements, "settle", bad.authority);
      if (!admitted.ok) {
        countRefused("settle", admitted.reason, versionOf(bad.payload));
        return c.json(
          answer({
            success: false,
            errorReason: admitted.reason,
            errorMessage: admitted.message,
            transaction: "",
            network,
          }),
          admitted.status,
          retryAfter(admitted.retryAfterS),
        );
      }
      const { extensionResponses, ...result } = await facilitator.settle(
        bad.payload,
        bad.requirements,
        admitted.grant,
        admitted.loopbackAuthority ? "loopback" : "http",
      );
      if (result.errorReason === KEY_OVER_BUDGET) {
        // Refused before signing: the key's day cannot hold this settlement's worst case.
        return c.json(result, 429, retryAfter(secondsToNextUtcDay()));
      }
      if (extensionResponses) {
        c.header(
          EXTENSION_RESPONSES_HEADER,
          Buffer.from(JSON.stringify(extensionResponses)).toString("base64"),
        );
      }
      return c.json(result);
    } catch (error) {
      logUnhandled("/settle", error);
      return c.json(
        answer({
          success: false,
          errorReason: UNEXPECTED_SETTLE_ERROR,
          errorMessage: "internal error",
          transaction: "",
          network,
        }),
        500,
      );
    }
  });

  app.get("/supported", (c) => c.json(facilitator.supported()));

  app.get("/discovery/resources", async (c) =>
    c.json(await facilitator.discoveryResources(parseDiscoveryQuery(c.req.query()))),
  );

  app.get("/healthz", async (c) => {
    await facilitator.ping();
    return c.json({ ok: true });
  });

  // A method a path does not take: 405 with Allow.
  answerEveryMethod(app);
  return app;
}

/** Checks added to an app's `/readyz` by what started it (it knows the chain the facilitator settles on). */
const readinessChecks = new WeakMap<Hono, Record<string, CheckFn>>();

/** Adds `checks` to what `/readyz` of `app` (a `facilitatorRoutes` app) asks. */
export function addReadinessChecks(app: Hono, checks: Record<string, CheckFn>): void {
  readinessChecks.set(app, { ...readinessChecks.get(app), ...checks });
}

/**
 * What a facilitator settling from `signer` on the chain at `rpc` needs of it: `chain`, the node answers
 * (`eth_blockNumber`); `signer`, the account holds ETH for gas (with none, every settlement fails: not
 * ready, though it still verifies).
 */
export function chainReadiness(rpc: string, signer: string): Record<string, CheckFn> {
  return {
    chain: chainCheck(rpc, "facilitator chain"),
    signer: cachedCheck(
      "facilitator signer",
      async (signal) => {
        const balance = BigInt((await rpcCall(rpc, "eth_getBalance", [signer, "latest"], signal)) as string);
        if (balance === 0n) throw new Error(`the settling account ${signer} holds no ETH to pay gas`);
        return { address: signer, balance_wei: balance.toString() };
      },
      { timeoutMs: 3_000 },
    ),
  };
}

/**
 * The payment of a verify/settle body, or why the body is malformed (-> 400). `authority`: a
 * batch-settlement action this facilitator would sign as the receiverAuthorizer, or a deposit into a channel
 * whose claims it would sign: the gate wants a key naming the receiver for both, or the receiver would serve
 * vouchers of a channel it could never claim (its buyer's money back only after the withdrawal delay).
 */
async function readPayment(
  c: Context,
  { scope, checkRequest }: Pick<FacilitatorService, "scope" | "checkRequest">,
  operation: "verify" | "settle",
): Promise<
  | { payload: unknown; requirements: unknown; authority: boolean; deposit: boolean }
  | (Pick<Rejection, "reason" | "message"> & { payload: unknown })
> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return { reason: INVALID_PAYLOAD, message: "the body is not JSON", payload: undefined };
  }
  const parsed = parseRequestBody(body);
  // The payload goes with a refusal: a v1 one is answered in v1's words.
  const payload = (body as { paymentPayload?: unknown } | null)?.paymentPayload;
  if (!parsed.ok) return { ...parsed, payload };
  if (checkRequest) {
    const problem = checkRequest(parsed.payload, parsed.requirements);
    if (problem) return { ...problem, payload };
    return { payload: parsed.payload, requirements: parsed.requirements, authority: false, deposit: false };
  }
  const inner = parsed.payload.payload;
  // Only while it offers the role: otherwise it signs no claims, and the deposit rule refuses the channel.
  const self = scope.authorizers.self?.toLowerCase();
  const depositForUs =
    isBatchSettlementDepositPayload(inner) && inner.channelConfig.receiverAuthorizer.toLowerCase() === self;
  if (isChannelAction(parsed.payload, parsed.requirements)) {
    const action = checkChannelAction(parsed.payload, parsed.requirements, scope, operation);
    if (!action.ok && action.malformed) return { ...action, payload };
    const authority = depositForUs || (action.ok && action.action.needsAuthorizer);
    return { payload: parsed.payload, requirements: parsed.requirements, authority, deposit: depositForUs };
  }
  const checked = checkPayment(parsed.payload, parsed.requirements, scope);
  // A well-formed request for something not supported here is judged (200), not malformed.
  if (!checked.ok && checked.malformed) return { ...checked, payload };
  return {
    payload: parsed.payload,
    requirements: parsed.requirements,
    authority: depositForUs,
    deposit: depositForUs,
  };
}

/**
 * The gate's decision on a verify/settle request, by the payee of its requirements (a well-formed body's:
 * the SDK checks that the signed payee is the same). Admitted when there is no gate.
 */
async function admit(
  c: Context,
  gate: Gate | undefined,
  requirements: unknown,
  operation: "verify" | "settle",
  authority = false,
): Promise<Admission> {
  if (!gate) return { ok: true };
  const payTo = (requirements as { payTo?: unknown } | null)?.payTo;
  const peer = remoteAddressOf(c);
  const address = peer === undefined ? undefined : plainAddress(peer);
  return gate.admit(
    c.req.header("authorization"),
    typeof payTo === "string" ? payTo : "",
    operation,
    authority,
    address !== undefined && isLoopback(address),
  );
}

function retryAfter(seconds: number | undefined): Record<string, string> | undefined {
  return seconds === undefined ? undefined : { "Retry-After": String(seconds) };
}

function logUnhandled(path: string, error: unknown): void {
  log("error", "unhandled", { path, error });
}
