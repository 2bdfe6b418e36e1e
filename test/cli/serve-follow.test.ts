/**
 * `serve --rpc URL`: the report service and the indexer following a chain in one process. A buyer pays
 * a merchant on the devnet; the served report shows it, and shows the next payment too. Polygon is followed
 * beside it (`X402M_RPC_URL_POLYGON`, a second devnet as chain 137), the same merchant paid there: each chain's
 * report holds its own payments, and `/healthz` says how far each indexer is.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POLYGON_RECORD } from "../../src/chain/chains.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator, startShop } from "../helpers/facilitator.ts";
import { runMain } from "../helpers/in-process.ts";
import { GENESIS, startTestDevnet } from "../helpers/indexer.ts";
import { startCli } from "../helpers/process.ts";
import { mineAll, Settler } from "../helpers/settle.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

const merchant = newMerchant();
let devnet: Devnet;
let polygon: Devnet;
let miner: ReturnType<typeof startMiner>;
let ledger: Awaited<ReturnType<typeof openTestDatabase>>;
let facilitator: Facilitator;
let facilitatorServer: Listening;
let shop: Listening;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-serve-follow-"));

beforeAll(async () => {
  [devnet, polygon] = await Promise.all([
    startTestDevnet({ buyers: 1 }),
    startTestDevnet({ chain: POLYGON_RECORD, buyers: 1, genesisNumber: 0 }),
  ]);
  miner = startMiner(devnet);
  // Polygon's payment first, mined before serve starts: its indexer reads it from the chain's first block.
  const settler = new Settler(polygon, polygon.facilitatorAccount);
  await settler.settle([
    { buyer: polygon.buyers[0] as DevnetAccount, payTo: merchant as `0x${string}`, amount: 420_000n },
  ]);
  await mineAll(polygon);
  ledger = await openTestDatabase(LEDGER_KIND);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  shop = await startShop(facilitatorServer.url, merchant, {
    "/weather": { price: "$0.01", description: "Current weather", body: ({ city }) => ({ city, t: 21 }) },
  });
}, 60_000);

afterAll(async () => {
  await shop?.close();
  await facilitatorServer?.close();
  await facilitator?.close();
  await ledger?.close();
  await miner?.stop();
  await devnet?.stop();
  await polygon?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function pay(): Promise<void> {
  const buyer = devnet.buyers[0];
  if (!buyer) throw new Error("no buyer");
  const paying = wrapFetchWithPayment(
    fetch,
    new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(buyer.privateKey))),
  );
  expect((await paying(`${shop.url}/weather?city=Lisbon`)).status).toBe(200);
}

async function reportTx(base: string, chain = "base"): Promise<number> {
  const response = await fetch(`${base}/v1/reports/${chain}/${merchant}`);
  return response.ok ? ((await response.json()) as { tx: number }).tx : -1;
}

describe("serve --rpc", () => {
  it("indexes each chain while serving, so each new payment reaches its chain's report", async () => {
    await pay();
    const serve = startCli(
      [
        "serve",
        "--only",
        "reports",
        "--port",
        "0",
        "--data",
        dataDir,
        "--rpc",
        devnet.rpc,
        "--facilitator",
        `${devnet.facilitatorAccount.address},${polygon.facilitatorAccount.address}`,
        "--from-block",
        String(GENESIS),
        "--reorg-depth",
        "0",
        "--poll-ms",
        "100",
      ],
      { X402M_RPC_URL_POLYGON: polygon.rpc },
    );
    const ready = JSON.parse(await serve.line) as { reports: string };
    await expect.poll(() => reportTx(ready.reports), { timeout: 30_000, interval: 200 }).toBe(1);
    await pay();
    await expect.poll(() => reportTx(ready.reports), { timeout: 30_000, interval: 200 }).toBe(2);
    // Polygon's payment in Polygon's report only: Base's counts its own two.
    await expect.poll(() => reportTx(ready.reports, "polygon"), { timeout: 30_000, interval: 200 }).toBe(1);
    const polygonReport = (await (await fetch(`${ready.reports}/v1/reports/polygon/${merchant}`)).json()) as {
      chain: string;
      usd: number;
    };
    expect(polygonReport).toMatchObject({ chain: "polygon", usd: 0.42 });
    expect(await reportTx(ready.reports)).toBe(2);
    const health = (await (await fetch(`${ready.reports}/healthz`)).json()) as {
      indexers: Record<string, { indexed_block: number | null }>;
    };
    expect(Object.keys(health.indexers).sort()).toEqual(["base", "polygon"]);
    expect(health.indexers.polygon?.indexed_block).toBeGreaterThan(0);
    // Each chain's progress lines name it.
    expect(serve.stderr()).toMatch(/"chain":"polygon"/);

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
  }, 90_000);

  // The refusals are decided from the flags before anything starts, and run in this process (runMain): a
  // process each cost 5-6 CPU-s for the same exit code and line (the served case above starts one).
  it("needs the report service to index into", async () => {
    const { code, stderr } = await runMain(["serve", "--only", "utility", "--rpc", "http://127.0.0.1:1"], {
      X402M_UTILITY_PAY_TO: merchant,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/--rpc indexes into the report service's analytics/);
  }, 30_000);

  it("refuses --chain without the --rpc it names the chain of", async () => {
    const { code, stderr } = await runMain(["serve", "--only", "reports", "--chain", "polygon"], {
      X402M_DATA: dataDir,
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/--chain names the chain --rpc serves/);
  }, 30_000);
});
