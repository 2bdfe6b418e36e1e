/**
 * Issue 69 (4): the limits an endpoint's documents state are the limits a paid call meets. Each limit is read
 * from the served OpenAPI document (a schema's `maxLength`, the number a description states), then a call
 * at exactly that limit is paid through the real x402 client and answered, and one past it is refused
 * without a charge. And (2) a conversion at those limits runs off the request loop: `/healthz` answers
 * throughout.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../src/merchant-kit/openapi.ts";
import { priceToAtomic } from "../../src/merchant-kit/price.ts";
import { chatEndpoints, OFFLINE_SETTINGS } from "../../src/merchants/inference/catalogue.ts";
import { DEFAULT_ROUTE } from "../../src/merchants/inference/tiers.ts";
import { calc } from "../../src/merchants/utility/calc.ts";
import { MAX_INPUT_BYTES } from "../../src/merchants/utility/data/convert-engine.ts";
import { DATA_ENDPOINTS } from "../../src/merchants/utility/data/index.ts";
import { MAX_COLUMNS, MAX_ROWS } from "../../src/merchants/utility/data/table.ts";
import { stateEndpoints } from "../../src/merchants/utility/state/index.ts";
import { type PaidShop, startPaidShop } from "../helpers/paid.ts";
import { pollHealth } from "../helpers/worst-pages.ts";
import { NETWORK } from "../helpers/x402.ts";

type Json = Record<string, unknown>;
type ErrorBody = { error: { code: string; message: string } };

let shop: PaidShop;
let doc: OpenApiDocument;

beforeAll(async () => {
  const chat = chatEndpoints(OFFLINE_SETTINGS).filter((e) => e.path === "/v1/chat/completions");
  // Signed offers and a builder code in its 402s, as `serve` runs a merchant: they count against the 16 KiB of
  // headers a client reads of a 402 (the longest /api/qr URL below).
  shop = await startPaidShop([calc, ...DATA_ENDPOINTS, ...chat, ...stateEndpoints()], {
    merchant: { receiptSigner: privateKeyToAccount(generatePrivateKey()), builderCode: "x402m_utility" },
  });
  doc = (await (await fetch(`${shop.url}/openapi.json`)).json()) as OpenApiDocument;
}, 120_000);
afterAll(async () => {
  await shop?.close();
});

/** A documented number, "1,000" or "200000", found in `text` by `pattern` (its first group). */
function statedNumber(text: string | undefined, pattern: RegExp): number {
  const found = pattern.exec(text ?? "");
  if (!found?.[1]) throw new Error(`${pattern} is not in: ${text}`);
  return Number(found[1].replaceAll(",", ""));
}

function operation(method: "get" | "post", path: string): Json {
  const op = (doc.paths[path] as Record<string, Json> | undefined)?.[method];
  if (!op) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return op;
}

function queryParameter(path: string, name: string): { description?: string; schema: Json } {
  const parameters = operation("get", path).parameters as {
    name: string;
    description?: string;
    schema: Json;
  }[];
  const found = parameters.find((p) => p.name === name);
  if (!found) throw new Error(`${path} documents no ${name}`);
  return found;
}

function bodySchema(path: string): Json {
  const body = operation("post", path).requestBody as { content: Record<string, { schema: Json }> };
  return body.content["application/json"]?.schema as Json;
}

/** A paid call that must succeed, and the buyer charged exactly `price` (atomic USDC). */
async function bought(url: string, price: bigint, init?: RequestInit): Promise<Response> {
  const before = await shop.balanceOf(shop.buyer().address);
  const response = await shop.buyerFetch()(url, init);
  if (response.status !== 200)
    throw new Error(`${response.status}: ${(await response.text()).slice(0, 300)}`);
  const receipt = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE") ?? "");
  expect(receipt).toMatchObject({ success: true, network: NETWORK });
  expect(await shop.balanceOf(shop.buyer().address)).toBe(before - price);
  return response;
}

