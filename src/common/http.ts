import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { AppError, errorBody } from "./errors.ts";
import { log } from "./log.ts";

/**
 * The one place errors become HTTP: typed errors keep their status and code, anything else is a 500
 * whose details stay in the log, never in the response.
 */
export function onError(error: Error, c: Context): Response {
  if (error instanceof AppError) {
    if (error.publicMessage !== undefined) {
      log("error", error.code, { path: c.req.path, error: error.message });
      return c.json(errorBody(error.code, error.publicMessage), error.status, { ...error.headers });
    }
    return c.json(errorBody(error.code, error.message), error.status, { ...error.headers });
  }
  if (error instanceof HTTPException) {
    return c.json(errorBody("http_error", error.message || "request failed"), error.status);
  }
  // A bug: its whole stack is worth the line.
  log("error", "unhandled", { path: c.req.path, error: String(error.stack ?? error) });
  return c.json(errorBody("internal", "internal error"), 500);
}

export function onNotFound(c: Context): Response {
  return c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404);
}

/**
 * CORS for any origin: a preflight answered by Hono's `cors` (where `allowMethods` are given; a host that answers
 * its preflights per path passes them on), every other answer given the headers once it is made. Hono's `cors` sets
 * them on a default answer before the handlers run, and every answer made after is then copied into a new
 * `Response` to carry them (Hono's `set res`), which cost a merchant's 402 a quarter of its CPU
 * (docs/benchmarks-log.md, issue 66). The same headers, and they win over a handler's as they do there.
 */
export function corsAnswers(options: {
  exposeHeaders: readonly string[];
  allowMethods?: readonly string[];
}): MiddlewareHandler {
  const expose = options.exposeHeaders.join(",");
  const preflight =
    options.allowMethods &&
    cors({ origin: "*", allowMethods: [...options.allowMethods], exposeHeaders: [...options.exposeHeaders] });
  return async (c, next) => {
    if (c.req.method === "OPTIONS") return preflight ? preflight(c, next) : next();
    await next();
    try {
      setCors(c.res.headers, expose);
    } catch {
      // An answer whose headers are immutable (one fetched from elsewhere, passed on): a copy that can be changed.
      c.res = new Response(c.res.body, c.res);
      setCors(c.res.headers, expose);
    }
  };
}

function setCors(headers: Headers, expose: string): void {
  headers.set("Access-Control-Allow-Origin", "*");
  if (expose) headers.set("Access-Control-Expose-Headers", expose);
}
