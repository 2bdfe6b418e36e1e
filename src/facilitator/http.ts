import type { SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import type { DiscoveryResourcesResponse } from "@x402/extensions/bazaar";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorBody } from "../common/errors.ts";
import { onError, onNotFound } from "../common/http.ts";
import { log } from "../common/log.ts";
import { type DiscoveryQuery, parseDiscoveryQuery } from "./bazaar.ts";
import { INVALID_PAYLOAD, UNEXPECTED_SETTLE_ERROR, UNEXPECTED_VERIFY_ERROR } from "./errors.ts";
import { checkPayment, parseRequestBody, type Rejection, type Scope } from "./wire.ts";

/** What the HTTP face needs of a facilitator. */
export interface FacilitatorService {
  readonly scope: Scope;
  verify(payload: unknown, requirements: unknown): Promise<VerifyResponse>;
  settle(payload: unknown, requirements: unknown): Promise<SettleResponse>;
  supported(): SupportedResponse;
  discoveryResources(query: DiscoveryQuery): Promise<DiscoveryResourcesResponse>;
  /** Throws when the facilitator cannot work (its database unreachable). */
  ping(): Promise<void>;
}

/** A verify/settle body is at most a few kilobytes; anything much larger is not one. */
const MAX_BODY_BYTES = 64 * 1024;
/** The spec's side channel for extension outcomes (recording in the Bazaar) to the resource server. */
const EXTENSION_RESPONSES_HEADER = "EXTENSION-RESPONSES";

/**
 * The facilitator over HTTP, as the x402 v2 spec (section 7) and `HTTPFacilitatorClient` define it:
 *
 * - `POST /verify`, `POST /settle`: body `{x402Version, paymentPayload, paymentRequirements}`. Every
 *   judged payment is a 200 with a `VerifyResponse` / `SettleResponse` (invalid, failed and pending
 *   included, as the spec's error responses); a body that is not a well-formed x402 v2 request is a 400
 *   and an internal failure a 500, both still in that response's shape (`isValid: false` /
 *   `success: false` with an `invalidReason` / `errorReason`), which is what the SDK client reads.
 * - `GET /supported`: `{kinds, extensions, signers}`.
 * - `GET /discovery/resources?type=&payTo=&scheme=&network=&extensions=&limit=&offset=`: the Bazaar.
 * - `GET /healthz`.
 * Other errors are `{"error": {"code", "message"}}`. See docs/facilitator.md.
 */
export function facilitatorRoutes(facilitator: FacilitatorService): Hono {
  const app = new Hono();
  app.onError(onError);
  app.notFound(onNotFound);
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json(errorBody("payload_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`), 413),
  });

  app.post("/verify", limit, async (c) => {
    const bad = await readPayment(c, facilitator.scope);
    if ("reason" in bad) {
      return c.json({ isValid: false, invalidReason: bad.reason, invalidMessage: bad.message }, 400);
    }
    try {
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
    const bad = await readPayment(c, facilitator.scope);
    if ("reason" in bad) {
      return c.json(
        { success: false, errorReason: bad.reason, errorMessage: bad.message, transaction: "", network },
        400,
      );
    }
    try {
      const { extensionResponses, ...result } = await facilitator.settle(bad.payload, bad.requirements);
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
        {
          success: false,
          errorReason: UNEXPECTED_SETTLE_ERROR,
          errorMessage: "internal error",
          transaction: "",
          network,
        },
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

  return app;
}

/** The payment of a verify/settle body, or why the body is malformed (-> 400). */
async function readPayment(
  c: Context,
  scope: Scope,
): Promise<{ payload: unknown; requirements: unknown } | Pick<Rejection, "reason" | "message">> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return { reason: INVALID_PAYLOAD, message: "the body is not JSON" };
  }
  const parsed = parseRequestBody(body);
  if (!parsed.ok) return parsed;
  const checked = checkPayment(parsed.payload, parsed.requirements, scope);
  // A well-formed request for something not supported here is judged (200), not malformed.
  if (!checked.ok && checked.malformed) return checked;
  return { payload: parsed.payload, requirements: parsed.requirements };
}

function logUnhandled(path: string, error: unknown): void {
  log("error", "unhandled", { path, error });
}
