/**
 * What a path answers for a method it does not take: 405 with `Allow` (RFC 9110 15.5.6), not the 404 a
 * router gives when no route matches, which would tell a client probing with another method that the
 * resource does not exist.
 */
import type { Hono, MiddlewareHandler } from "hono";
import { errorBody } from "./errors.ts";

/** The order `Allow` lists methods in. */
const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * Gives every path `app` routes an answer for every method: `OPTIONS` 204 with `Allow` (or what
 * `preflight` answers: a CORS preflight), and any other method the path does not take 405 with `Allow`
 * and `{"error": {"code": "method_not_allowed", ...}}`. `HEAD` is allowed wherever `GET` is: Hono answers
 * it with GET's headers and no body. Call it once every route is registered: it reads `app.routes`
 * (middlewares, registered for every method, are not routes).
 *
 * @example
 *   app.get("/healthz", (c) => c.json({ ok: true }));
 *   answerEveryMethod(app); // POST /healthz: 405, Allow: GET, HEAD, OPTIONS
 */
export function answerEveryMethod(
  // biome-ignore lint/suspicious/noExplicitAny: any app, whatever its variables.
  app: Hono<any>,
  options: { preflight?: (allow: readonly string[]) => MiddlewareHandler } = {},
): void {
  const byPath = new Map<string, Set<string>>();
  for (const { method, path } of app.routes) {
    if (method === "ALL") continue;
    const methods = byPath.get(path) ?? new Set<string>();
    methods.add(method.toUpperCase());
    byPath.set(path, methods);
  }
  for (const [path, methods] of byPath) {
    if (methods.has("GET")) methods.add("HEAD");
    const takesOptions = methods.has("OPTIONS");
    methods.add("OPTIONS");
    const allow = ORDER.filter((m) => methods.has(m)).concat([...methods].filter((m) => !ORDER.includes(m)));
    const header = allow.join(", ");
    if (!takesOptions) {
      app.options(
        path,
        options.preflight?.(allow) ??
          ((c) => {
            c.header("Allow", header);
            return c.body(null, 204);
          }),
      );
    }
    app.all(path, (c) =>
      c.json(errorBody("method_not_allowed", `${c.req.path} takes ${header}, not ${c.req.method}`), 405, {
        Allow: header,
      }),
    );
  }
}
