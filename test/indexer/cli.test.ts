import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { runMain } from "../helpers/in-process.ts";
import { GENESIS, openTempAnalytics, snapshot, startTestDevnet, tempDir } from "../helpers/indexer.ts";
import { fundedAccount, mineAll, rpc, Settler } from "../helpers/settle.ts";

const BIN = path.resolve("bin/x402-merchants");

let devnet: Devnet;
let head: number;
let facilitator: string;
let stranger: DevnetAccount;

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 4 });
  facilitator = devnet.facilitatorAccount.address;
  stranger = await fundedAccount(devnet, derive(43));
  const settler = new Settler(devnet, devnet.facilitatorAccount);
  const other = new Settler(devnet, stranger);
  // 30 blocks with two payments each, and now and then a settlement by an unknown sender.
  for (let i = 0; i < 30; i++) {
    const txs = (
      await settler.settle([
        {
          buyer: devnet.buyers[i % 4] as DevnetAccount,
          payTo: derive(100 + (i % 5)).address,
          amount: BigInt(10_000 + i),
        },
        {
          buyer: devnet.buyers[(i + 1) % 4] as DevnetAccount,
          payTo: derive(100 + (i % 3)).address,
          amount: 5_000n,
        },
      ])
    ).map((p) => p.tx);
    if (i % 10 === 3) {
      txs.push(
        ...(
          await other.settle([
            { buyer: devnet.buyers[0] as DevnetAccount, payTo: derive(100).address, amount: 1n },
          ])
        ).map((p) => p.tx),
      );
    }
    await mineAll(devnet, txs);
  }
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
});
afterAll(() => devnet?.stop());

/** Starts the CLI; resolves `line(pred)` with the first JSON stderr line matching it. */
function start(args: string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [BIN, ...args], { stdio: "pipe" });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    pred: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  let partial = "";
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    const parts = (partial + c.toString()).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { text };
      }
      lines.push(line);
      for (const w of waiters.filter((w) => w.pred(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exit,
    lines,
    stdout: () => stdout,
    line: (pred: (l: Record<string, unknown>) => boolean) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const found = lines.find(pred);
        if (found) return resolve(found);
        waiters.push({ pred, resolve });
        // Bounded by the child's exit and the test's own time, not a clock of its own: a child that starts
        // slowly on a loaded machine (its first line came after 15 s once) is not a failure.
        void exit.then(({ code }) => reject(new Error(`exited (${code}) first: ${JSON.stringify(lines)}`)));
      }),
  };
}

const indexArgs = (data: string, ...extra: string[]) => [
  "index",
  "--rpc",
  devnet.rpc,
  "--from-block",
  String(GENESIS + 1),
  "--to-block",
  String(head),
  "--facilitator",
  facilitator,
  "--batch-blocks",
  "2",
  "--data",
  data,
  ...extra,
];

