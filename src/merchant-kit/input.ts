import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { BadInputError, errorBody } from "../common/errors.ts";
import type { AnyEndpoint, MerchantServices } from "./endpoint.ts";
import type { MerchantEnv } from "./merchant-env.ts";

/** For callers outside the kit (bench/), which read it here. */
export type { MerchantEnv };

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The query as plain values: one string per name, an array when a name repeats. */
function queryObject(queries: Record<string, string[]>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(queries).map(([k, v]) => [k, v.length === 1 ? (v[0] ?? "") : v]));
}

/**
 * A form's fields as plain values: a field sent twice is a list, and `name[]` (how clients send a list,
 * e.g. `timestamp_granularities[]`) is the list `name`.
 */
function formObject(form: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(form)) {
    if (!key.endsWith("[]")) {
      out[key] = out[key] === undefined ? value : [out[key], value].flat();
      continue;
    }
    const name = key.slice(0, -2);
    const list = Array.isArray(value) ? value : [value];
    out[name] = out[name] === undefined ? list : [out[name], list].flat();
  }
  return out;
}

/**
 * "expr: Too big" from zod's first issue: enough for a caller to fix the request. A message that names its
 * parameter already ("Missing required query parameter: id", the social-data API's clients' wording) is
 * left as it is.
 */
function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid input";
  const name = issue.path.join(".");
  if (name === "" || namesParameter(issue.message, name)) return issue.message;
  return `${name}: ${issue.message}`;
}

/** "id must be ..." or "...: id": a message about the parameter by its name (not one that merely holds the word). */
function namesParameter(message: string, name: string): boolean {
  return message.startsWith(`${name} `) || message.endsWith(`: ${name}`);
}

/**
 * Validates the endpoint's input (query for GET, JSON body or multipart form for POST) before the payment
 * middleware runs: a bad request gets a 400 `{"error": {"code", "message"}}` and is never asked to pay, so
 * a buyer's x402 client never signs for it. Schemas may check asynchronously (an uploaded file's own
 * header). The parsed input is passed on as `c.var.input`.
 */
export function validateInput(
  endpoint: AnyEndpoint,
  services: MerchantServices,
): MiddlewareHandler<MerchantEnv>[] {
  const validate: MiddlewareHandler<MerchantEnv> = async function validateInput(c, next) {
    let raw: unknown;
    if (endpoint.method === "GET") {
      // A path parameter wins over a query parameter of the same name: the path is what was asked for.
      raw = { ...queryObject(c.req.queries()), ...c.req.param() };
    } else if (endpoint.body === "multipart") {
      const type = c.req.header("content-type") ?? "";
      if (!/^multipart\/form-data\b/i.test(type)) {
        throw new BadInputError(
          "send the body as a form with content-type: multipart/form-data",
          "unsupported_media_type",
        );
      }
      try {
        // The query's parameters too (an upload's session cookies ride there); the form's win a clash.
        raw = { ...queryObject(c.req.queries()), ...formObject(await c.req.parseBody({ all: true })) };
      } catch {
        throw new BadInputError("the body is not a readable multipart form", "invalid_form");
      }
    } else {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/json\b/i.test(type)) {
        throw new BadInputError(
          "send the body as JSON with content-type: application/json",
          "unsupported_media_type",
        );
      }
      try {
        raw = await c.req.json();
      } catch {
        throw new BadInputError("the body is not valid JSON", "invalid_json");
      }
    }
    const parsed = await endpoint.input.safeParseAsync(raw);
    if (!parsed.success) {
      const path = parsed.error.issues[0]?.path ?? [];
      throw new BadInputError(
        describeIssue(parsed.error),
        "invalid_input",
        path.length > 0 ? path.join(".") : undefined,
      );
    }
    const refusal = await endpoint.precheck?.(parsed.data, { services });
    if (refusal) throw refusal;
    c.set("input", parsed.data);
    await next();
  };
  if (endpoint.method === "GET") return [validate];
  const maxSize = endpoint.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limit = bodyLimit({
    maxSize,
    onError: (c) => c.json(errorBody("body_too_large", `the body is larger than ${maxSize} bytes`), 413),
  });
  return [limit as MiddlewareHandler<MerchantEnv>, validate];
}
