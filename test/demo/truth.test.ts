import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  appendTruth,
  readTruth,
  readTruthComplete,
  type TruthRecord,
  truncateTruth,
  writeTruthComplete,
} from "../../src/demo/truth.ts";

const files = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-truth-"));
  return { dir, truth: path.join(dir, "truth.ndjson"), complete: path.join(dir, "truth-complete.json") };
};
const rec = (block: number): TruthRecord => ({
  tx_hash: `0x${block.toString(16)}`,
  block_number: block,
  payer: `0x${"c".repeat(40)}`,
  pay_to: `0x${"a".repeat(40)}`,
  amount: "1000000",
  behaviour: "agent",
  merchant: "m",
  endpoint: "GET /x",
});

describe("the block up to which the truth is complete", () => {
  it("is read back as written, and replaced whole (no temporary file stays)", () => {
    const { dir, complete } = files();
    writeTruthComplete(complete, 120);
    writeTruthComplete(complete, 180);
    expect(readTruthComplete(complete)).toBe(180);
    expect(fs.readdirSync(dir)).toEqual(["truth-complete.json"]);
  });

  it("is unknown for a truth written before it existed, or a file that is not one", () => {
    const { truth, complete } = files();
    appendTruth(truth, [rec(10), rec(20)]);
    expect(readTruthComplete(complete)).toBeUndefined();
    // The old truth file itself reads as it did.
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20]);
    fs.writeFileSync(complete, '{"complete_to_block": "soon"}');
    expect(readTruthComplete(complete)).toBeUndefined();
    fs.writeFileSync(complete, '{"complete_to');
    expect(readTruthComplete(complete)).toBeUndefined();
  });

  it("moves back with the records when a chain is restored from an older save", () => {
    const { truth, complete } = files();
    appendTruth(truth, [rec(10), rec(20), rec(30)]);
    writeTruthComplete(complete, 30);
    expect(truncateTruth(truth, 25, complete)).toBe(1);
    expect(readTruthComplete(complete)).toBe(25);
    // Never forward: a truth complete to 25 is not complete to a later head.
    truncateTruth(truth, 40, complete);
    expect(readTruthComplete(complete)).toBe(25);
  });
});