describe("index command", () => {
  it("killed with SIGKILL mid-backfill and restarted, ends with exactly the rows of an uninterrupted run", async () => {
    const reference = await openTempAnalytics();
    try {
      await runIndexer({
        analytics: reference,
        rpc: { url: devnet.rpc },
        registry: FacilitatorRegistry.base().withSigners([facilitator]),
        fromBlock: GENESIS + 1,
        toBlock: head,
        batchBlocks: 2,
      });
      const expected = await snapshot(reference);
      expect(expected.payments).toHaveLength(60);
      expect(expected.candidates).toHaveLength(3);

      const data = tempDir();
      // Slowed to 20 requests a second and one batch in flight, so the kill lands mid-way.
      const first = start(indexArgs(data, "--rps", "20", "--concurrency", "1"));
      let indexed = 0;
      await first.line((l) => l.msg === "indexed" && ++indexed >= 2);
      first.child.kill("SIGKILL");
      expect((await first.exit).signal).toBe("SIGKILL");

      const killed = await Analytics.open({ dataDir: data, threads: 1 });
      const partial = await snapshot(killed);
      killed.close();
      const reached = Number((partial.checkpoint[0] as { block: string }).block);
      expect(reached).toBeGreaterThan(GENESIS);
      expect(reached).toBeLessThan(head);
      // What was committed is whole: every payment of the checkpoint's blocks, nothing past it.
      expect(partial.payments).toEqual(
        expected.payments.filter((p) => Number((p as { block_number: string }).block_number) <= reached),
      );

      // Restarted in this process: the command as a child would run it, a CPU-second sooner.
      const second = await runMain(indexArgs(data, "--rps", "0"));
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({ block: head, stopped: "done" });
      const resumed = await Analytics.open({ dataDir: data, threads: 1 });
      try {
        expect(await snapshot(resumed)).toEqual(expected);
      } finally {
        resumed.close();
      }

      // The report command reads the indexed analytics database as it reads an imported one.
      const merchant = derive(100).address.toLowerCase();
      const paidTo = (expected.payments as { pay_to: string; amount: string }[]).filter(
        (p) => p.pay_to === merchant,
      );
      const report = await runMain(["report", merchant, "--data", data]);
      expect(report.code).toBe(0);
      expect(JSON.parse(report.stdout)).toMatchObject({
        address: merchant,
        tx: paidTo.length,
        usd: Math.round(paidTo.reduce((n, p) => n + Number(p.amount), 0) / 10_000) / 100,
        window: { end_block: head, complete: true },
      });

      // The candidates of that database, as the operator sees them.
      const candidates = await runMain(["facilitators", "--candidates", "--data", data]);
      expect(candidates.code).toBe(0);
      const listed = candidates.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(listed).toEqual([
        expect.objectContaining({
          sender: stranger.address.toLowerCase(),
          settlements: 3,
          usdc: "0.000003",
          reasons: ["unknown_sender"],
        }),
      ]);
    } finally {
      reference.close();
    }
  });

  it("knows the devnet's facilitator on anvil without --facilitator", async () => {
    // The command a new user runs after `devnet`: no --facilitator, yet the devnet's settlements count.
    const data = tempDir();
    const args = indexArgs(data).filter(
      (a, i, all) => a !== "--facilitator" && all[i - 1] !== "--facilitator",
    );
    expect(args).not.toContain(facilitator);
    const { code, stdout, stderr } = await runMain(args);
    expect(code, stderr).toBe(0);
    // 30 blocks of two settlements by the devnet's facilitator; the stranger's three stay candidates.
    expect(JSON.parse(stdout)).toMatchObject({ payments: 60, candidates: 3 });
  });

  it("--follow picks up new blocks and stops cleanly on SIGTERM", async () => {
    const data = tempDir();
    await devnet.mine(1);
    // Start at an empty block: the follower sees only what this test pays.
    const now = Number(await rpc(devnet.rpc, "eth_blockNumber"));
    const follower = start([
      "index",
      "--rpc",
      devnet.rpc,
      "--from-block",
      String(now),
      "--follow",
      "--reorg-depth",
      "1",
      "--poll-ms",
      "100",
      "--facilitator",
      facilitator,
      "--data",
      data,
    ]);
    await follower.line((l) => l.msg === "caught up");
    const paid = await new Settler(devnet, devnet.facilitatorAccount).settle([
      { buyer: devnet.buyers[2] as DevnetAccount, payTo: derive(110).address, amount: 123_456n },
      { buyer: devnet.buyers[3] as DevnetAccount, payTo: derive(110).address, amount: 654_321n },
    ]);
    await mineAll(
      devnet,
      paid.map((p) => p.tx),
    );
    await devnet.mine(2);
    await follower.line((l) => l.msg === "indexed" && l.payments_total === 2);
    follower.child.kill("SIGTERM");
    expect(await follower.exit).toEqual({ code: 0, signal: null });
    expect(JSON.parse(follower.stdout())).toMatchObject({ payments: 2, stopped: "signal" });
    const analytics = await Analytics.open({ dataDir: data, threads: 1 });
    try {
      expect(
        (await analytics.all("SELECT amount FROM payments ORDER BY amount")).map((r) => r.amount),
      ).toEqual([123_456n, 654_321n]);
    } finally {
      analytics.close();
    }
  });

  it("rejects usage mistakes with exit code 2", async () => {
    const data = tempDir();
    expect((await runMain(["index", "--data", data])).stderr).toMatch(/index needs --rpc URL/);
    const bad = await runMain(["index", "--rpc", devnet.rpc, "--tx-from", "magic", "--data", data]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--tx-from must be one of auto, mixed, block, tx, trace/);
    expect(
      (await runMain(["index", "--rpc", devnet.rpc, "--facilitator", "0x12", "--data", data])).code,
    ).toBe(2);
    const past = await runMain([
      "index",
      "--rpc",
      devnet.rpc,
      "--to-block",
      String(head + 1000),
      "--data",
      data,
    ]);
    expect(past.code).toBe(2);
    expect(past.stderr).toMatch(/past the chain head/);
  });

  it("lists the known facilitator signers", async () => {
    const { code, stdout } = await runMain(["facilitators"]);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(50);
    expect(lines).toContainEqual({
      facilitator: "coinbase",
      name: "Coinbase",
      address: "0xdbdf3d8ed80f84c35d01c6c9f9271761bad90ba6",
      since: "2025-05-05",
    });
  });
});
