/**
 * Issue 14, "young chains", end to end: a devnet a minute old (a few dozen blocks, every one of them
 * within the indexer's default reorg depth of 64) is indexed by the command line to its head and
 * reported on, as someone trying the project on a fresh devnet would. The commands run in this process
 * (runMain), their log lines caught with what they print.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, type DevnetAccount, derive, startDevnet } from "../../src/chain/devnet/index.ts";
import { runMain } from "../helpers/in-process.ts";
import { tempDir } from "../helpers/indexer.ts";
import { mineAll, type Paid, rpc, Settler } from "../helpers/settle.ts";

const stderrLines = (stderr: string) =>
  stderr
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const merchant = derive(120).address.toLowerCase();
const other = derive(121).address.toLowerCase();
let devnet: Devnet;
let head: number;
let paid: Paid[];

beforeAll(async () => {
  // Genesis at block 0, mined on demand: the chain is as old as the blocks mined, 2 s each.
  devnet = await startDevnet({ port: 0, blockTime: 0, buyers: 3 });
  const settler = new Settler(devnet, devnet.facilitatorAccount);
  paid = [];
  for (let i = 0; i < 6; i++) {
    const batch = await settler.settle([
      {
        buyer: devnet.buyers[i % 3] as DevnetAccount,
        payTo: derive(120).address,
        amount: BigInt(250_000 + i),
      },
      { buyer: devnet.buyers[(i + 1) % 3] as DevnetAccount, payTo: derive(121).address, amount: 10_000n },
    ]);
    await mineAll(
      devnet,
      batch.map((p) => p.tx),
    );
    paid.push(...batch);
    // Empty blocks between payments, as a real minute would have.
    await devnet.mine(4);
  }
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
}, 60_000);
afterAll(() => devnet?.stop());

describe("a devnet a minute old", () => {
  it("is short of the reorg depth, as the issue describes", () => {
    expect(head).toBeGreaterThan(20);
    expect(head).toBeLessThan(64);
  });

  it("index --to-block <head> says every block is unconfirmed, and report gives the merchant's figures", async () => {
    const data = tempDir();
    const facilitator = devnet.facilitatorAccount.address;
    const indexed = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--to-block",
      String(head),
      "--facilitator",
      facilitator,
      "--data",
      data,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    const summary = JSON.parse(indexed.stdout) as {
      block: number;
      payments: number;
      indexed: { from: number; to: number };
      head: number;
      unconfirmed: number;
    };
    expect(summary).toMatchObject({ block: head, payments: paid.length, head, stopped: "done" });
    expect(summary.indexed.to).toBe(head);
    // Every indexed block is within 64 of the head: none is final yet.
    expect(summary.unconfirmed).toBe(head - summary.indexed.from + 1);
    expect(stderrLines(indexed.stderr)).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "indexed blocks not final yet",
        to: head,
        unconfirmed: summary.unconfirmed,
        reorg_depth: 64,
      }),
    );

    const reported = await runMain(["report", merchant, "--data", data]);
    expect(reported.code, reported.stderr).toBe(0);
    const report = JSON.parse(reported.stdout);
    const mine = paid.filter((p) => p.payTo === merchant);
    const micros = mine.reduce((n, p) => n + p.amount, 0n);
    expect(report).toMatchObject({
      address: merchant,
      tx: mine.length,
      usd: Math.round(Number(micros) / 10_000) / 100,
      real_tx: mine.length,
      window: {
        start_block: 0,
        end_block: head,
        complete: false,
        days: Math.round(((head * 2) / 86_400) * 1e6) / 1e6,
      },
    });
    expect(mine.length).toBe(6);
    expect(report.usd).toBe(1.5);

    const board = await runMain(["leaderboard", "--data", data]);
    expect(board.code, board.stderr).toBe(0);
    expect(
      JSON.parse(board.stdout)
        .merchants.map((m: { address: string }) => m.address)
        .sort(),
    ).toEqual([merchant, other].sort());
  });

  it("index without --to-block indexes nothing, and says why instead of staying silent", async () => {
    const data = tempDir();
    const indexed = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--facilitator",
      devnet.facilitatorAccount.address,
      "--data",
      data,
    ]);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(JSON.parse(indexed.stdout)).toMatchObject({ indexed: null, unconfirmed: 0, head, payments: 0 });
    const warning = stderrLines(indexed.stderr).find((l) => l.level === "warn");
    expect(warning).toMatchObject({
      msg: "nothing indexed: no new block is final yet",
      head,
      reorg_depth: 64,
    });
    expect(String(warning?.why)).toContain(`--to-block ${head}`);
  });
});
