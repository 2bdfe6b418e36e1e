import { decodePaymentResponseHeader } from "@x402/core/http";
import { PNG } from "pngjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ICON_ENDPOINTS } from "../../../../src/merchants/utility/icons/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { NETWORK } from "../../../helpers/x402.ts";

type ErrorBody = { error: { code: string; message: string } };

let shop: PaidShop;

beforeAll(async () => {
  shop = await startPaidShop(ICON_ENDPOINTS);
});
afterAll(async () => {
  await shop?.close();
});

/** Runs a paid call and checks that exactly `price` atomic USDC moved from the buyer to the merchant. */
async function paid(url: string, price: bigint, init?: RequestInit): Promise<Response> {
  const [buyerBefore, merchantBefore] = [
    await shop.balanceOf(shop.buyer().address),
    await shop.balanceOf(shop.payTo),
  ];
  const response = await shop.buyerFetch()(url, init);
  expect(response.status).toBe(200);
  const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
  expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: shop.buyer().address });
  expect(await shop.balanceOf(shop.payTo)).toBe(merchantBefore + price);
  expect(await shop.balanceOf(shop.buyer().address)).toBe(buyerBefore - price);
  return response;
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("icons through the real x402 flow", () => {
  it("sells /api/icon/search for 0.002", async () => {
    const response = await paid(`${shop.url}/api/icon/search?q=github&style=brands&limit=3`, 2000n);
    const body = (await response.json()) as {
      style: string;
      icons: { name: string; styles: string[]; terms: string[]; score: number }[];
      license: { name: string };
      icon_set: string;
    };
    expect(body.style).toBe("brands");
    expect(body.icons).toHaveLength(3);
    expect(body.icons[0]).toMatchObject({ name: "github", styles: ["brands"], score: 100 });
    expect(body.icons[0]?.terms).toContain("octocat");
    expect(body.license.name).toBe("CC BY 4.0");
    expect(body.icon_set).toBe("Font Awesome Free 7.3.1");
  });

  it("sells POST /api/icon/generate for 0.002: a PNG of the size and colour asked", async () => {
    const response = await paid(
      `${shop.url}/api/icon/generate`,
      2000n,
      post({ name: "circle", size: 48, color: "#22aa44", format: "png" }),
    );
    const body = (await response.json()) as {
      name: string;
      style: string;
      png_base64: string;
      width: number;
      height: number;
    };
    expect(body).toMatchObject({ name: "circle", style: "solid", width: 48, height: 48 });
    const png = PNG.sync.read(Buffer.from(body.png_base64, "base64"));
    expect([png.width, png.height]).toEqual([48, 48]);
    const i = (24 * png.width + 24) * 4;
    expect([...png.data.subarray(i, i + 4)]).toEqual([0x22, 0xaa, 0x44, 0xff]);
  });

  it("sells the SVG by default", async () => {
    const response = await paid(
      `${shop.url}/api/icon/generate`,
      2000n,
      post({ name: "house", style: "regular" }),
    );
    const body = (await response.json()) as { format: string; svg: string; width: number };
    expect(body.format).toBe("svg");
    expect(body.width).toBe(128);
    expect(body.svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 512 512"/);
    expect(body.svg).toContain("CC BY 4.0");
  });

  it("documents both operations in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${shop.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string }[]; "x-payment-info": unknown }>>;
    };
    const search = doc.paths["/api/icon/search"]?.get;
    expect(search?.parameters?.map((p) => p.name)).toEqual(["q", "style", "limit"]);
    expect(search?.["x-payment-info"]).toMatchObject({ price: { amount: "0.002" } });
    expect(doc.paths["/api/icon/generate"]?.post?.["x-payment-info"]).toMatchObject({
      price: { amount: "0.002" },
    });
  });

  it("charges nothing for bad input", async () => {
    const [buyerBefore, merchantBefore] = [
      await shop.balanceOf(shop.buyer().address),
      await shop.balanceOf(shop.payTo),
    ];
    const pay = shop.buyerFetch();

    const noQuery = await pay(`${shop.url}/api/icon/search?q=`);
    expect(noQuery.status).toBe(400);
    const badStyle = await pay(`${shop.url}/api/icon/search?q=star&style=thin`);
    expect(badStyle.status).toBe(400);
    const badLimit = await pay(`${shop.url}/api/icon/search?q=star&limit=51`);
    expect(badLimit.status).toBe(400);

    const unknown = await pay(`${shop.url}/api/icon/generate`, post({ name: "no-such-icon" }));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as ErrorBody).error.message).toMatch(/no icon named "no-such-icon"/);
    const wrongStyle = await pay(`${shop.url}/api/icon/generate`, post({ name: "github" }));
    expect(wrongStyle.status).toBe(400);
    expect(((await wrongStyle.json()) as ErrorBody).error.message).toMatch(
      /has no solid style; it has brands/,
    );
    const badColour = await pay(`${shop.url}/api/icon/generate`, post({ name: "house", color: "blue" }));
    expect(badColour.status).toBe(400);
    const tooBig = await pay(`${shop.url}/api/icon/generate`, post({ name: "house", size: 2048 }));
    expect(tooBig.status).toBe(400);

    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(shop.buyer().address)).toBe(buyerBefore);
    expect(await shop.balanceOf(shop.payTo)).toBe(merchantBefore);
  });
});
