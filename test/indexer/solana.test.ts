/**
 * `index --chain solana` against the local Solana (src/chain/solana/devnet): a payment made with the SDK's own
 * `exact` client and settled by its facilitator scheme, the devnet's fee payer signing, is read back as the SVM
 * spec settles it (a TransferChecked of USDC whose fee payer is a known facilitator), with the owners of the token
 * accounts as buyer and merchant; the report then counts exactly that payment from that buyer, on Solana.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  type Rpc,
  type SolanaRpcApi,
} from "@solana/kit";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as ExactClient } from "@x402/svm/exact/client";
import { ExactSvmScheme as ExactFacilitator } from "@x402/svm/exact/facilitator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { SOLANA_RECORD } from "../../src/chain/chains.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";
import { type SolanaDevnet, startSolanaDevnet } from "../../src/chain/solana/devnet/index.ts";
import { indexSolana } from "../../src/indexer/index.ts";
import { ReportService } from "../../src/reports/index.ts";
import { tempAnalytics } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import { startProvider } from "../helpers/provider.ts";
import { startRpcProxy } from "../helpers/rpc-proxy.ts";
import { openUsdcAccount, signerOf } from "../helpers/solana-devnet.ts";

const PRICE = 12_345n;
let devnet: SolanaDevnet;
let rpc: Rpc<SolanaRpcApi>;
let merchant: KeyPairSigner;
let buyer: KeyPairSigner;
let feePayer: KeyPairSigner;
let settledTx: string;
let analytics: Analytics;
const dirs: string[] = [];

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 1 });
  rpc = createSolanaRpc(devnet.rpc) as Rpc<SolanaRpcApi>;
  buyer = await signerOf((devnet.buyers[0] as { secretKey: string }).secretKey);
  feePayer = await signerOf(devnet.feePayer.secretKey);
  merchant = await generateKeyPairSigner();
  await openUsdcAccount(rpc, merchant);
  const accepted = {
    scheme: "exact",
    network: SOLANA_NETWORK,
    asset: SOLANA_USDC_MINT,
    amount: PRICE.toString(),
    payTo: merchant.address,
    maxTimeoutSeconds: 60,
    extra: { feePayer: feePayer.address },
  } as PaymentRequirements;
  const created = await new ExactClient(buyer, { rpcUrl: devnet.rpc }).createPaymentPayload(2, accepted);
  const payload = {
    ...created,
    accepted,
    resource: { url: "http://127.0.0.1/api/calc", description: "", mimeType: "" },
  };
  const facilitator = new ExactFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: devnet.rpc }));
  const settled = await facilitator.settle(payload as PaymentPayload, accepted);
  expect(settled.success).toBe(true);
  settledTx = settled.transaction;
  analytics = await tempAnalytics();
});

afterAll(async () => {
  analytics?.close();
  await devnet?.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe("the Solana indexer on the local Solana", () => {
  it("reads the facilitator's settled payment with the owners as buyer and merchant, once however often it runs", async () => {
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([feePayer.address]);
    const first = await indexSolana({ rpc: devnet.rpc, analytics, registry });
    expect(first).toMatchObject({ chain: "solana", payments: 1 });
    // One page of signatures and one getTransaction per listed fee payer's landed transaction, and the funding reads.
    expect(first.calls).toBeGreaterThan(2);
    const rows = await analytics.all(
      "SELECT tx_hash, facilitator, payer, pay_to, amount, asset, scheme FROM payments",
    );
    expect(rows).toEqual([
      {
        tx_hash: settledTx,
        facilitator: feePayer.address,
        payer: buyer.address,
        pay_to: merchant.address,
        amount: PRICE,
        asset: SOLANA_USDC_MINT,
        scheme: "exact",
      },
    ]);
    const again = await indexSolana({ rpc: devnet.rpc, analytics, registry });
    expect(again.payments).toBe(1);
    expect((await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM payments"))?.n).toBe(1n);
  });

  it("reads each transaction once, many calls to an HTTP request, the funding walk reusing the payments read", async () => {
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([feePayer.address]);
    const signers = registry.addresses().length;
    const provider = await startProvider(devnet.rpc, { hosted: false });
    const store = await tempAnalytics();
    try {
      const summary = await indexSolana({ rpc: provider.url, analytics: store, registry });
      expect(summary).toMatchObject({ payments: 1, transfers: 0 });
      // The buyer's token account lists the payment it made: read once, by the fee payer's walk, not again.
      expect(provider.cost.methods).toEqual({
        getSlot: 1,
        getBlockTime: 1,
        getSignaturesForAddress: signers + 1,
        getTransaction: 1,
      });
      // The head, its time, every fee payer's first page together, the payment, the payer's account: 5 requests.
      expect(provider.cost.httpRequests).toBe(5);
      expect(summary).toMatchObject({
        calls: provider.cost.calls,
        requests: provider.cost.httpRequests,
        bytes: provider.cost.bytes,
      });
    } finally {
      store.close();
      await provider.close();
    }
  });

  it("reads a provider that refuses JSON-RPC batches one call a request", async () => {
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([feePayer.address]);
    let batches = 0;
    const proxy = await startRpcProxy(devnet.rpc, ({ body }) => {
      if (!Array.isArray(body)) return { kind: "forward" };
      batches++;
      return { kind: "rpc-error", code: -32600, message: "batch requests are disabled" };
    });
    const store = await tempAnalytics();
    try {
      const summary = await indexSolana({ rpc: proxy.url, analytics: store, registry });
      expect(summary.payments).toBe(1);
      expect(batches).toBe(1);
      const rows = await store.all("SELECT tx_hash, payer, pay_to, amount FROM payments");
      expect(rows).toEqual([
        { tx_hash: settledTx, payer: buyer.address, pay_to: merchant.address, amount: PRICE },
      ]);
    } finally {
      store.close();
      await proxy.close();
    }
  });

  it("leaves out a fee payer no registry lists", async () => {
    const store = await tempAnalytics();
    try {
      const summary = await indexSolana({
        rpc: devnet.rpc,
        analytics: store,
        registry: FacilitatorRegistry.forChain(SOLANA_RECORD),
      });
      expect(summary.payments).toBe(0);
    } finally {
      store.close();
    }
  });

  it("gives a report of exactly that payment from that buyer, on Solana, and on the command line", async () => {
    const service = new ReportService(analytics, { publicUrl: "https://reports.test", chain: SOLANA_RECORD });
    const { report } = await service.report(merchant.address);
    expect(report).toMatchObject({ chain: "solana", address: merchant.address, tx: 1, usd: 0.01, buyers: 1 });
    const data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-solana-index-cli-"));
    dirs.push(data);
    const indexed = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--chain",
      "solana",
      "--facilitator",
      feePayer.address,
      "--data",
      data,
    ]);
    expect(indexed.code).toBe(0);
    expect(JSON.parse(indexed.stdout)).toMatchObject({ chain: "solana", payments: 1 });
    const out = await runMain(["report", merchant.address, "--chain", "solana", "--data", data]);
    expect(JSON.parse(out.stdout)).toMatchObject({ chain: "solana", tx: 1, buyers: 1 });
  });
});
