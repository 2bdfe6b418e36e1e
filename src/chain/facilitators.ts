/**
 * The registry of x402 facilitators on a chain: which EOAs send their `transferWithAuthorization`
 * transactions, and from which day each one settles. Each chain's list is its record's (`chains.ts`);
 * Base's is the one the indexer reads today.
 *
 * `base-facilitators.json` is a verbatim copy of the project's shared data file
 * (`shared/data/base-facilitators.json`, sha256 289dcda5…6ea53525 when copied), itself compiled from
 * public registries (x402scan's facilitators package at its 2026-06-30 snapshot, DefiLlama's x402
 * adapter, later pull requests); its `about` field says so. Update it by copying the shared file again.
 *
 * The list always trails reality, so the indexer keeps settlements sent by other addresses as
 * candidates instead of dropping them (see `src/indexer/settlements.ts`).
 */
import { z } from "zod";
import { type AnyChainRecord, BASE_RECORD, isSolana } from "./chains.ts";
import { SOLANA_ADDRESS } from "./solana/constants.ts";

const ADDRESS = /^0x[0-9a-f]{40}$/;
/** The facilitator id of signers the operator adds (`--facilitator`). */
const OPERATOR = "operator";
// An EVM address in any case, kept lower-case; a Solana key (base58, case-sensitive) kept as written.
const address = z
  .string()
  .transform((a) => (a.startsWith("0x") || a.startsWith("0X") ? a.toLowerCase() : a))
  .refine((a) => ADDRESS.test(a) || SOLANA_ADDRESS.test(a), "an address: 0x and 40 hex digits, or base58");

const FileSchema = z.object({
  chain: z.string(),
  /** An EVM chain's id; Solana's registry names its CAIP-2 `network` instead. */
  chain_id: z.number().optional(),
  network: z.string().optional(),
  facilitators: z.array(
    z.object({
      id: z.string().min(1),
      name: z.string().min(1),
      urls: z.array(z.string()),
      /** Where the entry comes from, when the file's `about` does not say it for every entry. */
      source: z.url({ protocol: /^https$/ }).optional(),
      addresses: z.array(z.object({ address, since: z.iso.date() })),
    }),
  ),
  unconfirmed_senders: z.array(z.object({ address, label: z.string() })).default([]),
});

/** One signer: an EOA that settles for a facilitator from `since` (unix seconds, 00:00 UTC of its day). */
export interface FacilitatorSigner {
  address: string;
  facilitator: string;
  name: string;
  since: number;
}

/** What the registry says about the sender of a settlement at a block time. */
export type SenderVerdict =
  | { known: true; signer: FacilitatorSigner }
  | { known: false; reason: "unknown_sender" | "before_since"; label?: string };

/**
 * Known facilitator signers, plus extra signers given by the operator (valid from the first block).
 *
 * @example
 *   const registry = FacilitatorRegistry.base().withSigners(["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"]);
 *   registry.judge(txFrom, blockTime); // { known: true, signer } or { known: false, reason }
 */
export class FacilitatorRegistry {
  private constructor(
    private readonly signers: ReadonlyMap<string, FacilitatorSigner>,
    /** Senders seen settling but not confirmed as facilitators: their settlements stay candidates, with this label. */
    private readonly unconfirmed: ReadonlyMap<string, string>,
    /** Solana's registry: its keys are case-sensitive, never lower-cased. */
    private readonly base58 = false,
  ) {}

  /** An address as this registry keys it. */
  private key(a: string): string {
    return this.base58 ? a : a.toLowerCase();
  }

  /** The bundled Base registry. */
  static base(): FacilitatorRegistry {
    return FacilitatorRegistry.forChain(BASE_RECORD);
  }

  /** The bundled registry of a chain (its record's list). */
  static forChain(chain: AnyChainRecord): FacilitatorRegistry {
    return FacilitatorRegistry.parse(chain.facilitators, chain);
  }

  /** A registry from a file of the shared format for `chain` (Base unless said); throws on a malformed one. */
  static parse(json: unknown, chain: AnyChainRecord = BASE_RECORD): FacilitatorRegistry {
    const file = FileSchema.parse(json);
    const solana = isSolana(chain);
    const id = solana ? chain.caip2 : (chain as { chainId: number }).chainId;
    if (file.chain !== chain.slug || (solana ? file.network : file.chain_id) !== id) {
      throw new Error(
        `a facilitator registry of ${file.chain} (chain ${file.chain_id ?? file.network}) given for ${chain.slug} (chain ${id})`,
      );
    }
    for (const f of file.facilitators)
      for (const a of f.addresses)
        if (!(solana ? SOLANA_ADDRESS : ADDRESS).test(a.address))
          throw new Error(`facilitator ${f.id}: "${a.address}" is not an address of ${chain.slug}`);
    const signers = new Map<string, FacilitatorSigner>();
    for (const f of file.facilitators) {
      for (const a of f.addresses) {
        const since = Date.parse(`${a.since}T00:00:00Z`) / 1000;
        const existing = signers.get(a.address);
        // An address listed twice keeps its earliest start: the registry means "settles from then on".
        if (!existing || since < existing.since) {
          signers.set(a.address, { address: a.address, facilitator: f.id, name: f.name, since });
        }
      }
    }
    const unconfirmed = new Map(file.unconfirmed_senders.map((s) => [s.address, s.label]));
    return new FacilitatorRegistry(signers, unconfirmed, solana);
  }

  /** A copy with extra signers (any case) valid from time 0, named "operator". */
  withSigners(addresses: readonly string[], name = "given with --facilitator"): FacilitatorRegistry {
    const signers = new Map(this.signers);
    for (const raw of addresses) {
      const a = this.key(raw);
      if (!(this.base58 ? SOLANA_ADDRESS : ADDRESS).test(a)) throw new Error(`not an address: "${raw}"`);
      signers.set(a, { address: a, facilitator: OPERATOR, name, since: 0 });
    }
    return new FacilitatorRegistry(signers, this.unconfirmed, this.base58);
  }

  /** Whether `sender` (lower-case) settled as a known facilitator at `blockTime` (unix seconds). */
  judge(sender: string, blockTime: number): SenderVerdict {
    const signer = this.signers.get(sender);
    if (signer && blockTime >= signer.since) return { known: true, signer };
    const label = this.unconfirmed.get(sender);
    const reason = signer ? "before_since" : "unknown_sender";
    return label === undefined ? { known: false, reason } : { known: false, reason, label };
  }

  /** The signer entry of an address, whatever the time. */
  signer(address: string): FacilitatorSigner | undefined {
    return this.signers.get(this.key(address));
  }

  /** The label of an unconfirmed sender, if the registry lists it. */
  unconfirmedLabel(address: string): string | undefined {
    return this.unconfirmed.get(this.key(address));
  }

  /** Every signer's address (lower-case). */
  addresses(): string[] {
    return [...this.signers.keys()];
  }

  /** Every signer, ordered by facilitator then address. */
  list(): FacilitatorSigner[] {
    return [...this.signers.values()].sort(
      (a, b) => a.facilitator.localeCompare(b.facilitator) || a.address.localeCompare(b.address),
    );
  }

  /**
   * The earliest `since` of the listed signers (unix seconds): where indexing Base starts by default.
   * Signers added with `withSigners` count from time 0 but do not move it back to Base's genesis.
   */
  earliestSince(): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const s of this.signers.values()) {
      if (s.facilitator !== OPERATOR) earliest = Math.min(earliest, s.since);
    }
    return Number.isFinite(earliest) ? earliest : 0;
  }
}
