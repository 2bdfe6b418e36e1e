/**
 * upto payments in the store: settled through the project's facilitator (Permit2 and the upto proxy on the
 * devnet), read back by the indexer as payments of the metered amount, beside an exact one, keyed by their
 * Transfer log, and reported with it to the atomic unit; the same settlement sent by an unknown account is
 * a candidate.
 */
import type { PaymentRequirements } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_USDC } from "../../src/chain/base.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { ReportService } from "../../src/reports/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { OP_GETH_VERSION } from "../helpers/provider.ts";
import { startRpcProxy } from "../helpers/rpc-proxy.ts";
import { rpc } from "../helpers/settle.ts";
import { newMerchant, pay, payUpto, requirementsFor, uptoRequirementsFor } from "../helpers/x402.ts";

let devnet: Devnet;
let head: number;
const merchant = newMerchant();
const settled: { tx: string; payer: string; amount: bigint }[] = [];

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 2 });
  const miner = startMiner(devnet);
  const ledger = await openTestDatabase(LEDGER_KIND);
  let facilitator: Facilitator | undefined;
  try {
    facilitator = await devnetFacilitator(devnet, ledger.db);
    const f = facilitator;
    const [b0, b1] = devnet.buyers as [DevnetAccount, DevnetAccount];
    const settle = async (
      payment: Awaited<ReturnType<typeof pay>>,
      verify: PaymentRequirements,
      take: bigint,
    ) => {
      expect(await f.verify(payment, verify)).toMatchObject({ isValid: true });
      const answer = await f.settle(payment, { ...verify, amount: take.toString() });
      expect(answer, JSON.stringify(answer)).toMatchObject({ success: true });
      settled.push({
        tx: answer.transaction.toLowerCase(),
        payer: answer.payer?.toLowerCase() ?? "",
        amount: take,
      });
    };
    const upto = uptoRequirementsFor(merchant, "1000000", f.address);
    await settle(await payUpto(b0, upto), upto, 370_000n);
    await settle(await payUpto(b1, upto), upto, 999_999n);
    const exact = requirementsFor(merchant, "5000");
    await settle(await pay(b0, exact), exact, 5_000n);
    // A metered 0 sends no transaction: nothing to index.
    const zero = await f.verify(await payUpto(b1, upto), upto);
    expect(zero).toMatchObject({ isValid: true });
  } finally {
    await facilitator?.close();
    await ledger.close();
    await miner.stop();
  }
  await devnet.mine(2);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 120_000);
afterAll(() => devnet?.stop());

describe("indexer, upto payments", () => {
  it("stores each upto settlement as a payment of the amount taken, keyed by its Transfer log, beside exact ones", async () => {
    const analytics = await openTempAnalytics();
    try {
      const summary = await runIndexer({
        analytics,
        rpc: { url: devnet.rpc },
        registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
        fromBlock: GENESIS + 1,
        toBlock: head,
        reorgDepth: 4,
      });
      expect(summary).toMatchObject({ payments: 3, candidates: 0, stopped: "done" });
      const rows = await analytics.all<{
        tx_hash: string;
        payer: string;
        pay_to: string;
        amount: bigint;
        facilitator: string;
      }>("SELECT tx_hash, payer, pay_to, amount, facilitator, asset FROM payments ORDER BY amount");
      expect(rows).toEqual(
        [...settled]
          .sort((a, b) => Number(a.amount - b.amount))
          .map((s) => ({
            tx_hash: s.tx,
            payer: s.payer,
            pay_to: merchant.toLowerCase(),
            amount: s.amount,
            facilitator: devnet.facilitatorAccount.address.toLowerCase(),
            asset: BASE_USDC,
          })),
      );
      // The upto ones are not also kept as plain transfers.
      const transfers = await analytics.all<{ tx_hash: string }>("SELECT tx_hash FROM transfers");
      expect(transfers.filter((t) => settled.some((s) => s.tx === t.tx_hash))).toEqual([]);

      // A window holding both schemes reports their total to the atomic unit, and its dollars rounded half up.
      const { report, details } = await new ReportService(analytics, { publicUrl: "https://r.test" }).report(
        merchant.toLowerCase(),
      );
      const total = settled.reduce((sum, s) => sum + s.amount, 0n);
      expect(total).toBe(1_374_999n);
      expect(details.exact?.amount).toBe(total.toString());
      expect(report).toMatchObject({ tx: 3, buyers: 2, usd: 1.37 });
      expect(details.exact?.real_amount).toBe(total.toString());
      expect(report.real_usd).toBe(1.37);
    } finally {
      analytics.close();
    }
  });

  it("keeps upto settlements of a signer it does not know as candidates", async () => {
    const analytics = await openTempAnalytics();
    // On anvil the devnet's facilitator is known without saying; behind a node that is not anvil it is not.
    const node = await startRpcProxy(devnet.rpc, ({ body }) =>
      !Array.isArray(body) && body.method === "web3_clientVersion"
        ? { kind: "forward", rewrite: (answer) => ({ ...(answer as object), result: OP_GETH_VERSION }) }
        : { kind: "forward" },
    );
    try {
      const summary = await runIndexer({
        analytics,
        rpc: { url: node.url },
        registry: FacilitatorRegistry.base(),
        fromBlock: GENESIS + 1,
        toBlock: head,
        reorgDepth: 4,
      });
      expect(summary).toMatchObject({ payments: 0, candidates: 3 });
    } finally {
      await node.close();
      analytics.close();
    }
  });
});
