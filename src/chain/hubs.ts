/**
 * The known exchange and bridge wallets on a chain (each chain's list is its record's, `chains.ts`): money that passes through them is many unrelated people's,
 * so the report's clusters never take one for a common funder (docs/screens.md, "Clusters and hubs").
 *
 * `base-hubs.json` is the repository's list, each entry with the public source of its label; an operator
 * adds labels of its own by importing `hub` records (docs/import.md), which the report reads beside it.
 */
import { z } from "zod";
import { type AnyChainRecord, BASE_RECORD } from "./chains.ts";
import { SOLANA_ADDRESS } from "./solana/constants.ts";

const HubSchema = z.object({
  // Solana's keys are base58 and case-sensitive, kept as written; EVM addresses lower-case.
  address: z
    .string()
    .refine(
      (a) => /^0x[0-9a-f]{40}$/.test(a) || SOLANA_ADDRESS.test(a),
      "a lower-case address (0x and 40 hex digits) or a base58 public key",
    ),
  label: z.string().min(1),
  kind: z.enum(["exchange", "bridge"]),
  source: z.url({ protocol: /^https?$/ }),
});

export type KnownHub = z.infer<typeof HubSchema>;

/** A chain's labelled hubs, from its record's list; throws on a bad entry (a bug in the file). */
export function hubsOf(chain: Pick<AnyChainRecord, "hubs">): readonly KnownHub[] {
  return z.object({ entries: z.array(HubSchema) }).parse(chain.hubs).entries;
}

/** The repository's labelled hubs on Base (validated once, at load: a bad entry is a bug in the file). */
export const KNOWN_HUBS: readonly KnownHub[] = hubsOf(BASE_RECORD);
