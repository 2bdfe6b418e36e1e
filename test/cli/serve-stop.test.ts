/**
 * `serve` under load, stopped: SIGTERM while paid writes are still arriving ends the process within
 * 10 s, and what it leaves agrees with what was paid: every settled insert is stored, nothing unpaid is.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it, onTestFinished } from "vitest";
import { startDevnet } from "../../src/chain/devnet/index.ts";
import { openDatabase } from "../../src/common/db/index.ts";
import { listen } from "../../src/common/listen.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { startMiner } from "../helpers/chain.ts";
import { isolatedDatabaseOptions, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { startCli } from "../helpers/process.ts";
import { NETWORK, newMerchant, usdcReader } from "../helpers/x402.ts";

const ROWS = 1000;

describe("serve, stopped under load", () => {
  it("exits within 10 s of SIGTERM during heavy paid writes, keeping exactly the paid ones", async () => {
    const devnet = await startDevnet({ port: 0, buyers: 4, blockTime: 0 });
    onTestFinished(() => devnet.stop());
    const miner = startMiner(devnet);
    onTestFinished(() => miner.stop());
    const ledger = await openTestDatabase("pglite");
    onTestFinished(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    onTestFinished(() => facilitator.close());
    const facilitatorHttp = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    onTestFinished(() => facilitatorHttp.close());

    const payTo = newMerchant();
    const { dataDir: data, cleanup } = await isolatedDatabaseOptions("pglite");
    onTestFinished(cleanup);
    const serve = startCli(["serve", "--only", "reports,utility", "--data", data], {
      PORT: "0",
      X402M_FACILITATOR_URL: facilitatorHttp.url,
      X402M_RPC_URL: devnet.rpc,
      X402M_UTILITY_PAY_TO: payTo,
      X402M_UTILITY_PORT: "0",
    });
    const { utility } = JSON.parse(await serve.line) as { utility: string };

    const insert = (buyer: number, batch: number) =>
      wrapFetchWithPayment(
        fetch,
        new x402Client().register(
          NETWORK,
          new ExactEvmClient(
            privateKeyToAccount((devnet.buyers[buyer] as { privateKey: `0x${string}` }).privateKey),
          ),
        ),
      )(`${utility}/api/store/insert`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          collection: `load${batch}`,
          rows: Array.from({ length: ROWS }, (_, i) => ({ i, text: "x".repeat(80), batch })),
        }),
      }).then(
        (r) => r.status,
        () => "cut",
      );

    // A first wave completes; a second is still arriving when the signal comes.
    const first = await Promise.all(Array.from({ length: 8 }, (_, i) => insert(i % 4, i)));
    expect(first.every((s) => s === 200)).toBe(true);
    const second = Promise.all(Array.from({ length: 16 }, (_, i) => insert(i % 4, 100 + i)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stoppedAt = Date.now();
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    const stopMs = Date.now() - stoppedAt;
    expect(stopMs, serve.stderr()).toBeLessThan(10_000);
    const statuses = [...first, ...(await second)];

    // What the merchant was paid and what it stored agree, insert for insert.
    await miner.pending();
    const paidInserts = (await usdcReader(devnet.rpc).balanceOf(payTo)) / 1000n;
    const db = await openDatabase({ pgliteDir: dataLayout(data).pglite.merchants, databaseUrl: null });
    onTestFinished(() => db.close());
    const { rows } = await db.query<{ row_count: bigint }>("SELECT row_count FROM utility_state_collections");
    expect(rows.every((r) => Number(r.row_count) === ROWS)).toBe(true);
    expect(BigInt(rows.length)).toBe(paidInserts);
    expect(rows.length).toBeGreaterThanOrEqual(statuses.filter((s) => s === 200).length);
  }, 90_000);
});
