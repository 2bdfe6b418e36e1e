/**
 * The week's Merkle tree (src/reports/attest/tree.ts): RFC 8785's canonical JSON, a leaf per report that
 * its proof field and key order leave alone and any altered figure changes, and proofs that take every
 * report of a week, and only it, to the root.
 */

import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { encodeAbiParameters, keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { BASE_RECORD } from "../../../src/chain/chains.ts";
import {
  canonicalJson,
  PROOF_FIELD,
  provesReport,
  reportHash,
  reportLeaf,
  weekTree,
} from "../../../src/reports/attest/tree.ts";
import { makeReport } from "../fixtures.ts";

const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
const week = Array.from({ length: 37 }, (_, i) =>
  makeReport({
    address: address(i + 1),
    name: `m${i}.example`,
    page: `https://r.test/reports/base/${address(i + 1)}`,
  }),
);

describe("canonicalJson", () => {
  it("writes RFC 8785's own example as the RFC does", () => {
    // RFC 8785, section 3.2.2 (the input parsed as JSON.parse reads it).
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code units at every depth", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, "\u20ac": 0, "\ud83d\ude00": 0 })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1,"€":0,"😀":0}',
    );
  });
});

describe("a report's leaf", () => {
  const report = week[0] as (typeof week)[number];

  it("leaves out the proof field and does not depend on key order", () => {
    const withProof = { ...report, [PROOF_FIELD]: { uid: "0x01", proof: ["0x02"] } };
    const reordered = Object.fromEntries(Object.entries(report).reverse()) as typeof report;
    expect(reportHash(withProof)).toBe(reportHash(report));
    expect(reportHash(reordered)).toBe(reportHash(report));
  });

  it("changes with any one field", () => {
    const altered = [
      { ...report, real_usd: report.real_usd + 0.01 },
      { ...report, name: "other.example" },
      { ...report, held: !report.held },
      { ...report, window: { ...report.window, end_block: report.window.end_block + 1 } },
      { ...report, daily: report.daily.slice(1) },
      { ...report, methodology: { ...report.methodology, version: "1.3.0" } },
    ];
    for (const a of altered) expect(reportHash(a)).not.toBe(reportHash(report));
  });

  it("is OpenZeppelin's standard leaf: keccak256 of keccak256 of the ABI-encoded address and hash", () => {
    const [addr, hash] = reportLeaf(report, BASE_RECORD);
    const tree = weekTree(
      week.map((r) => reportLeaf(r, BASE_RECORD)),
      BASE_RECORD,
    );
    const inner = keccak256(
      encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [addr as `0x${string}`, hash]),
    );
    expect(tree.leafHash([addr, hash])).toBe(keccak256(inner));
  });
});

describe("the week's tree", () => {
  const tree = weekTree(
    week.map((r) => reportLeaf(r, BASE_RECORD)),
    BASE_RECORD,
  );

  it("proves every report of the week with a short path, and the root depends on the set only", () => {
    for (const [i, report] of week.entries()) {
      const proof = tree.getProof(reportLeaf(report, BASE_RECORD)) as `0x${string}`[];
      expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(week.length)));
      expect(provesReport(tree.root as `0x${string}`, report, proof, BASE_RECORD), `report ${i}`).toBe(true);
    }
    expect(
      weekTree(
        [...week].reverse().map((r) => reportLeaf(r, BASE_RECORD)),
        BASE_RECORD,
      ).root,
    ).toBe(tree.root);
    // As a verifier holds it: the dump loads back to the same root.
    expect(StandardMerkleTree.load(tree.dump()).root).toBe(tree.root);
  });

  it("refuses an altered report, another week's report, and a proof of another report", () => {
    const report = week[3] as (typeof week)[number];
    const proof = tree.getProof(reportLeaf(report, BASE_RECORD)) as `0x${string}`[];
    const root = tree.root as `0x${string}`;
    expect(provesReport(root, { ...report, real_tx: report.real_tx - 1 }, proof, BASE_RECORD)).toBe(false);
    expect(provesReport(root, week[4] as (typeof week)[number], proof, BASE_RECORD)).toBe(false);
    const other = makeReport({ address: address(999) });
    expect(provesReport(root, other, proof, BASE_RECORD)).toBe(false);
  });

  it("has nothing to attest for an empty week", () => {
    expect(() => weekTree([], BASE_RECORD)).toThrow(/nothing to attest/);
  });
});
