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
import { BASE_RECORD, type ChainRecord } from "./chains.ts";

const ADDRESS = /^0x[0-9a-f]{40}$/;
/** The facilitator id of signers the operator adds (`--facilitator`). */
const OPERATOR = "operator";
const address = z
  .string()
  .transform((a) => a.toLowerCase())
  .pipe(z.string().regex(ADDRESS, "an address: 0x and 40 hex digits"));

const FileSchema = z.object({
  chain: z.string(),
  chain_id: z.number(),
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
  ) {}

  /** The bundled Base registry. */
  static base(): FacilitatorRegistry {
    return FacilitatorRegistry.forChain(BASE_RECORD);
  }

  /** The bundled registry of a chain (its record's list). */
  static forChain(chain: ChainRecord): FacilitatorRegistry {
    return FacilitatorRegistry.parse(chain.facilitators, chain);
  }

  /** A registry from a file of the shared format for `chain` (Base unless said); throws on a malformed one. */
  static parse(
    json: unknown,
    chain: Pick<ChainRecord, "slug" | "chainId"> = BASE_RECORD,
  ): FacilitatorRegistry {
    const file = FileSchema.parse(json);
    if (file.chain !== chain.slug || file.chain_id !== chain.chainId) {
      throw new Error(
        `a facilitator registry of ${file.chain} (chain ${file.chain_id}) given for ${chain.slug} (chain ${chain.chainId})`,
      );
    }
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
    return new FacilitatorRegistry(signers, unconfirmed);
  }

  /** A copy with extra signers (any case) valid from time 0, named "operator". */
  withSigners(addresses: readonly string[], name = "given with --facilitator"): FacilitatorRegistry {
    const signers = new Map(this.signers);
    for (const raw of addresses) {
      const a = raw.toLowerCase();
      if (!ADDRESS.test(a)) throw new Error(`not an address: "${raw}"`);
      signers.set(a, { address: a, facilitator: OPERATOR, name, since: 0 });
    }
    return new FacilitatorRegistry(signers, this.unconfirmed);
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
    return this.signers.get(address.toLowerCase());
  }

  /** The label of an unconfirmed sender, if the registry lists it. */
  unconfirmedLabel(address: string): string | undefined {
    return this.unconfirmed.get(address.toLowerCase());
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
