/**
 * The reference page's console in a real browser (playwright-core, Debian's Chromium): unpaid, it shows
 * the 402 and its requirements; with a browser wallet (an EIP-1193 provider whose signatures come from a
 * devnet buyer's key) it pays through x402 and shows the answer and the settlement, and exactly the price
 * moves on chain.
 */
import type { Browser } from "playwright-core";
import type { TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calc } from "../../src/merchants/utility/calc.ts";
import { launchChromium } from "../helpers/browser.ts";
import { type PaidShop, startPaidShop } from "../helpers/paid.ts";

let shop: PaidShop;
let browser: Browser;

beforeAll(async () => {
  shop = await startPaidShop([calc]);
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

describe("the reference page's console", () => {
  it("sends the example unpaid and shows the 402 with what to pay", async () => {
    const page = await browser.newPage();
    await page.goto(`${shop.url}/docs`);
    const form = page.locator('form.try[data-path="/api/calc"]');
    await form.getByRole("button", { name: "Send without paying" }).click();
    const output = form.locator("output pre");
    await expect.poll(() => output.textContent()).toMatch(/^402/);
    const text = (await output.textContent()) ?? "";
    expect(text).toContain(`Payment required: 1000 atomic units of`);
    expect(text).toContain(`to ${shop.payTo}`);
    // No wallet in this browser: no pay button.
    expect(await form.locator("button.pay").isHidden()).toBe(true);
    await page.close();
  });

  it("pays with a browser wallet: the answer, the settlement, and exactly the price on chain", async () => {
    const buyer = privateKeyToAccount(shop.buyer().privateKey);
    const page = await browser.newPage();
    const requests: string[] = [];
    await page.exposeFunction("__signTypedData", async (json: string) => {
      const { types, primaryType, domain, message } = JSON.parse(json) as {
        types: Record<string, { name: string; type: string }[]>;
        primaryType: string;
        domain: Record<string, unknown>;
        message: Record<string, string>;
      };
      const { EIP712Domain: _, ...rest } = types;
      return buyer.signTypedData({
        types: rest,
        primaryType,
        domain,
        message: {
          ...message,
          value: BigInt(message.value as string),
          validAfter: BigInt(message.validAfter as string),
          validBefore: BigInt(message.validBefore as string),
        },
      } as unknown as TypedDataDefinition);
    });
    await page.addInitScript((address: string) => {
      const w = window as unknown as {
        ethereum: unknown;
        __signTypedData: (json: string) => Promise<string>;
        __requests: string[];
      };
      w.__requests = [];
      w.ethereum = {
        request: async ({ method, params }: { method: string; params?: unknown[] }) => {
          w.__requests.push(method);
          if (method === "eth_requestAccounts") return [address];
          if (method === "eth_signTypedData_v4") return w.__signTypedData(params?.[1] as string);
          throw new Error(`unsupported ${method}`);
        },
      };
    }, buyer.address);

    const buyerBefore = await shop.balanceOf(buyer.address);
    const merchantBefore = await shop.balanceOf(shop.payTo);
    await page.goto(`${shop.url}/docs`);
    const form = page.locator('form.try[data-path="/api/calc"]');
    await form.locator('input[name="expr"]').fill("2^10");
    await form.getByRole("button", { name: "Send without paying" }).click();
    const pay = form.getByRole("button", { name: "Pay with your wallet and send" });
    await pay.waitFor({ state: "visible" });
    await pay.click();
    const output = form.locator("output pre");
    await expect.poll(() => output.textContent(), { timeout: 20_000 }).toMatch(/^200/);
    const text = (await output.textContent()) ?? "";
    expect(text).toMatch(/Settlement: \{.*"success":true/);
    expect(text).toContain('"result":"1024"');
    requests.push(...(await page.evaluate(() => (window as unknown as { __requests: string[] }).__requests)));
    expect(requests).toEqual(["eth_requestAccounts", "eth_signTypedData_v4"]);

    expect(buyerBefore - (await shop.balanceOf(buyer.address))).toBe(1_000n);
    expect((await shop.balanceOf(shop.payTo)) - merchantBefore).toBe(1_000n);
    await page.close();
  }, 60_000);
});
