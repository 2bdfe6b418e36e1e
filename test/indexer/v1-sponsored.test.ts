/**
 * Counted the same (issue 85): a payment made by an x402 v1 client (`x402-fetch` 1.2.0), an upto payment whose
 * Permit2 allowance came from a sponsored EIP-2612 permit (`settleWithPermit`), and an exact Permit2 payment
 * whose allowance came from a sponsored raw approval (the facilitator's ETH to the wallet, the wallet's
 * `approve`, then the settlement) are each indexed as exactly one payment of its scheme, as a plain v2 exact
 * payment is, and the report counts them alike. The permit, the approval and the facilitator's ETH are no
 * payments and no USDC transfers of anyone's: the only transfers stored are the USDC that funded the two wallets.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchV1 } from "x402-fetch";
import { z } from "zod";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { type Facilitator, inProcessClient } from "../../src/facilitator/index.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { defineEndpoint } from "../../src/merchant-kit/endpoint.ts";
import { ReportService } from "../../src/reports/index.ts";
import { startMiner, walletHolding } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { startMerchant, testMerchant } from "../helpers/merchant.ts";
import { rpc } from "../helpers/settle.ts";
import { NETWORK, newMerchant, recordingFetch, usdcReader, x402ClientFor } from "../helpers/x402.ts";

const plain = defineEndpoint({
  method: "GET",
  path: "/api/plain",
  price: "0.05",
  description: "Paid by EIP-3009 only.",
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  example: { input: {}, output: { ok: true } },
  handler: async () => ({ ok: true }),
});
const metered = defineEndpoint({
  method: "POST",
  path: "/v1/metered",
  price: "0.5",
  scheme: "upto",
  description: "Charges what the call cost, up to $0.50.",
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
  price: "0.02",
  exactTransfers: ["eip3009", "permit2"],
  description: "Paid by EIP-3009 or through Permit2.",
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  example: { input: {}, output: { ok: true } },
  handler: async () => ({ ok: true }),
});

/** What each fresh wallet holds: 5 USDC, and no ETH. */
const HELD = 5_000_000n;
const METERED = 370_000n;
const merchant = newMerchant();
const M = merchant.toLowerCase();
const ZERO = "0x0000000000000000000000000000000000000000";

/** What each payment was, from its receipt's header, in the order made. */
interface Paid {
  tx: string;
  payer: string;
  amount: bigint;
  scheme: "exact" | "upto";
  transfer_method: "eip3009" | "permit2";
}
const paid: Paid[] = [];
/** The wallets holding only USDC, each funded by a buyer that pays nothing itself. */
const funded: { from: string; to: string }[] = [];
/** The sponsored approval's two transactions: the facilitator's ETH to the wallet, the wallet's `approve`. */
let approval: { approval_tx: string; funding_tx: string };
let devnet: Devnet;
let head: number;

/** The facilitator as a host reaches it, its `/supported` listing only the sponsoring `keep` allows. */
function listing(facilitator: Facilitator, keep: "eip2612GasSponsoring" | "erc20ApprovalGasSponsoring") {
  const client = inProcessClient(facilitator);
  const other = keep === "eip2612GasSponsoring" ? "erc20ApprovalGasSponsoring" : "eip2612GasSponsoring";
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
    getSupported: async () => {
      const supported = await client.getSupported();
      return { ...supported, extensions: supported.extensions.filter((e) => e !== other) };
    },
  } satisfies FacilitatorClient;
}

/** A wallet holding only USDC, funded by buyer `from`. */
async function usdcOnly(from: number): Promise<DevnetAccount> {
  const wallet = await walletHolding(devnet, HELD, from);
  funded.push({
    from: (devnet.buyers[from] as DevnetAccount).address.toLowerCase(),
    to: wallet.address.toLowerCase(),
  });
  return wallet;
}

