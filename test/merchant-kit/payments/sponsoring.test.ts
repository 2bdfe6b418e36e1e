/**
 * Gas sponsoring through the kit (payments/sponsoring/): a host whose facilitator lists
 * `eip2612GasSponsoring` and `erc20ApprovalGasSponsoring` declares them on its routes that take a Permit2
 * payment (upto, exact through Permit2), and on nothing else; one whose facilitator lists neither declares
 * neither. A fresh wallet holding USDC and no ETH pays both with the stock `@x402/fetch` and the SDK's own
 * clients (given an RPC to read the token), the permit or approval carried out by the facilitator: charged
 * exactly the price, its ETH untouched. A client that cannot sign the sponsoring gets 412
 * `permit2_allowance_required` with the kit's JSON error saying what to do, and pays nothing.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { defineEndpoint } from "../../../src/merchant-kit/endpoint.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { NETWORK, newMerchant, recordingFetch, usdcReader } from "../../helpers/x402.ts";

const SPONSORING = ["eip2612GasSponsoring", "erc20ApprovalGasSponsoring"];
/** What each fresh wallet holds: 5 USDC. */
const HELD = 5_000_000n;

const metered = defineEndpoint({
  method: "POST",
  path: "/v1/metered",
  price: "0.01",
  scheme: "upto",
  description: "Charges what the call cost, up to $0.01.",
  input: z.object({ cost: z.number().int().min(0) }),
  output: z.object({ cost: z.number() }),
  example: { input: { cost: 10 }, output: { cost: 10 } },
  handler: async ({ cost }, ctx) => {
    ctx.meter?.(BigInt(cost));
    return { cost };
  },
});

const either = defineEndpoint({
  method: "GET",
  path: "/api/either",
  price: "0.002",
  exactTransfers: ["eip3009", "permit2"],
  description: "Paid by EIP-3009 or through Permit2.",
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  example: { input: {}, output: { ok: true } },
  handler: async () => ({ ok: true }),
});

const plain = defineEndpoint({
  method: "GET",
  path: "/api/plain",
  price: "0.001",
  description: "Paid by EIP-3009 only: no allowance, nothing to sponsor.",
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  example: { input: {}, output: { ok: true } },
  handler: async () => ({ ok: true }),
});

const chain = useDevnet({ buyers: 2 });
let facilitator: Facilitator;
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];

/** The facilitator as a merchant reaches it, its `/supported` listing only the extensions `keep` allows. */
function listing(keep: (extension: string) => boolean): FacilitatorClient {
  const client = inProcessClient(facilitator);
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
    getSupported: async () => {
      const supported = await client.getSupported();
      return { ...supported, extensions: supported.extensions.filter(keep) };
    },
  };
}

async function host(facilitatorClient: FacilitatorClient): Promise<Listening> {
  const opened = await openTestDatabase("pglite");
  closers.push(opened.close);
  const shop = await startMerchant(
    (url) => testMerchant(newMerchant(), url, [metered, either, plain]),
    opened.db,
    facilitatorClient,
    { rpcUrl: chain.devnet.rpc },
  );
  closers.push(() => shop.close());
  return shop;
}

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const opened = await openTestDatabase(LEDGER_KIND);
  closers.push(opened.close);
  facilitator = await devnetFacilitator(chain.devnet, opened.db);
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
});

const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Picks the 402's exact option through Permit2. */
const permit2Option = (_version: number, accepts: PaymentRequirements[]) =>
  accepts.find((a) => a.extra?.assetTransferMethod === "permit2") ?? (accepts[0] as PaymentRequirements);

/** The SDK's clients for `wallet`, reading the token over the devnet's RPC (what a permit needs), or not. */
function clientOf(wallet: DevnetAccount, { rpc = true } = {}) {
  const account = privateKeyToAccount(wallet.privateKey);
  const options = rpc ? { rpcUrl: chain.devnet.rpc } : undefined;
  return new x402Client(permit2Option)
    .register(NETWORK, new ExactEvmScheme(account, options))
    .register(NETWORK, new UptoEvmScheme(account, options));
}

async function extensionsOf(url: string, init?: RequestInit) {
  const unpaid = await fetch(url, init);
  expect(unpaid.status).toBe(402);
  const required = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
  return { keys: Object.keys(required.extensions ?? {}), accepts: required.accepts };
}

