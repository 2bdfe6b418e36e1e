/**
 * An endpoint with a path parameter (`/things/:name`, as the social proxy's `/pay/:agent_id`): the value
 * from the path is input, validated before payment; documents write the path as `/things/{name}`; the
 * 402 names the URL asked for and its Bazaar extension carries the path parameter apart.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Listening } from "../../src/common/listen.ts";
import { defineEndpoint } from "../../src/merchant-kit/endpoint.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { refusingFacilitator, startMerchant, testMerchant } from "../helpers/merchant.ts";

const thing = defineEndpoint({
  method: "GET",
  path: "/things/:name",
  price: "0.001",
  description: "A thing by its name.",
  input: z.object({
    name: z.string().regex(/^[a-z]{1,8}$/),
    detail: z.enum(["short", "long"]).default("short"),
  }),
  output: z.object({ name: z.string() }),
  example: { input: { name: "widget", detail: "long" }, output: { name: "widget" } },
  handler: async ({ name }) => ({ name }),
});

let shop: Listening;
let close: () => Promise<void>;
beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  close = opened.close;
  shop = await startMerchant(
    (url) => testMerchant("0x1111111111111111111111111111111111111111", url, [thing]),
    opened.db,
    refusingFacilitator,
  );
});
afterAll(async () => {
  await shop?.close();
  await close?.();
});

describe("an endpoint with a path parameter", () => {
  it("takes the path's value as input: a bad one is a 400 before payment, a good one a 402 for its own URL", async () => {
    const bad = await fetch(`${shop.url}/things/NOT-OK`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/^name: /);
    const good = await fetch(`${shop.url}/things/widget?detail=long`);
    expect(good.status).toBe(402);
    const required = decodePaymentRequiredHeader(good.headers.get("payment-required") as string);
    expect(required.resource.url).toBe(`${shop.url}/things/widget?detail=long`);
    const bazaar = (required.extensions as Record<string, { info: { input: Record<string, unknown> } }>)
      .bazaar;
    expect(bazaar?.info.input).toMatchObject({
      pathParams: { name: "widget" },
      queryParams: { detail: "long" },
    });
  });

  it("is documented as /things/{name}, its parameter in the path", async () => {
    const doc = (await (await fetch(`${shop.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: { name: string; in: string; required: boolean }[] } }>;
    };
    expect(Object.keys(doc.paths)).toContain("/things/{name}");
    expect(doc.paths["/things/{name}"]?.get.parameters).toEqual([
      expect.objectContaining({ name: "name", in: "path", required: true }),
      expect.objectContaining({ name: "detail", in: "query", required: false }),
    ]);
    const page = await (await fetch(`${shop.url}/docs`)).text();
    expect(page).toContain("/things/widget?detail=long");
    const wellKnown = (await (await fetch(`${shop.url}/.well-known/x402`)).json()) as { resources: string[] };
    expect(wellKnown.resources).toEqual([`${shop.url}/things/{name}`]);
  });
});
