/**
 * `@x402/hono`'s middleware checks every route's Bazaar extension when it is built (`validateBazaarRouteExtensions`,
 * a warning for each one that does not describe its route), with a new Ajv per route that compiles JSON Schema's
 * meta-schema each time: 0.9-1.6 CPU-s for the utility host's 33 routes, paid again by every front a host builds and
 * by every host of the same catalogue (docs/benchmarks-log.md, 2026-11-29, helper suite2). Here the same check, the
 * SDK's own, runs once a process for each distinct route and extension, and the middleware is handed the server
 * with its routes' Bazaar extensions out of that check's sight: it reads `routes` for that alone, and the resource
 * server, which declares and enriches the extensions in its 402s, is the same object and keeps them.
 */
import type { RouteConfig, x402HTTPResourceServer } from "@x402/core/server";
import { validateBazaarRouteExtensions } from "@x402/extensions/bazaar";

const BAZAAR = "bazaar";

/** The routes (`pattern` and extension as JSON) checked in this process. A catalogue's own, so few. */
const checked = new Set<string>();

/** Warns, as the SDK's middleware does, about each route's Bazaar extension not checked before in this process. */
export function checkBazaarRoutes(routes: Readonly<Record<string, RouteConfig>>): void {
  for (const [pattern, config] of Object.entries(routes)) {
    const extension = config.extensions?.[BAZAAR];
    if (extension === undefined) continue;
    const key = `${pattern}\n${JSON.stringify(extension)}`;
    if (checked.has(key)) continue;
    checked.add(key);
    validateBazaarRouteExtensions({ [pattern]: { ...config, extensions: { [BAZAAR]: extension } } });
  }
}

/**
 * `server` for `paymentMiddlewareFromHTTPServer`, its routes' Bazaar extensions checked here (`checkBazaarRoutes`)
 * and left out of the `routes` it reads; everything else is `server`'s own, called on `server`.
 */
export function bazaarChecked<S extends x402HTTPResourceServer>(server: S): S {
  const routes = server.routes as Record<string, RouteConfig>;
  checkBazaarRoutes(routes);
  const unseen = Object.fromEntries(
    Object.entries(routes).map(([pattern, config]) => {
      if (config.extensions?.[BAZAAR] === undefined) return [pattern, config];
      const { [BAZAAR]: _checked, ...extensions } = config.extensions;
      return [pattern, { ...config, extensions }];
    }),
  );
  return new Proxy(server, {
    get(target, key) {
      if (key === "routes") return unseen;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