describe("gas sponsoring through the kit", () => {
  it("declares what its facilitator lists on the routes that take Permit2, and nothing where it lists none", async () => {
    const shop = await host(inProcessClient(facilitator));
    const upto = await extensionsOf(`${shop.url}/v1/metered`, post({ cost: 1 }));
    // The permit alone where the facilitator takes both: every token sold in has EIP-2612, and the 402's header
    // must stay under Node's 16 KB (declare.ts).
    expect(upto.keys.filter((k) => SPONSORING.includes(k))).toEqual(["eip2612GasSponsoring"]);
    // The token's domain, which a permit is signed on, beside the facilitator upto names.
    expect(upto.accepts[0]?.extra).toMatchObject({ name: "USD Coin", version: "2" });
    expect((await extensionsOf(`${shop.url}/api/either`)).keys).toContain("eip2612GasSponsoring");
    const approvalOnly = await host(listing((e) => e !== "eip2612GasSponsoring"));
    const approval = await extensionsOf(`${approvalOnly.url}/v1/metered`, post({ cost: 1 }));
    expect(approval.keys.filter((k) => SPONSORING.includes(k))).toEqual(["erc20ApprovalGasSponsoring"]);
    const onlyEip3009 = await extensionsOf(`${shop.url}/api/plain`);
    expect(onlyEip3009.keys.filter((k) => SPONSORING.includes(k))).toEqual([]);

    const without = await host(listing((e) => !SPONSORING.includes(e)));
    const none = await extensionsOf(`${without.url}/v1/metered`, post({ cost: 1 }));
    expect(none.keys.filter((k) => SPONSORING.includes(k))).toEqual([]);
  });

  for (const [kind, keep] of [
    ["an EIP-2612 permit", (e: string) => e !== "erc20ApprovalGasSponsoring"],
    ["a raw approval", (e: string) => e !== "eip2612GasSponsoring"],
  ] as const) {
    it(`lets a wallet holding only USDC pay upto and exact through Permit2 with ${kind}, charged exactly the price`, async () => {
      const shop = await host(listing(keep));
      const wallet = await walletHolding(chain.devnet, HELD);
      const { fetch: recording, signatures } = recordingFetch();
      const pay = wrapFetchWithPayment(recording, clientOf(wallet));

      const call = await pay(`${shop.url}/v1/metered`, post({ cost: 1234 }));
      expect(call.status, await call.clone().text()).toBe(200);
      expect(decodePaymentResponseHeader(call.headers.get("payment-response") as string)).toMatchObject({
        success: true,
        amount: "1234",
      });
      const sent = JSON.parse(Buffer.from(signatures.at(-1) as string, "base64").toString());
      const key = kind === "a raw approval" ? "erc20ApprovalGasSponsoring" : "eip2612GasSponsoring";
      expect(sent.extensions[key].info).toMatchObject({ from: wallet.address });
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - 1234n);

      const exact = await pay(`${shop.url}/api/either`);
      expect(exact.status, await exact.clone().text()).toBe(200);
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - 1234n - 2000n);
      if (kind === "an EIP-2612 permit") {
        // Each payment's permit rode in its settlement: the wallet sent nothing and holds no ETH.
        expect(await usdc.client.getBalance({ address: wallet.address })).toBe(0n);
        expect(await usdc.nonceOf(wallet.address)).toBe(0);
      } else {
        // One approval, of the most there is, made with the first payment; the second needed none.
        expect(await usdc.nonceOf(wallet.address)).toBe(1);
        const second = JSON.parse(Buffer.from(signatures.at(-1) as string, "base64").toString());
        expect(second.extensions?.[key]?.info?.signedTransaction).toBeUndefined();
      }
    });
  }

  it("answers a Permit2 payment its client could not sponsor 412 with the kit's error, and charges nothing", async () => {
    const shop = await host(inProcessClient(facilitator));
    const wallet = await walletHolding(chain.devnet, HELD);
    // No RPC: the client cannot read the token's nonce, so it signs no permit.
    const refused = await wrapFetchWithPayment(fetch, clientOf(wallet, { rpc: false }))(
      `${shop.url}/v1/metered`,
      post({ cost: 1 }),
    );
    expect(refused.status).toBe(412);
    expect(decodePaymentRequiredHeader(refused.headers.get("payment-required") as string).error).toBe(
      "permit2_allowance_required",
    );
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("permit2_allowance_required");
    expect(body.error.message).toContain("eip2612GasSponsoring");
    expect(body.error.message).toContain("nothing was charged");
    expect(await usdc.balanceOf(wallet.address)).toBe(HELD);

    const doc = await (await fetch(`${shop.url}/openapi.json`)).json();
    expect(doc.paths["/v1/metered"].post.responses["412"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/Error",
    });
  });
});