/** A call the buyer would pay for, refused with `status` and nothing charged. */
async function refused(url: string, status: number, init?: RequestInit): Promise<ErrorBody> {
  const before = await shop.balanceOf(shop.buyer().address);
  const response = await shop.buyerFetch()(url, init);
  const body = (await response.json()) as ErrorBody;
  expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(status);
  expect(response.headers.get("PAYMENT-RESPONSE")).toBeNull();
  expect(await shop.pending()).toBe(0);
  expect(await shop.balanceOf(shop.buyer().address)).toBe(before);
  return body;
}

const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("documented limits are what a paid call gets", () => {
  it("/api/qr: data at its documented maxLength is bought, one more character is refused", async () => {
    const max = queryParameter("/api/qr", "data").schema.maxLength as number;
    expect(max).toBeGreaterThan(7000);
    // Digits at level L: the most characters a code holds.
    const digits = "7".repeat(max);
    const response = await bought(`${shop.url}/api/qr?data=${digits}&ecc=L`, 10_000n);
    expect(await response.json()).toMatchObject({ data: digits, version: 40, ecc: "L" });
    await refused(`${shop.url}/api/qr?data=${digits}7&ecc=L`, 400);
  });

  it("/api/qr: the longest URL its documented limits allow is bought, one byte more is refused", async () => {
    const param = queryParameter("/api/qr", "data");
    const max = statedNumber(param.description, /at most ([\d,]+) characters as it travels in the URL/);
    expect(max).toBe(param.schema.maxLength);
    // "é" is two bytes of UTF-8, six characters percent-encoded; every option at its longest besides.
    const data = `${"\u00e9".repeat(Math.floor(max / 6))}${"x".repeat(max % 6)}`;
    const options = "&size=2048&margin=16&ecc=L&dark=%23000000ff&light=%23ffffffff";
    const url = (d: string) => `${shop.url}/api/qr?data=${encodeURIComponent(d)}${options}`;
    expect(encodeURIComponent(data)).toHaveLength(max);
    // The 402 names the resource without a query this long, so that its headers stay readable.
    const required = decodePaymentRequiredHeader(
      (await fetch(url(data))).headers.get("PAYMENT-REQUIRED") ?? "",
    );
    expect(required.resource?.url).toBe(`${shop.url}/api/qr`);
    const response = await bought(url(data), 10_000n);
    expect(await response.json()).toMatchObject({ data, ecc: "L", size: expect.any(Number) });
    const body = await refused(url(`${data}-`), 400);
    expect(body.error.message).toContain(max.toLocaleString("en-US"));
  });

  it("/v1/chat/completions: messages of exactly the stated characters are bought, one more is refused", async () => {
    const messages = bodySchema("/v1/chat/completions").properties as Record<string, Json>;
    const cap = statedNumber(messages.messages?.description as string, /at most ([\d,]+) characters/);
    expect(cap).toBe(200_000);
    // Several messages, as a long conversation sends them: the cap is on their text together.
    const at = Array.from({ length: 4 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: "" }));
    for (const m of at) m.content = "word ".repeat(cap / 4 / 5);
    (at[3] as { content: string }).content = `${(at[3] as { content: string }).content.slice(0, -1)}?`;
    const price = priceToAtomic(DEFAULT_ROUTE.price, 6);
    await bought(`${shop.url}/v1/chat/completions`, price, post({ messages: at, max_tokens: 8 }));
    const over = at.map((m, i) => (i === 0 ? { ...m, content: `${m.content}x` } : m));
    const body = await refused(
      `${shop.url}/v1/chat/completions`,
      400,
      post({ messages: over, max_tokens: 8 }),
    );
    expect(JSON.stringify(body)).toContain(String(cap));
  });

  it("/api/data/convert: the stated column cap is bought, one more column is refused", async () => {
    const description = operation("post", "/api/data/convert").description as string;
    const cap = statedNumber(description, /([\d,]+) columns/);
    expect(cap).toBe(1000);
    const row = (columns: number) =>
      Object.fromEntries(Array.from({ length: columns }, (_, i) => [`c${i}`, i]));
    const at = await bought(
      `${shop.url}/api/data/convert`,
      5_000n,
      post({ data: JSON.stringify([row(cap)]), from: "json", to: "csv" }),
    );
    expect(((await at.json()) as { columns: string[] }).columns).toHaveLength(cap);
    const body = await refused(
      `${shop.url}/api/data/convert`,
      400,
      post({ data: JSON.stringify([row(cap + 1)]), from: "json", to: "csv" }),
    );
    expect(body.error.code).toBe("too_large");
    expect(body.error.message).toContain(String(cap));
  });

  it("/api/store/insert: the stated rows of the stated size are bought, one more row or byte is refused", async () => {
    const description = operation("post", "/api/store/insert").description as string;
    const [, rowsText, kb] = /at most ([\d,]+) rows of ([\d,]+) KB each/.exec(description) ?? [];
    const rows = Number(rowsText?.replaceAll(",", ""));
    const bytes = Number(kb) * 1024;
    expect(bodySchema("/api/store/insert").properties).toMatchObject({ rows: { maxItems: rows } });
    // As stored: PostgreSQL writes {"t": "..."}, 9 bytes around the text.
    const row = (size: number) => ({ t: "x".repeat(size - 9) });
    const url = `${shop.url}/api/store/insert`;
    const at = await bought(
      url,
      1_000n,
      post({ collection: "limits", rows: Array.from({ length: rows }, () => row(bytes)) }),
    );
    expect(await at.json()).toMatchObject({ inserted: rows });
    await refused(
      url,
      400,
      post({ collection: "limits", rows: Array.from({ length: rows + 1 }, () => row(10)) }),
    );
    const body = await refused(url, 400, post({ collection: "limits", rows: [row(bytes + 1)] }));
    expect(body.error.code).toBe("row_too_large");
  });

  it("/api/calc: an expression of the documented maxLength is bought, one character more is refused", async () => {
    const max = queryParameter("/api/calc", "expr").schema.maxLength as number;
    const expr = `${"1".repeat(2 - (max % 2))}${"+1".repeat(Math.floor((max - 1) / 2))}`;
    expect(expr).toHaveLength(max);
    const response = await bought(`${shop.url}/api/calc?expr=${encodeURIComponent(expr)}`, 1_000n);
    expect(await response.json()).toMatchObject({ expression: expr });
    await refused(`${shop.url}/api/calc?expr=${encodeURIComponent(`${expr}1`)}`, 400);
  });

  it("/api/scratchpad/write: content of the documented maxLength is bought, one character more is refused", async () => {
    const max = (bodySchema("/api/scratchpad/write").properties as Record<string, Json>).content
      ?.maxLength as number;
    expect(max).toBe(8 * 1024 * 1024);
    const url = `${shop.url}/api/scratchpad/write`;
    const at = await bought(url, 1_000n, post({ name: "limits", content: "x".repeat(max) }));
    expect(await at.json()).toMatchObject({ bytes: max });
    await refused(url, 400, post({ name: "limits", content: "x".repeat(max + 1) }));
  });
});

describe("heavy work off the request loop", () => {
  it("/api/data/convert: a CSV of the column cap and the byte cap converts while /healthz answers within 1 s", async () => {
    // The costliest conversion at the documented caps found: 5 MiB of 1,000 columns read with types and
    // written back as TSV, 4.8-5.8 CPU-s (on the request loop, every poll would have waited as long).
    const header = Array.from({ length: MAX_COLUMNS }, (_, i) => `c${i}`).join(",");
    const record = Array.from({ length: MAX_COLUMNS }, (_, i) => String(i % 10)).join(",");
    const records = Math.min(
      MAX_ROWS,
      Math.floor((MAX_INPUT_BYTES - header.length) / (record.length + 2)) - 1,
    );
    const data = [header, ...Array.from({ length: records }, () => record)].join("\r\n");
    const health = pollHealth(shop.url);
    const response = await bought(
      `${shop.url}/api/data/convert`,
      5_000n,
      post({ data, from: "csv", to: "tsv" }),
    );
    const { worst, failures } = await health.stop();
    expect(await response.json()).toMatchObject({ rows: records, columns: { length: MAX_COLUMNS } });
    expect(failures).toBe(0);
    expect(worst).toBeLessThan(1_000);
  }, 60_000);
});
