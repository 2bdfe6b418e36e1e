/**
 * The Merkle tree a week's attestation on Base commits to (issue 55, item 3): one leaf per merchant report, so
 * that any single report is proved against the attested root with a short path. One tree a chain and week, as
 * each chain's week is attested apart (schema.ts).
 *
 * An EVM chain's leaf is (address, keccak256 of the report's canonical JSON without its `attestation` field):
 * the report's own bytes as served vary with whitespace and key order no reader should have to reproduce, so
 * the hash is over RFC 8785's canonical form, which any language can compute from the parsed report. Solana's
 * owners are 32-byte keys, no EVM `address`, so its leaf is (the chain's CAIP-2 id, the owner's 32 bytes, the
 * report's hash) (issue 86, item 4): it names its chain, and its ABI encoding (192 bytes: the string's offset,
 * the key, the hash, the string's length and its text) is never the 64 bytes of an EVM leaf's, so no EVM leaf
 * and no Solana leaf hash alike but by a keccak256 collision. The tree is OpenZeppelin's standard one (sorted
 * pairs, leaves double-hashed), whose proofs Solidity's `MerkleProof` and every OpenZeppelin library verify as
 * they are.
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { bytesToHex, type Hex, keccak256, stringToBytes } from "viem";
import { type AnyChainRecord, isSolana } from "../../chain/chains.ts";
import { solanaKeyBytes } from "../../chain/solana/base58.ts";

/** The report field its proof travels in: not part of the leaf, which it proves. */
export const PROOF_FIELD = "attestation";

/** The chain a week is of: what its reports' leaves are. */
export type LeafChain = Pick<AnyChainRecord, "slug" | "caip2">;

/** How an EVM chain's leaf is ABI-encoded before it is hashed: as every week was attested since issue 55. */
const EVM_LEAF_ENCODING = ["address", "bytes32"];
/** How Solana's leaf is: the chain's CAIP-2 id first, then the owner's key and the report's hash. */
const SOLANA_LEAF_ENCODING = ["string", "bytes32", "bytes32"];

export type EvmLeaf = [address: string, reportHash: Hex];
export type SolanaLeaf = [chain: string, owner: Hex, reportHash: Hex];
export type Leaf = EvmLeaf | SolanaLeaf;

/** The ABI types of `chain`'s leaves. */
export function leafEncoding(chain: LeafChain): string[] {
  return isSolana(chain) ? SOLANA_LEAF_ENCODING : EVM_LEAF_ENCODING;
}

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

/**
 * The leaf of one merchant's report of a week of `chain`; throws when its address is not of the chain's form
 * (0x and 40 hex digits; on Solana, base58 of 32 bytes).
 */
export function reportLeaf(
  report: Readonly<Record<string, unknown> & { address: string }>,
  chain: LeafChain,
): Leaf {
  const hash = reportHash(report);
  if (!isSolana(chain)) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(report.address)) throw new Error(`not an address: "${report.address}"`);
    return [report.address.toLowerCase(), hash];
  }
  const owner = solanaKeyBytes(report.address);
  if (!owner) throw new Error(`not a Solana public key (base58 of 32 bytes): "${report.address}"`);
  return [chain.caip2, bytesToHex(owner), hash];
}

/**
 * The tree over a week's leaves, all of `chain` (any order: the tree sorts them, so the root depends on the set
 * only).
 */
export function weekTree(leaves: readonly Leaf[], chain: LeafChain): StandardMerkleTree<Leaf> {
  if (leaves.length === 0) throw new Error("a week without reports has nothing to attest");
  return StandardMerkleTree.of([...leaves], leafEncoding(chain), { sortLeaves: true });
}

/**
 * Whether `proof` takes the report's leaf, as a report of `chain`, to `root`. A report whose address is not of
 * the chain's form has no leaf of it, and proves nothing.
 */
export function provesReport(
  root: Hex,
  report: Readonly<Record<string, unknown> & { address: string }>,
  proof: readonly Hex[],
  chain: LeafChain,
): boolean {
  let leaf: Leaf;
  try {
    leaf = reportLeaf(report, chain);
  } catch {
    return false;
  }
  return StandardMerkleTree.verify(root, leafEncoding(chain), leaf, [...proof]);
}
