/**
 * The Merkle tree a week's attestation on Base commits to (issue 55, item 3; the attester that signs its
 * root is still to come): one leaf per merchant report, so that any single report is proved against the
 * attested root with a short path.
 *
 * A leaf is (address, keccak256 of the report's canonical JSON without its `attestation` field): the
 * report's own bytes as served vary with whitespace and key order no reader should have to reproduce, so
 * the hash is over RFC 8785's canonical form, which any language can compute from the parsed report. The
 * tree is OpenZeppelin's standard one (sorted pairs, leaves double-hashed), whose proofs Solidity's
 * `MerkleProof` and every OpenZeppelin library verify as they are.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { type Hex, keccak256, stringToBytes } from "viem";

/** The report field its proof travels in: not part of the leaf, which it proves. */
export const PROOF_FIELD = "attestation";

/** How a leaf is ABI-encoded before it is hashed. */
const LEAF_ENCODING = ["address", "bytes32"];

export type Leaf = [address: string, reportHash: Hex];

/**
 * RFC 8785 (JSON Canonicalization Scheme) of a parsed JSON value: object keys sorted by their UTF-16 code
 * units (JavaScript's default sort), no whitespace, numbers and strings as ECMAScript's JSON.stringify
 * writes them, which is what the RFC prescribes.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`${value} is not a JSON number`);
  return JSON.stringify(value);
}

/** keccak256 of the report's canonical JSON, its proof field left out. */
export function reportHash(report: Readonly<Record<string, unknown>>): Hex {
  const { [PROOF_FIELD]: _, ...rest } = report;
  return keccak256(stringToBytes(canonicalJson(rest)));
}

/** The leaf of one merchant's report. */
export function reportLeaf(report: Readonly<Record<string, unknown> & { address: string }>): Leaf {
  return [report.address.toLowerCase(), reportHash(report)];
}

/** The tree over a week's leaves (any order: the tree sorts them, so the root depends on the set only). */
export function weekTree(leaves: readonly Leaf[]): StandardMerkleTree<Leaf> {
  if (leaves.length === 0) throw new Error("a week without reports has nothing to attest");
  return StandardMerkleTree.of([...leaves], LEAF_ENCODING, { sortLeaves: true });
}

/** Whether `proof` takes the report's leaf to `root`. */
export function provesReport(
  root: Hex,
  report: Readonly<Record<string, unknown> & { address: string }>,
  proof: readonly Hex[],
): boolean {
  return StandardMerkleTree.verify(root, LEAF_ENCODING, reportLeaf(report), [...proof]);
}