/** The SDK's clients for a wallet holding only USDC: given the RPC, they read its allowance and sign the sponsoring. */
function sponsoredClient(wallet: DevnetAccount) {
  const account = privateKeyToAccount(wallet.privateKey);
  const options = { rpcUrl: devnet.rpc };
  const permit2 = (_version: number, accepts: PaymentRequirements[]) =>
    accepts.find((a) => a.extra?.assetTransferMethod === "permit2") ?? (accepts[0] as PaymentRequirements);
  return new x402Client(permit2)
    .register(NETWORK, new ExactEvmScheme(account, options))
    .register(NETWORK, new UptoEvmScheme(account, options));
}

/** The extensions of the last payment `signatures` saw sent. */
function extensionsSent(signatures: string[]): string[] {
  const sent = JSON.parse(Buffer.from(signatures.at(-1) as string, "base64").toString());
  return Object.keys(sent.extensions ?? {});
}

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 4 });
  const miner = startMiner(devnet);
  const ledger = await openTestDatabase(LEDGER_KIND);
  const state = await openTestDatabase("pglite");
  const closers: (() => Promise<void>)[] = [ledger.close, state.close];
  let facilitator: Facilitator | undefined;
  try {
    facilitator = await devnetFacilitator(devnet, ledger.db);
    // One merchant on two hosts: one whose facilitator lists the permit, one the approval, so each wallet
    // signs the sponsoring its case is about (a client signs the permit where both are declared).
    const start = async (client: FacilitatorClient) => {
      const shop = await startMerchant(
        (url) => testMerchant(merchant, url, [plain, metered, either]),
        state.db,
        client,
        { rpcUrl: devnet.rpc },
      );
      closers.unshift(() => shop.close());
      return shop.url;
    };
    const permitHost = await start(listing(facilitator, "eip2612GasSponsoring"));
    const approvalHost = await start(listing(facilitator, "erc20ApprovalGasSponsoring"));
    const [b0, b1] = devnet.buyers as [DevnetAccount, DevnetAccount];

    // A v1 client, as its users call it with a viem account.
    const v1 = await wrapFetchV1(fetch, privateKeyToAccount(b0.privateKey))(`${permitHost}/api/plain`);
    expect(v1.status, await v1.clone().text()).toBe(200);
    const v1Receipt = decodeXPaymentResponse(v1.headers.get("x-payment-response") as string);
    paid.push({
      tx: v1Receipt.transaction,
      payer: b0.address,
      amount: 50_000n,
      scheme: "exact",
      transfer_method: "eip3009",
    });

    // The plain v2 exact payment the others are compared with.
    const v2 = await wrapFetchWithPayment(fetch, x402ClientFor(b1, "exact"))(`${permitHost}/api/plain`);
    expect(v2.status, await v2.clone().text()).toBe(200);
    paid.push({
      tx: decodePaymentResponseHeader(v2.headers.get("payment-response") as string).transaction,
      payer: b1.address,
      amount: 50_000n,
      scheme: "exact",
      transfer_method: "eip3009",
    });

    // upto, the allowance given by a permit carried in the proxy's settleWithPermit.
    const permitting = await usdcOnly(2);
    const permitFetch = recordingFetch();
    const upto = await wrapFetchWithPayment(permitFetch.fetch, sponsoredClient(permitting))(
      `${permitHost}/v1/metered`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ cost: Number(METERED) }),
      },
    );
    expect(upto.status, await upto.clone().text()).toBe(200);
    expect(extensionsSent(permitFetch.signatures)).toContain("eip2612GasSponsoring");
    paid.push({
      tx: decodePaymentResponseHeader(upto.headers.get("payment-response") as string).transaction,
      payer: permitting.address,
      amount: METERED,
      scheme: "upto",
      transfer_method: "permit2",
    });

    // exact through Permit2, the allowance given by a raw approval the facilitator funded and sent.
    const approving = await usdcOnly(3);
    const approvalFetch = recordingFetch();
    const exact = await wrapFetchWithPayment(
      approvalFetch.fetch,
      sponsoredClient(approving),
    )(`${approvalHost}/api/either`);
    expect(exact.status, await exact.clone().text()).toBe(200);
    expect(extensionsSent(approvalFetch.signatures)).toContain("erc20ApprovalGasSponsoring");
    paid.push({
      tx: decodePaymentResponseHeader(exact.headers.get("payment-response") as string).transaction,
      payer: approving.address,
      amount: 20_000n,
      scheme: "exact",
      transfer_method: "permit2",
    });
    const { rows } = await ledger.db.query<{ approval_tx: string; funding_tx: string; state: string }>(
      "SELECT approval_tx, funding_tx, state FROM facilitator_sponsored_approvals WHERE payer = $1",
      [approving.address.toLowerCase()],
    );
    expect(rows.map((r) => r.state)).toEqual(["approved"]);
    approval = rows[0] as (typeof rows)[number];
  } finally {
    await facilitator?.close();
    for (const close of closers) await close();
    await miner.stop();
  }
  await devnet.mine(2);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 120_000);
