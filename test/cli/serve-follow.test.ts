/**
 * `serve --rpc URL`: the report service and the indexer following a chain in one process. A buyer pays
 * a merchant on the devnet; the served report shows it, and shows the next payment too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { startMiner } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator, startShop } from "../helpers/facilitator.ts";
import { GENESIS, startTestDevnet } from "../helpers/indexer.ts";
import { NETWORK, newMerchant } from "../helpers/x402.ts";

const BIN = path.resolve(import.meta.dirname, "../../bin/x402-merchants");
const merchant = newMerchant();
let devnet: Devnet;
let miner: ReturnType<typeof startMiner>;
let ledger: Awaited<ReturnType<typeof openTestDatabase>>;
let facilitator: Facilitator;
let facilitatorServer: Listening;
let shop: Listening;
let serve: ChildProcess | undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-serve-follow-"));

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 1 });
  miner = startMiner(devnet);
  ledger = await openTestDatabase(LEDGER_KIND);
  facilitator = await devnetFacilitator(devnet, ledger.db);
  facilitatorServer = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  shop = await startShop(facilitatorServer.url, merchant, {
    "/weather": { price: "$0.01", description: "Current weather", body: ({ city }) => ({ city, t: 21 }) },
  });
}, 60_000);

afterAll(async () => {
  if (serve && serve.exitCode === null) serve.kill("SIGKILL");
  await shop?.close();
  await facilitatorServer?.close();
  await facilitator?.close();
  await ledger?.close();
  await miner?.stop();
  await devnet?.stop();
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

async function reportTx(base: string): Promise<number> {
  const response = await fetch(`${base}/v1/reports/base/${merchant}`);
  return response.ok ? ((await response.json()) as { tx: number }).tx : -1;
}

describe("serve --rpc", () => {
  it("indexes the chain while serving, so each new payment reaches the report", async () => {
    await pay();
    serve = spawn(
      process.execPath,
      [
        BIN,
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
        devnet.facilitatorAccount.address,
        "--from-block",
        String(GENESIS),
        "--reorg-depth",
        "0",
        "--poll-ms",
        "100",
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, X402M_METRICS_PORT: "0" } },
    );
    let stderr = "";
    serve.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const ready = await new Promise<{ reports: string }>((resolve, reject) => {
      let out = "";
      serve?.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0] as string));
      });
      serve?.once("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    await expect.poll(() => reportTx(ready.reports), { timeout: 30_000, interval: 200 }).toBe(1);
    await pay();
    await expect.poll(() => reportTx(ready.reports), { timeout: 30_000, interval: 200 }).toBe(2);

    const exited = new Promise<number | null>((resolve) => serve?.once("exit", resolve));
    serve.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 90_000);

  it("needs the report service to index into", async () => {
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--only", "utility", "--rpc", "http://127.0.0.1:1"],
      {
        env: { ...process.env, DATABASE_URL: "", X402M_METRICS_PORT: "0", X402M_UTILITY_PAY_TO: merchant },
      },
    );
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/--rpc indexes into the report service's analytics/);
  }, 30_000);
});
