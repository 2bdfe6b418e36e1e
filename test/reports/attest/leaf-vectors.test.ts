/**
 * Pinned vectors of the week's tree (src/reports/attest/tree.ts), computed by the code as it was before Solana's
 * weeks were attested (commit 5be84c92): an EVM week's leaves, root and proofs must stay these bytes, or every
 * attestation already on Base and every verifier written from docs/attestation.md stops matching.
 */

import { describe, expect, it } from "vitest";
import { BASE_RECORD, SOLANA_RECORD } from "../../../src/chain/chains.ts";
import {
  canonicalJson,
  provesReport,
  reportHash,
  reportLeaf,
  weekTree,
} from "../../../src/reports/attest/tree.ts";

const pinned = (address: string, usd: number) => ({
  schema_version: "1.0",
  chain: "base",
  address,
  name: "pinned.example",
  window: { start_block: 30_000_000, end_block: 30_302_400 },
  methodology: { version: "1.9.0" },
  real_usd: usd,
  frozen: true,
});
// The second address in mixed case: the leaf takes it lower-cased, as it always has.
const reports = [
  pinned("0x1111111111111111111111111111111111111111", 12.5),
  pinned("0xAbCdEf0000000000000000000000000000000002", 3),
  pinned("0x00000000000000000000000000000000000000ff", 0.25),
];

describe("an EVM week's tree, pinned", () => {
  it("hashes, leaves and root are the bytes attested before Solana's leaf existed", () => {
    expect(canonicalJson(reports[0])).toBe(
      '{"address":"0x1111111111111111111111111111111111111111","chain":"base","frozen":true,"methodology":{"version":"1.9.0"},"name":"pinned.example","real_usd":12.5,"schema_version":"1.0","window":{"end_block":30302400,"start_block":30000000}}',
    );
    expect(reports.map(reportHash)).toEqual([
      "0x2e382279c74ff69d571d1caef603f579860861eb3f280e1573c61377153aea54",
      "0xfef4da1b4cfe6800ec0947dbf81bbfb088e344319e4ffae7bfc086a7ddfde16b",
      "0xba00875f68856c35cc885317737fed4965111dea8b58842688001b0b11072f2b",
    ]);
    const leaves = reports.map((r) => reportLeaf(r, BASE_RECORD));
    const tree = weekTree(leaves, BASE_RECORD);
    expect(leaves.map((l) => tree.leafHash(l))).toEqual([
      "0xf10fc02f4696668f4c4e76e5931963d20aefb28a5abefe5bec6a9faf5ea2959f",
      "0xb985f6111742f8ddbfb1d310fe05941f2a8b95de0409328fcce15d486536b2fc",
      "0x0b14e72fdd9c87596b7991b6eec6bd00cc21f222c4720e33de64fa34f8b8fe43",
    ]);
    expect(tree.root).toBe("0x548d9cd1e9d1383ebcbf5ae03951bdc73ee54df7c3ddb75f29085737b13280a1");
  });

  it("a proof made then still verifies", () => {
    const root = "0x548d9cd1e9d1383ebcbf5ae03951bdc73ee54df7c3ddb75f29085737b13280a1";
    const proof = ["0x62661dd2c3ff2f275f44186cd7828f2c020d21345460972e1f6264275160b53a"] as const;
    expect(provesReport(root, reports[0] as (typeof reports)[0], [...proof], BASE_RECORD)).toBe(true);
    expect(
      provesReport(
        root,
        { ...(reports[0] as (typeof reports)[0]), real_usd: 12.51 },
        [...proof],
        BASE_RECORD,
      ),
    ).toBe(false);
  });
});

describe("a Solana week's leaf, pinned", () => {
  it("names the chain, the owner's 32 bytes (USDC's mint here) and the report's hash", () => {
    const report = {
      ...pinned("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 12.5),
      chain: "solana",
      window: { start_block: 398_300_000, end_block: 400_000_000 },
    };
    const leaf = reportLeaf(report, SOLANA_RECORD);
    expect(leaf).toEqual([
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      "0xc6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61",
      "0x4e48a775a0b5598528dc8c7879fceac471ff9a01c9892ae69b5582bbbe2741d5",
    ]);
    const tree = weekTree([leaf], SOLANA_RECORD);
    expect(tree.leafHash(leaf)).toBe("0xd6fffadc381959808708686c6b1e903efde12970183b1fe51801205bfecd24a8");
    expect(provesReport(tree.root as `0x${string}`, report, [], SOLANA_RECORD)).toBe(true);
  });
});
