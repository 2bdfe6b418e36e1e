import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  appendTruth,
  readTruth,
  readTruthComplete,
  repairTruth,
  scanTruth,
  TruthError,
  type TruthRecord,
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

  it("is unknown for a truth written before it existed", () => {
    const { truth, complete } = files();
    appendTruth(truth, [rec(10), rec(20)]);
    expect(readTruthComplete(complete)).toBeUndefined();
    // The old truth file itself reads as it did.
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20]);
  });

  it("is damage, not unknown, in a file that does not say: unknown would move the check's window", () => {
    const { complete } = files();
    for (const text of ['{"complete_to_block": "soon"}', '{"complete_to', "", "null"]) {
      fs.writeFileSync(complete, text);
      expect(() => readTruthComplete(complete)).toThrow(TruthError);
      expect(() => readTruthComplete(complete)).toThrow(`${complete} is damaged`);
    }
  });

  it("moves back with the records when a chain is restored from an older save", () => {
    const { truth, complete } = files();
    appendTruth(truth, [rec(10), rec(20), rec(30)]);
    writeTruthComplete(complete, 30);
    expect(repairTruth(truth, 25, complete)).toEqual({ dropped: 1, completeTo: 30 });
    expect(readTruthComplete(complete)).toBe(25);
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20]);
    // Never forward: a truth complete to 25 is not complete to a later head.
    repairTruth(truth, 40, complete);
    expect(readTruthComplete(complete)).toBe(25);
  });
});

/** A truth file of whole records, then `tail` (a line cut short, or damage) appended as is. */
const withTail = (tail: string) => {
  const f = files();
  appendTruth(f.truth, [rec(10), rec(20), rec(30)]);
  fs.appendFileSync(f.truth, tail);
  return f;
};
/** The first `n` characters of a record's line, as a crash during the append leaves it. */
const cut = (block: number, n: number) => JSON.stringify(rec(block)).slice(0, n);
const thrown = (fn: () => unknown): TruthError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof TruthError) return error;
    throw error;
  }
  throw new Error("no TruthError");
};

describe("reading the truth", () => {
  it("stops at a last line cut short, naming the file and line, instead of skipping its payment", () => {
    // Cut after the block number and before the amount, and one character short of whole.
    for (const n of [40, JSON.stringify(rec(40)).length - 1]) {
      const { truth } = withTail(cut(40, n));
      const error = thrown(() => readTruth(truth));
      expect(error.message).toBe(
        `${truth} line 4 is cut short (a crash or a full disk while the demo wrote it)`,
      );
      expect(error).toMatchObject({ file: truth, line: 4, torn: true });
    }
  });

  it("stops at a damaged line in the middle, naming it", () => {
    const { truth } = withTail(`${cut(40, 50)}${JSON.stringify(rec(50))}\n${JSON.stringify(rec(60))}\n`);
    const error = thrown(() => readTruth(truth));
    expect(error).toMatchObject({ file: truth, line: 4, torn: false });
    expect(error.message).toMatch(new RegExp(`^${truth} line 4 is not a ground-truth record \\(.+\\)$`));
    // Whole JSON that is not a record is damage too: the check would read its amount as nothing.
    const other = withTail(`${JSON.stringify({ ...rec(40), amount: 12 })}\n`);
    expect(thrown(() => readTruth(other.truth)).message).toMatch(
      /line 4 is not a ground-truth record \(amount: /,
    );
    const nul = withTail(`${"\0".repeat(64)}\n${JSON.stringify(rec(40))}\n`);
    expect(thrown(() => readTruth(nul.truth))).toMatchObject({ line: 4, torn: false });
  });

  it("reads a whole last record without its newline, and blank lines, as before", () => {
    const { truth } = withTail(`\n${JSON.stringify(rec(40))}`);
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20, 30, 40]);
    expect(scanTruth(truth)).toMatchObject({ unterminated: true });
  });
});

describe("the demo's repair on resume", () => {
  it("drops a last line cut short and says which, keeping every whole record byte for byte", () => {
    const { truth, complete } = withTail(cut(40, 60));
    writeTruthComplete(complete, 30);
    const whole = fs.readFileSync(truth, "utf8").split("\n").slice(0, 3).join("\n");
    expect(repairTruth(truth, 100, complete)).toEqual({ dropped: 0, torn: 4, completeTo: 30 });
    expect(fs.readFileSync(truth, "utf8")).toBe(`${whole}\n`);
    // The next append starts a line of its own.
    appendTruth(truth, [rec(50)]);
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20, 30, 50]);
  });

  it("ends a whole last record with its newline, so the next append does not run into it", () => {
    const { truth } = withTail(JSON.stringify(rec(40)));
    expect(repairTruth(truth, 100)).toEqual({ dropped: 0 });
    appendTruth(truth, [rec(50)]);
    expect(readTruth(truth).map((r) => r.block_number)).toEqual([10, 20, 30, 40, 50]);
  });

  it("refuses damage in the middle, and a damaged mark, changing nothing", () => {
    const { truth, complete } = withTail(`{"tx_hash":\n${JSON.stringify(rec(40))}\n`);
    writeTruthComplete(complete, 30);
    const before = fs.readFileSync(truth);
    expect(thrown(() => repairTruth(truth, 25, complete))).toMatchObject({ line: 4, torn: false });
    expect(fs.readFileSync(truth)).toEqual(before);
    expect(readTruthComplete(complete)).toBe(30);

    const marked = withTail("");
    fs.writeFileSync(marked.complete, "{");
    const whole = fs.readFileSync(marked.truth);
    expect(thrown(() => repairTruth(marked.truth, 25, marked.complete)).file).toBe(marked.complete);
    expect(fs.readFileSync(marked.truth)).toEqual(whole);
  });
});
