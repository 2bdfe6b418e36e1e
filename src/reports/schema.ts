import { z } from "zod";
import { STORED_ADDRESS, storeChains } from "../chain/chains.ts";
import { AttestationFieldSchema } from "./attest/field.ts";
import { FLAG_KINDS } from "./screens/index.ts";

/**
 * The merchant report (docs/report.md, its fields and their rules) as one zod schema: the TypeScript type, the runtime check
 * and the JSON Schema served at /v1/schema/report.json all come from here.
 */
// Two-decimal amounts; not `multipleOf(0.01)`, which binary floats fail in most JSON Schema validators.
const usd2 = z.number().min(0);
const usd = z.number().min(0);
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const utc = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+00:00$/);
const count = z.number().int().min(0);

/**
 * The x402 schemes in the order a report lists them; "unknown" for payments stored before the store kept
 * their scheme (or imported without it).
 */
export const SCHEMES = ["exact", "upto", "batch-settlement", "unknown"] as const;

export const FlagSchema = z.object({ tx: count.min(1), usd: usd2 }).strict();

export const ReportSchema = z
  .object({
    schema_version: z.literal("1"),
    generated_at: utc,
    license: z.literal("https://creativecommons.org/licenses/by/4.0/"),
    chain: z.enum(storeChains.list.map((c) => c.slug) as [string, ...string[]]),
    address: z.string().regex(STORED_ADDRESS),
    name: z.string().min(1),
    claimed: z.boolean(),
    /** The window's reports are attested on chain and never change again (docs/attestation.md). */
    frozen: z.boolean(),
    last_seen_week: date,
    rank_by_real_revenue: z.number().int().min(1).nullable(),
    window: z
      .object({
        start_block: count,
        end_block: count,
        complete: z.boolean(),
        start: utc,
        end: utc,
        days: z.number(),
      })
      .strict(),
    claim: z.string().min(1),
    tx: count,
    usd: usd2,
    real_tx: count,
    real_usd: usd2,
    buyers: count,
    real_buyers: count,
    top_buyer_share: z.number().min(0).max(1),
    flags: z.partialRecord(z.enum(FLAG_KINDS as [string, ...string[]]), FlagSchema),
    flag_note: z.string().min(1),
    exchange_flow_note: z.string().min(1).nullable(),
    paid: z.object({ median: usd, p25: usd, p75: usd, median_passing: usd }).strict(),
    bazaar_listings: z.array(
      z.object({ resource: z.url(), price_usd: usd, description: z.string().max(241) }).strict(),
    ),
    daily: z.array(z.object({ date, tx: count, usd: usd2, real_usd: usd2 }).strict()),
    page: z.url(),
    badge: z.url(),
    /**
     * Beyond the spec: the payments by x402 scheme, adding up to tx, usd, real_tx and real_usd. A
     * batch-settlement `tx` counts claims (one per channel per claim), not requests (`tx_counts`).
     */
    schemes: z.partialRecord(
      z.enum(SCHEMES),
      z
        .object({
          tx: count.min(1),
          usd: usd2,
          real_tx: count,
          real_usd: usd2,
          tx_counts: z.enum(["payments", "claims"]),
        })
        .strict(),
    ),
    /** Beyond the spec: the version of the screens' rules the figures were built under, and its changelog. */
    methodology: z.object({ version: z.string().regex(/^\d+\.\d+\.\d+$/), url: z.url() }).strict(),
    /** Beyond the spec: the operator holds the merchant out of the ranking; its figures are still reported in full. */
    held: z.boolean(),
    /** Beyond the spec: in a report of an attested week, the attestation on Base and this report's proof against its root (docs/attestation.md). */
    attestation: AttestationFieldSchema.optional(),
  })
  .strict();

export type Report = z.infer<typeof ReportSchema>;

/** The JSON Schema of the report, for /v1/schema/report.json. */
export function reportJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(ReportSchema, { target: "draft-2020-12" }),
    $id: "https://x402-merchants.dev/v1/schema/report.json",
    title: "x402 merchant payment report",
    description:
      "A weekly report of the x402 payments one merchant wallet received on one chain, with the totals that pass every screen.",
  };
}