afterAll(() => devnet?.stop());

describe("indexer, payments of v1 clients and of sponsored allowances", () => {
  it("stores each as one payment of its scheme, no transfer of the sponsoring, and reports them like a plain one", async () => {
    const analytics = await openTempAnalytics();
    try {
      await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
        fromBlock: GENESIS + 1,
        toBlock: head,
        reorgDepth: 4,
      });
      // Every payment on the chain, not only the merchant's: nothing else was taken for one.
      const payments = await analytics.all<Record<string, unknown>>(
        "SELECT tx_hash, payer, pay_to, amount, scheme, transfer_method FROM payments ORDER BY block_number, log_index",
      );
      expect(payments).toEqual(
        paid.map((p) => ({
          tx_hash: p.tx.toLowerCase(),
          payer: p.payer.toLowerCase(),
          pay_to: M,
          amount: p.amount,
          scheme: p.scheme,
          transfer_method: p.transfer_method,
        })),
      );
      expect(await analytics.all("SELECT * FROM facilitator_candidates")).toEqual([]);

      // The only transfers are USDC's own: the devnet's mints to the buyers (the funding history of the
      // funders) and the wallets' funding. Neither the permit, the approval nor the ETH the facilitator sent
      // for it, all of which are on the chain, nor anything of a settlement's transaction.
      const transfers = await analytics.all<Record<string, unknown>>(
        "SELECT tx_hash, from_address, to_address, amount FROM transfers ORDER BY block_number, log_index",
      );
      const buyers = devnet.buyers.map((b) => b.address.toLowerCase());
      const minted = transfers.filter((t) => t.from_address === ZERO);
      expect(minted.map((t) => t.to_address)).toEqual(buyers);
      expect(
        transfers
          .slice(minted.length)
          .map((t) => ({ from: t.from_address, to: t.to_address, amount: t.amount })),
      ).toEqual(funded.map((f) => ({ ...f, amount: HELD })));
      const sponsoring = [approval.funding_tx, approval.approval_tx].map((h) => h.toLowerCase());
      const settlements = paid.map((p) => p.tx.toLowerCase());
      for (const t of transfers) expect([...sponsoring, ...settlements]).not.toContain(t.tx_hash);
      const usdc = usdcReader(devnet.rpc);
      for (const hash of [approval.funding_tx, approval.approval_tx]) {
        expect((await usdc.receipt(hash as Hex)).status).toBe("success");
      }

      const { report } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(M);
      expect(report).toMatchObject({ tx: 4, buyers: 4, usd: 0.49, real_tx: 4, real_usd: 0.49 });
      expect(report.schemes).toEqual({
        exact: { tx: 3, usd: 0.12, real_tx: 3, real_usd: 0.12, tx_counts: "payments" },
        upto: { tx: 1, usd: 0.37, real_tx: 1, real_usd: 0.37, tx_counts: "payments" },
      });
    } finally {
      analytics.close();
    }
  });
});
