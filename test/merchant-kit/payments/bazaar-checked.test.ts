/**
 * The Bazaar check of a front's routes (src/merchant-kit/payments/bazaar-checked.ts): the SDK's own warnings, once
 * a process for each distinct route; the middleware's view of the server without the extensions it would check
 * again, the server itself keeping them and answering as itself.
 */
import { x402HTTPResourceServer, x402ResourceServer } from "@x402/core/server";
import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bazaarChecked, checkBazaarRoutes } from "../../../src/merchant-kit/payments/bazaar-checked.ts";
import { refusingFacilitator } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../../helpers/x402.ts";

const accepts = { scheme: "exact", network: NETWORK, payTo: newMerchant(), price: "$0.01" };

/** A route whose declared example breaks its own schema (`n` must be a number): the SDK warns about it. */
function brokenRoute(title: string) {
  return {
    accepts,
    extensions: declareDiscoveryExtension({
      input: { n: "not a number" },
      inputSchema: { type: "object", title, properties: { n: { type: "number" } } },
    }),
  };
}

afterEach(() => vi.restoreAllMocks());

describe("checkBazaarRoutes", () => {
  it("warns as the SDK's middleware does, once a process for each route", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const routes = { "GET /api/a": brokenRoute("a"), "GET /api/b": brokenRoute("b") };
    checkBazaarRoutes(routes);
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([
      expect.stringMatching(/^x402: Route "GET \/api\/a" has an invalid bazaar extension: .*n/),
      expect.stringMatching(/^x402: Route "GET \/api\/b" has an invalid bazaar extension: .*n/),
    ]);
    checkBazaarRoutes(routes);
    expect(warn).toHaveBeenCalledTimes(2);
    // The same path with another extension is another route: checked too.
    checkBazaarRoutes({ "GET /api/a": brokenRoute("a2") });
    expect(warn).toHaveBeenCalledTimes(3);
  });
});

describe("bazaarChecked", () => {
  it("hides the routes' Bazaar extensions from the middleware alone, and answers as the server", () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const routes = { "GET /api/c": brokenRoute("c"), "GET /api/free": { accepts } };
    const server = new x402HTTPResourceServer(new x402ResourceServer(refusingFacilitator), routes);
    const seen = bazaarChecked(server);
    expect(Object.keys(seen.routes)).toEqual(["GET /api/c", "GET /api/free"]);
    expect(Object.values(seen.routes).some((r) => r.extensions && "bazaar" in r.extensions)).toBe(false);
    expect(server.routes).toBe(routes);
    expect((server.routes as typeof routes)["GET /api/c"].extensions).toHaveProperty("bazaar");
    expect(seen.server).toBe(server.server);
    const context = { adapter: {} as never, path: "/api/c", method: "GET" };
    expect(seen.requiresPayment(context)).toBe(true);
    expect(seen.requiresPayment({ ...context, path: "/api/none" })).toBe(false);
  });
});
