import type { Context } from "hono";
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
