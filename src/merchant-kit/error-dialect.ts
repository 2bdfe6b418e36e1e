import type { MiddlewareHandler } from "hono";
import { BadInputError } from "../common/errors.ts";

/** OpenAI's error `type` for an HTTP status, as its API and SDKs use them. */
function openAiType(status: number): string {
  if (status >= 500) return "server_error";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  return "invalid_request_error";
}

/**
 * Answers an endpoint's refusals in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, for
 * endpoints that speak its dialect: the kit's refusals (`{"error": {"code", "message"}}`, any status,
 * headers kept: a 402's `PAYMENT-REQUIRED`, a 503's `Retry-After`) are rewritten; other answers, the
 * payment middleware's own 402 among them, pass as they are. `param` names the input field at fault when
 * the refusal knows it.
 */
export function openAiErrors(): MiddlewareHandler {
  return async function openAiErrors(c, next) {
    await next();
    const { status } = c.res;
    if (status < 400 || !(c.res.headers.get("content-type") ?? "").includes("application/json")) return;
    const body = (await c.res
      .clone()
      .json()
      .catch(() => undefined)) as
      | { error?: { code?: unknown; message?: unknown; type?: unknown } }
      | undefined;
    const error = body?.error;
    if (typeof error?.code !== "string" || typeof error.message !== "string") return;
    // Already in OpenAI's shape (a free route's own refusal, which names its `param`): left as it is.
    if (typeof error.type === "string") return;
    const param = c.error instanceof BadInputError ? (c.error.param ?? null) : null;
    const headers = new Headers(c.res.headers);
    c.res = undefined;
    c.res = new Response(JSON.stringify(openAiErrorBody(status, error.code, error.message, param)), {
      status,
      headers,
    });
  };
}

/** An error in OpenAI's shape, for a refusal of `status` (also sent as an event when a stream fails). */
export function openAiErrorBody(status: number, code: string, message: string, param: string | null = null) {
  return { error: { message, type: openAiType(status), param, code } };
}
