/**
 * `/api/vectorize` sold through the real x402 flow on a devnet (0.02 USDC = 20000 atomic units): a paid SVG
 * from base64 and a paid DXF from a URL on a 127.0.0.1 fixture server; bad inputs refused before any 402, and
 * a body that is not an image refused after verification: neither is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vectorizeEndpoints } from "../../../../src/merchants/utility/vectorize/index.ts";
import { type FixtureServer, startFixtureServer } from "../../../helpers/fixtures/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { usdcReader } from "../../../helpers/x402.ts";
import { twoShapesAs } from "./images.ts";

const PRICE = 20000n;

let site: FixtureServer;
let shop: PaidShop;
let png: Buffer;

beforeAll(async () => {
  png = await twoShapesAs("png");
  site = await startFixtureServer({
    routes: {
      "/shapes.png": (_request, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(png);
      },
    },
  });
  shop = await startPaidShop(vectorizeEndpoints({ fetchPolicy: { allowAddresses: ["127.0.0.1"] } }));
});
afterAll(async () => {
  await shop?.close();
  await site?.close();
});

const post = (body: unknown, pay = true) =>
  (pay ? shop.buyerFetch() : fetch)(`${shop.url}/api/vectorize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("/api/vectorize, paid", () => {
  it.each([
    ["svg from base64", () => ({ image_base64: png.toString("base64") }), "svg"],
    ["dxf from a URL", () => ({ image_url: `${site.url}shapes.png`, format: "dxf" }), "dxf"],
  ])("sells %s", async (_name, body, format) => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(shop.buyer().address);
    const merchantBefore = await usdc.balanceOf(shop.payTo);
    expect((await post(body(), false)).status).toBe(402);
    const response = await post(body());
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Record<string, unknown>;
    expect(answer).toMatchObject({ format, engine: "local", width: 96, height: 64, input_format: "png" });
    expect(answer.paths as number).toBeGreaterThanOrEqual(2);
    if (format === "svg") expect(answer.svg).toMatch(/^<svg /);
    else expect(Buffer.from(answer.data_base64 as string, "base64").toString("utf8")).toContain("ENTITIES");
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeTruthy();
    expect(await usdc.balanceOf(shop.buyer().address)).toBe(before - PRICE);
    expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore + PRICE);
  });

  it("charges nothing for bad inputs, even through the paying fetch", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(shop.buyer().address);
    for (const body of [
      {},
      { image_url: `${site.url}shapes.png`, image_base64: png.toString("base64") },
      { image_base64: png.toString("base64"), format: "tiff" },
      { image_base64: png.toString("base64"), colors: 100 },
    ]) {
      const label = JSON.stringify(body).slice(0, 60);
      expect((await post(body, false)).status, label).toBe(400);
      const response = await post(body);
      expect(response.status, label).toBe(400);
    }
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(shop.buyer().address)).toBe(before);
  });

  it("charges nothing when the bytes are not an image (refused after verification)", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const before = await usdc.balanceOf(shop.buyer().address);
    const body = {
      image_base64: `data:image/png;base64,${Buffer.from("GIF? no, just text").toString("base64")}`,
    };
    expect((await post(body, false)).status).toBe(402);
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unsupported_image");
    expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(shop.buyer().address)).toBe(before);
  });
});
