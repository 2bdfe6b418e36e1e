/**
 * The `attestation` field a report of an attested week carries (schema.ts says what the attestation states):
 * apart, so that the report's schema does not load the chain code.
 */
import { z } from "zod";

const hex32 = z.string().regex(/^0x[0-9a-f]{64}$/);
const address = z.string().regex(/^0x[0-9a-f]{40}$/);

/**
 * A report's `attestation` field: where the week's attestation is (chain, EAS, its UID and transaction), who
 * made it, and the proof that takes this report's leaf (tree.ts) to the attested root. Hex is lower-case.
 */
export const AttestationFieldSchema = z
  .object({
    chain_id: z.number().int().min(1),
    eas: address,
    schema: hex32,
    uid: hex32,
    attester: address,
    tx: hex32,
    root: hex32,
    proof: z.array(hex32),
  })
  .strict();

export type AttestationField = z.infer<typeof AttestationFieldSchema>;

/**
 * A page of the flag feed of an attested week: where the attestation is, and `feed_hash`, the keccak256 of the
 * week's whole feed as `flags.ndjson` lists it (each line in RFC 8785's canonical form and a newline), which the
 * attestation states beside the reports' root.
 */
export const FeedAttestationSchema = AttestationFieldSchema.omit({ proof: true })
  .extend({ feed_hash: hex32 })
  .strict();

export type FeedAttestation = z.infer<typeof FeedAttestationSchema>;
