/**
 * An endpoint's `load` (its engine's module, once per process) is awaited before its time budget starts:
 * a cold host's first paid call is answered, not cut short by a 504 while a module loads.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Devnet } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { onFirstUse } from "../../../src/merchants/utility/lazy.ts";
import { useDevnet } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, usdcReader } from "../../helpers/x402.ts";

/** A module that takes three times the budget to load, as mathjs does on a busy machine. */
const LOAD_MS = 600;
const BUDGET_MS = 200;
const slowModule = () =>
  new Promise<{ answer: number }>((resolve) => setTimeout(() => resolve({ answer: 42 }), LOAD_MS));

const endpoint = (path: `/${string}`, declared: boolean) => {
  const engine = onFirstUse(slowModule);
  return defineEndpoint({
    method: "GET",
    path,
    price: "0.001",
    description: "Answers from a module that is slow to load.",
    input: z.object({}),
    output: z.object({ answer: z.number() }),
    example: { input: {}, output: { answer: 42 } },
    timeoutMs: BUDGET_MS,
    ...(declared && { load: engine }),
    handler: async () => ({ answer: (await engine()).answer }),
  });
};

const chain = useDevnet({ buyers: 1 });
let facilitator: Facilitator;
let shop: Listening;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const facilitatorDb = await openTestDatabase(LEDGER_KIND);
  closers.push(facilitatorDb.close);
  facilitator = await devnetFacilitator(chain.devnet, facilitatorDb.db);
  const merchantDb = await openTestDatabase("pglite");
  closers.push(merchantDb.close);
  const endpoints = [endpoint("/api/declared", true), endpoint("/api/undeclared", false)];
  shop = await startMerchant(
    (url) => testMerchant(payTo, url, endpoints),
    merchantDb.db,
    inProcessClient(facilitator),
    { rpcUrl: chain.devnet.rpc },
  );
}, 60_000);
afterAll(async () => {
  await shop?.close();
  await facilitator?.close();
  for (const close of closers.reverse()) await close();
});

describe("an endpoint's load", () => {
  it("is awaited before the time budget: the first paid call answers, and is charged once", async () => {
    const buyer = chain.devnet.buyers[0] as Devnet["buyers"][0];
    const paying = wrapFetchWithPayment(
      fetch,
      new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
    );
    const usdc = usdcReader(chain.devnet.rpc);
    // Without it, the load counts against the budget: a 504, not charged.
    const cut = await paying(`${shop.url}/api/undeclared`);
    expect(cut.status).toBe(504);
    expect(await usdc.balanceOf(payTo)).toBe(0n);
    const answered = await paying(`${shop.url}/api/declared`);
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ answer: 42 });
    expect(await usdc.balanceOf(payTo)).toBe(1000n);
  }, 60_000);
});
