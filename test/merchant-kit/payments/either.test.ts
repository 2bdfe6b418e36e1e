/**
 * An endpoint that offers both schemes (exact at its listed price, or upto metered up to it), taking a
 * multipart form with a file: the 402 offers both, a buyer paying with exact pays the listed price and its
 * handler meters nothing, a buyer paying with upto pays what was metered. Paid through the stock
 * `@x402/fetch` clients, settled by the project's facilitator on the devnet.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../helpers/x402.ts";

const PRICE = 18_000n;
const metered: boolean[] = [];

/** Charges 10 atomic units per byte of the uploaded file under upto. */
const either = defineEndpoint({
  method: "POST",
  path: "/v1/either",
  price: "0.018",
  scheme: ["exact", "upto"],
  body: "multipart",
  description: "Counts a file's bytes: $0.018, or 10 atomic units a byte under upto.",
  input: z.object({ file: z.file().max(1000), label: z.string().default("") }),
  output: z.object({ bytes: z.number(), label: z.string() }),
  example: {
    input: { file: new File([new Uint8Array(3)], "three.bin", { type: "application/octet-stream" }) },
    output: { bytes: 3, label: "" },
  },
  handler: async ({ file, label }, ctx) => {
    const bytes = (await file.arrayBuffer()).byteLength;
    metered.push(ctx.meter !== undefined);
    ctx.meter?.(BigInt(bytes) * 10n);
    return { bytes, label };
  },
});

const chain = useDevnet({ buyers: 2 });
let facilitator: Facilitator;
let shop: Listening;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const opened = await openTestDatabase(LEDGER_KIND);
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, opened.db);
  shop = await startMerchant(
    (u) => testMerchant(payTo, u, [either]),
    opened.db,
    inProcessClient(facilitator),
    {
      rpcUrl: chain.devnet.rpc,
    },
  );
  closers.push(() => shop.close());
});
afterAll(async () => {
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

const form = (bytes: number, label = "x") => {
  const data = new FormData();
  data.append("file", new File([new Uint8Array(bytes)], "data.bin"));
  data.append("label", label);
  return { method: "POST", body: data };
};

describe("an endpoint offering exact and upto, with a multipart body", () => {
  it("offers both schemes at the listed price", async () => {
    const unpaid = await fetch(`${shop.url}/v1/either`, form(5));
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
    expect(required.accepts.map((a) => [a.scheme, a.amount])).toEqual([
      ["exact", PRICE.toString()],
      ["upto", PRICE.toString()],
    ]);
  });

  it("charges the listed price to a buyer paying with exact, and meters nothing", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer.address);
    const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "exact"));
    metered.length = 0;
    const paid = await pay(`${shop.url}/v1/either`, form(7, "exact"));
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ bytes: 7, label: "exact" });
    await chain.miner.pending();
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
    expect(metered).toEqual([false]);
  });

  it("charges what was metered to a buyer paying with upto", async () => {
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const usdc = usdcReader(chain.devnet.rpc);
    const before = await usdc.balanceOf(buyer.address);
    const pay = wrapFetchWithPayment(fetch, x402ClientFor(buyer, "upto"));
    metered.length = 0;
    const paid = await pay(`${shop.url}/v1/either`, form(40));
    expect(paid.status, await paid.clone().text()).toBe(200);
    const receipt = decodePaymentResponseHeader(paid.headers.get("payment-response") as string);
    expect(receipt).toMatchObject({ success: true, amount: "400" });
    await chain.miner.pending();
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 400n);
    expect(metered).toEqual([true]);
  });

  it("refuses a bad form before payment: not multipart, no file, a file too large", async () => {
    const json = await fetch(`${shop.url}/v1/either`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    const data = new FormData();
    data.append("label", "no file");
    const missing = await fetch(`${shop.url}/v1/either`, { method: "POST", body: data });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toMatch(/^file: /);
    const large = await fetch(`${shop.url}/v1/either`, form(1001));
    expect(large.status).toBe(400);
  });

  it("documents the form and both schemes", async () => {
    const doc = (await (await fetch(`${shop.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: Record<string, never> }>;
    };
    const op = doc.paths["/v1/either"]?.post as unknown as {
      requestBody: {
        content: Record<string, { schema: { properties: Record<string, { format?: string }> } }>;
      };
      "x-payment-info": { price: { mode: string }; protocols: { x402: { scheme: string } }[] };
      description: string;
    };
    expect(Object.keys(op.requestBody.content)).toEqual(["multipart/form-data"]);
    expect(op.requestBody.content["multipart/form-data"]?.schema.properties.file?.format).toBe("binary");
    expect(op["x-payment-info"].price.mode).toBe("fixed");
    expect(op["x-payment-info"].protocols.map((p) => p.x402.scheme)).toEqual(["exact", "upto"]);
    expect(op.description).toContain("either scheme");
    const page = await (await fetch(`${shop.url}/docs`)).text();
    expect(page).toContain("$0.018 per call, or metered up to it");
    expect(page).toContain('data-body="multipart"');
    expect(page).toContain("-F &#39;file=@three.bin&#39;");
  });
});
