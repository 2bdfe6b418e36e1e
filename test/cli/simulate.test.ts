/**
 * `simulate --check` on a store whose latest block is ahead of the ground truth, as it is while the demo
 * runs (the indexer stores a block as it is mined, the simulator writes its truth after the payments
 * settled): the check compares the window the truth covers, on its own and beside a running server.
 * The commands that end on their own run in this process (runMain), a CPU-second less each, the check beside
 * the server too: the server is the child process, so the store is held by another process all the same
 * (the check finds it busy and asks the server over HTTP).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appendTruth, type TruthRecord, writeTruthComplete } from "../../src/demo/truth.ts";
import { addr, checkpoint, END, ndjsonFile, payment } from "../helpers/data.ts";
import { runMain } from "../helpers/in-process.ts";
import { startCli } from "../helpers/process.ts";

const m1 = addr("simulate-m1");
const m2 = addr("simulate-m2");
/** Where the truth is complete: the store holds blocks up to END. */
const COMPLETE = END - 500;

/** A demo's data directory: the store, and a truth that covers it up to COMPLETE. */
async function demoData(): Promise<string> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-simulate-"));
  const paid = [
    ...[1, 2, 3, 4, 5, 6].map((i) =>
      payment({
        payer: addr(`sim-buyer${i}`),
        payTo: m1,
        amount: 1_000_000 + 10_000 * i,
        block: END - 3000 + i,
      }),
    ),
    ...[1, 2, 3, 4].map((i) =>
      payment({ payer: addr(`sim-buyer${i}`), payTo: m2, amount: 500_000, block: END - 2000 + i }),
    ),
    // Indexed, but past the block the truth is complete to: the simulator has not written them yet.
    payment({ payer: addr("sim-buyer1"), payTo: m1, amount: 3_000_000, block: END - 100 }),
    payment({ payer: addr("sim-buyer2"), payTo: m2, amount: 3_000_000, block: END - 50 }),
  ];
  expect((await runMain(["import", ndjsonFile([...paid, checkpoint()]), "--data", data])).code).toBe(0);
  const demo = path.join(data, "demo");
  fs.mkdirSync(demo);
  const truth: TruthRecord[] = paid
    .filter((p) => p.block_number <= COMPLETE)
    .map((p) => ({
      tx_hash: p.tx_hash,
      block_number: p.block_number,
      payer: p.payer,
      pay_to: p.pay_to,
      amount: p.amount,
      behaviour: "agent",
      merchant: p.pay_to === m1 ? "m1" : "m2",
      endpoint: "GET /x",
    }));
  appendTruth(path.join(demo, "truth.ndjson"), truth);
  writeTruthComplete(path.join(demo, "truth-complete.json"), COMPLETE);
  return data;
}

describe("simulate --check", () => {
  it("checks clean when the truth is complete to a block behind the latest indexed one", async () => {
    const data = await demoData();
    const alone = await runMain(["simulate", "--check", "--json", "--data", data]);
    expect(alone.stderr).toBe("");
    const result = JSON.parse(alone.stdout);
    expect(result).toMatchObject({ ok: true, truth_complete_to_block: COMPLETE });
    expect(result.window.end_block).toBe(COMPLETE);
    expect(result.merchants.map((m: { address: string; usd: number }) => [m.address, m.usd])).toEqual([
      [m1, 6.21],
      [m2, 2],
    ]);
    expect(alone.code).toBe(0);

    // Beside the demo's report service, which holds the store: the same check, asked over HTTP.
    const serve = startCli(["serve", "--port", "0", "--data", data]);
    await serve.line;
    expect(await runMain(["simulate", "--check", "--json", "--data", data])).toEqual(alone);
  }, 120_000);

  it("stops at a damaged ground truth with one line naming the file and line, and never changes it", async () => {
    const data = await demoData();
    const truth = path.join(data, "demo", "truth.ndjson");
    const complete = path.join(data, "demo", "truth-complete.json");
    const whole = fs.readFileSync(truth, "utf8");
    const lines = whole.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(10);
    const check = async (text: string) => {
      fs.writeFileSync(truth, text);
      const result = await runMain(["simulate", "--check", "--json", "--data", data]);
      // A reader: the file is as it found it.
      expect(fs.readFileSync(truth, "utf8")).toBe(text);
      expect(result.stdout).toBe("");
      expect(result.code).toBe(1);
      expect(result.stderr.split("\n")).toHaveLength(2);
      return result.stderr;
    };

    // The last record cut short (a full disk; a power cut that kept the mark but not the append): its
    // block is inside the window, and read without it the check blamed m2's report.
    const lastCut = `${lines.slice(0, 9).join("\n")}\n${lines[9]?.slice(0, 70)}`;
    expect(await check(lastCut)).toBe(
      `x402-merchants: ${truth} line 10 is cut short (a crash or a full disk while the demo wrote it): the ground truth lacks that line's payment, for which the check could blame the reports; starting the demo again drops the line (the demo wrote it)\n`,
    );
    // A line cut short that later appends ran into: two records lost in the middle.
    const middle = [...lines.slice(0, 2), `${lines[2]?.slice(0, 50)}${lines[3]}`, ...lines.slice(4)];
    expect(await check(`${middle.join("\n")}\n`)).toMatch(
      new RegExp(
        `^x402-merchants: ${truth} line 3 is not a ground-truth record \\(.+\\): the check would count the payments it lost as report errors; restore the file, or start the demo afresh \\(npm start -- --fresh\\)\n$`,
      ),
    );
    // The mark, damaged: the check would not know where its window ends.
    fs.writeFileSync(complete, '{"complete_to_bl');
    expect(await check(whole)).toMatch(
      new RegExp(
        `^x402-merchants: ${complete} is damaged \\(.+\\): the check cannot tell where the ground truth ends`,
      ),
    );
  }, 120_000);

  it("compares up to the latest indexed block when the truth does not say (an older demo's)", async () => {
    const data = await demoData();
    fs.rmSync(path.join(data, "demo", "truth-complete.json"));
    const { code, stdout } = await runMain(["simulate", "--check", "--data", data]);
    // The payments indexed past the truth are counted against it: what the check did before.
    expect(stdout).toContain(`blocks ${END - 302_400 + 1} to ${END}`);
    expect(stdout).toMatch(/reported \$9\.21 but the simulator paid \$6\.21/);
    expect(code).toBe(1);
  }, 120_000);
});
