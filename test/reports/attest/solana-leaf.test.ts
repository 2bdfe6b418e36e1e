/**
 * Solana's leaf in a week's tree (src/reports/attest/tree.ts, issue 86 item 4): the chain's CAIP-2 id, the
 * owner's 32 bytes and the report's hash, ABI-encoded then hashed twice as OpenZeppelin's standard tree does;
 * every Solana report of a week proved against its root, and no leaf of one chain ever proving as the other's,
 * even for an owner whose 32 bytes are an EVM address's ABI word.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { type Address, getAddressEncoder, getBase58Decoder } from "@solana/kit";
import { bytesToHex, encodeAbiParameters, type Hex, keccak256 } from "viem";
import { describe, expect, it } from "vitest";
import { BASE_RECORD, POLYGON_RECORD, SOLANA_RECORD } from "../../../src/chain/chains.ts";
import {
  leafEncoding,
  provesReport,
  reportHash,
  reportLeaf,
  weekTree,
} from "../../../src/reports/attest/tree.ts";
import { solKey } from "../../helpers/solana.ts";
import { makeReport } from "../fixtures.ts";

const keyOf = (bytes: number[]) => getBase58Decoder().decode(new Uint8Array(bytes));
/** 20 bytes that are both the tail of a Solana owner below and an EVM address. */
const TAIL = Array.from({ length: 20 }, (_, i) => 0xa0 + i);
const paddedOwner = keyOf([...new Array(12).fill(0), ...TAIL]);
const evmTwin = bytesToHex(new Uint8Array(TAIL));

const solanaReport = (address: string, i = 0) =>
  makeReport({
    chain: "solana",
    address,
    name: `s${i}.example`,
    page: `https://r.test/reports/solana/${address}`,
  });
const solanaWeek = [paddedOwner, ...Array.from({ length: 20 }, (_, i) => solKey(`leaf-${i}`))].map(
  solanaReport,
);

describe("a Solana report's leaf", () => {
  it("is OpenZeppelin's standard leaf of (CAIP-2 id, the owner's 32 bytes, the report's hash)", () => {
    const report = solanaWeek[1] as (typeof solanaWeek)[number];
    const leaf = reportLeaf(report, SOLANA_RECORD);
    const owner = bytesToHex(new Uint8Array(getAddressEncoder().encode(report.address as Address)));
    expect(leaf).toEqual([SOLANA_RECORD.caip2, owner, reportHash(report)]);
    const inner = keccak256(
      encodeAbiParameters(
        [{ type: "string" }, { type: "bytes32" }, { type: "bytes32" }],
        [SOLANA_RECORD.caip2, owner, reportHash(report)],
      ),
    );
    expect(weekTree([leaf], SOLANA_RECORD).leafHash(leaf)).toBe(keccak256(inner));
  });

  it("takes the key as written: another case is another key, and not a 32-byte key is no leaf", () => {
    const report = solanaWeek[2] as (typeof solanaWeek)[number];
    const swapped = report.address.replace(/[a-z]/, (c) => c.toUpperCase());
    expect(reportLeaf({ ...report, address: swapped }, SOLANA_RECORD)[1]).not.toBe(
      reportLeaf(report, SOLANA_RECORD)[1],
    );
    for (const bad of [
      keyOf(new Array(31).fill(9)),
      "0x1111111111111111111111111111111111111111",
      "not-a-key",
    ])
      expect(() => reportLeaf({ ...report, address: bad }, SOLANA_RECORD)).toThrow(/not a Solana public key/);
    // And an EVM week's leaf takes only an EVM address.
    expect(() => reportLeaf(report, BASE_RECORD)).toThrow(/not an address/);
  });
});

describe("a Solana week's tree", () => {
  const tree = weekTree(
    solanaWeek.map((r) => reportLeaf(r, SOLANA_RECORD)),
    SOLANA_RECORD,
  );
  const root = tree.root as Hex;

  it("proves every Solana report of the week, and refuses an altered one", () => {
    for (const report of solanaWeek) {
      const proof = tree.getProof(reportLeaf(report, SOLANA_RECORD)) as Hex[];
      expect(provesReport(root, report, proof, SOLANA_RECORD), report.address).toBe(true);
      expect(provesReport(root, { ...report, real_usd: report.real_usd + 1 }, proof, SOLANA_RECORD)).toBe(
        false,
      );
    }
  });

  it("never takes a leaf of one chain for the other's, even where an untagged leaf would collide", () => {
    const solana = solanaWeek[0] as (typeof solanaWeek)[number];
    const evm = { ...solana, chain: "base", address: evmTwin };
    const hash = reportHash(solana);
    // What the tag prevents: the owner's word and the hash alone encode to the EVM leaf's very bytes.
    const untagged = StandardMerkleTree.of(
      [[bytesToHex(new Uint8Array([...new Array(12).fill(0), ...TAIL])), hash]],
      ["bytes32", "bytes32"],
    );
    const evmOfSameHash = StandardMerkleTree.of([[evmTwin, hash]], leafEncoding(BASE_RECORD));
    expect(untagged.root).toBe(evmOfSameHash.root);
    // The tagged leaf is another: the same report hash under either form proves only under its own.
    const tagged = reportLeaf(solana, SOLANA_RECORD);
    expect(StandardMerkleTree.of([tagged], leafEncoding(SOLANA_RECORD)).root).not.toBe(evmOfSameHash.root);
    expect(StandardMerkleTree.verify(evmOfSameHash.root, leafEncoding(SOLANA_RECORD), tagged, [])).toBe(
      false,
    );
    expect(
      StandardMerkleTree.verify(root, leafEncoding(BASE_RECORD), [evmTwin, hash], tree.getProof(tagged)),
    ).toBe(false);

    // Whole weeks: an EVM week's tree over the twins, each proof tried as the other chain's.
    const evmWeek = solanaWeek.map((r, i) => ({
      ...r,
      chain: "base",
      address: i === 0 ? evmTwin : `0x${(i + 1).toString(16).padStart(40, "0")}`,
    }));
    const evmTree = weekTree(
      evmWeek.map((r) => reportLeaf(r, BASE_RECORD)),
      BASE_RECORD,
    );
    const evmRoot = evmTree.root as Hex;
    for (const [i, report] of solanaWeek.entries()) {
      const proof = tree.getProof(reportLeaf(report, SOLANA_RECORD)) as Hex[];
      const evmReport = evmWeek[i] as (typeof evmWeek)[number];
      const evmProof = evmTree.getProof(reportLeaf(evmReport, BASE_RECORD)) as Hex[];
      expect(provesReport(evmRoot, report, proof, SOLANA_RECORD)).toBe(false);
      expect(provesReport(evmRoot, report, evmProof, SOLANA_RECORD)).toBe(false);
      expect(provesReport(root, evmReport, proof, BASE_RECORD)).toBe(false);
      expect(provesReport(root, evmReport, evmProof, BASE_RECORD)).toBe(false);
      // Read as an EVM chain's (Base's or Polygon's), a Solana report has no leaf at all.
      expect(provesReport(root, report, proof, BASE_RECORD)).toBe(false);
      expect(provesReport(root, report, proof, POLYGON_RECORD)).toBe(false);
    }
    expect(
      provesReport(evmRoot, evm, evmTree.getProof(reportLeaf(evm, BASE_RECORD)) as Hex[], BASE_RECORD),
    ).toBe(true);
  });
});
