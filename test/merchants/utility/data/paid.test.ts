import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATA_ENDPOINTS } from "../../../../src/merchants/utility/data/index.ts";
import { type PaidShop, startPaidShop } from "../../../helpers/paid.ts";
import { NETWORK, usdcReader } from "../../../helpers/x402.ts";
import { decodeQrPng } from "./qr-decode.ts";

type ErrorBody = { error: { code: string; message: string } };

let shop: PaidShop;

beforeAll(async () => {
  shop = await startPaidShop(DATA_ENDPOINTS);
});
afterAll(async () => {
  await shop?.close();
});

const buyer = () => shop.buyer();
const buyerFetch = () => shop.buyerFetch();

/** Runs a paid call and checks that exactly `price` atomic USDC moved from the buyer to the merchant. */
async function paid(url: string, price: bigint, init?: RequestInit): Promise<Response> {
  const usdc = usdcReader(shop.devnet.rpc);
  const [buyerBefore, merchantBefore] = [
    await usdc.balanceOf(buyer().address),
    await usdc.balanceOf(shop.payTo),
  ];
  const response = await buyerFetch()(url, init);
  expect(response.status).toBe(200);
  const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
  expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: buyer().address });
  expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore + price);
  expect(await usdc.balanceOf(buyer().address)).toBe(buyerBefore - price);
  return response;
}

describe("data tools through the real x402 flow", () => {
  it("sells /api/a11y/contrast for 0.001", async () => {
    const response = await paid(
      `${shop.url}/api/a11y/contrast?fg=${encodeURIComponent("#777")}&bg=fff`,
      1000n,
    );
    expect(await response.json()).toMatchObject({
      contrast_ratio: 4.48,
      ratio_string: "4.48:1",
      passes: {
        normal_text: { AA: false, AAA: false },
        large_text: { AA: true, AAA: false },
        ui_components: true,
      },
    });
  });

  it("sells POST /api/data/convert for 0.005", async () => {
    const response = await paid(`${shop.url}/api/data/convert`, 5000n, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        data: 'id,name\r\n1,"Ada, ""the"" Countess"\r\n',
        from: "csv",
        to: "sql",
        table: "people",
      }),
    });
    expect(await response.json()).toEqual({
      from: "csv",
      to: "sql",
      rows: 1,
      columns: ["id", "name"],
      data: `INSERT INTO "people" ("id","name") VALUES (1,'Ada, "the" Countess');\n`,
    });
  });

  it("sells /api/qr for 0.01: the PNG decodes back to the data", async () => {
    const data = "https://example.com/?q=x402 & more";
    const response = await paid(
      `${shop.url}/api/qr?data=${encodeURIComponent(data)}&size=256&ecc=Q`,
      10_000n,
    );
    const body = (await response.json()) as {
      png_base64: string;
      svg: string;
      data_uri: string;
      ecc: string;
      size: number;
      module_px: number;
    };
    const png = decodeQrPng(body.png_base64);
    // 256 asked; the code is 37 modules wide with its margin, so 7 whole pixels per module give 259.
    expect([body.size, body.module_px]).toEqual([259, 7]);
    expect([png.width, png.height]).toEqual([259, 259]);
    expect(png.text).toBe(data);
    expect(body.ecc).toBe("Q");
    expect(body.svg).toMatch(/^<svg /);
    expect(body.data_uri).toMatch(/^data:image\/png;base64,/);
  });

  it("charges nothing for bad input, whether refused before payment or by the handler", async () => {
    const usdc = usdcReader(shop.devnet.rpc);
    const [buyerBefore, merchantBefore] = [
      await usdc.balanceOf(buyer().address),
      await usdc.balanceOf(shop.payTo),
    ];
    const pay = buyerFetch();

    const badColour = await pay(`${shop.url}/api/a11y/contrast?fg=000&bg=nope`);
    expect(badColour.status).toBe(400);
    expect(((await badColour.json()) as ErrorBody).error.message).toMatch(/not a colour/);

    const tooLong = await pay(`${shop.url}/api/qr?data=${"a".repeat(2400)}`);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as ErrorBody).error.message).toMatch(/does not fit/);

    const badSize = await pay(`${shop.url}/api/qr?data=x&size=9999`);
    expect(badSize.status).toBe(400);

    // Valid request shape, data the handler refuses after the payment was verified: not settled.
    const badCsv = await pay(`${shop.url}/api/data/convert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ data: "a,b\r\n1,2,3\r\n", from: "csv", to: "json" }),
    });
    expect(badCsv.status).toBe(400);
    expect(await badCsv.json()).toEqual({
      error: { code: "invalid_data", message: "CSV record 2 has 3 fields; the header has 2" },
    });

    const badFormat = await pay(`${shop.url}/api/data/convert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ data: "x", from: "xml", to: "json" }),
    });
    expect(badFormat.status).toBe(400);

    expect(await shop.pending()).toBe(0);
    expect(await usdc.balanceOf(buyer().address)).toBe(buyerBefore);
    expect(await usdc.balanceOf(shop.payTo)).toBe(merchantBefore);
  });
});
