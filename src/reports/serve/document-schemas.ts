/**
 * The schemas of the report service's other JSON documents (the evidence, a leaderboard page, a search, a
 * page of the flag feed, a wallet's history), built from the report's own (`ReportSchema`, served at
 * /v1/schema/report.json): a field the report has is the report's schema of it, so the documents cannot
 * drift from the report in what an address, an amount or a window is. The MCP tools declare them as their output schemas (src/reports/serve/mcp.ts), and the
 * SDK checks every answer against them.
 *
 * Each schema's type is checked against the type the service builds the document as (`Fits` below): a
 * field the document gains without the schema fails the type-check, one the schema lacks fails at run time
 * (the schemas are strict).
 */

import { z } from "zod";
import { FeedAttestationSchema } from "../attest/field.ts";
import type {
  EvidenceDocument,
  FlagFeedDocument,
  LeaderboardDocument,
  SealedWeeksDocument,
  SearchDocument,
  WalletHistory,
} from "../model.ts";
import { ReportSchema } from "../schema.ts";
import { FLAG_KINDS } from "../screens/index.ts";

const R = ReportSchema.shape;
/** A count, as the report's are. */
const count = R.tx;
/** Dollars, as the report's figures are. */
const usd = R.usd;
const address = R.address;
/**
 * A wallet on a way or in a cluster: an address, or a wallet of another chain that a bridge's move names,
 * `address@chain` (src/reports/provenance/bridges.ts).
 */
const wayWallet = z.string().regex(/^(?:0x[0-9a-f]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})(?:@[a-z][a-z0-9-]*)?$/);
const url = R.page;
/** An ERC-8021 builder code as the indexer keeps it (src/indexer/builder-codes.ts). */
const builderCode = z.string().regex(/^[a-z0-9_]{1,32}$/);

/** What every document of a window states first, as the report does. */
const windowed = {
  chain: R.chain,
  generated_at: R.generated_at,
  license: R.license,
  window: R.window,
};

/** A merchant on the leaderboard: its report's figures under the report's names. */
export const LeaderboardEntrySchema = z
  .object({
    rank: R.rank_by_real_revenue.unwrap(),
    address,
    name: R.name,
    real_usd: R.real_usd,
    usd: R.usd,
    real_tx: R.real_tx,
    tx: R.tx,
    real_buyers: R.real_buyers,
    buyers: R.buyers,
    page: R.page,
  })
  .strict();

/** A merchant of the window without a rank, and why (src/reports/week/rank.ts). */
export const UnrankedEntrySchema = LeaderboardEntrySchema.omit({ rank: true })
  .extend({ reason: z.enum(["held", "no_passing_payment", "below_one_cent"]) })
  .strict();

const page = z.number().int().min(1);

/** A page of `/v1/leaderboard/base`. */
export const LeaderboardDocumentSchema = z
  .object({
    ...windowed,
    totals: z.object({ merchants: count, ranked: count, unranked: count }).strict(),
    page: z
      .object({
        number: page,
        size: page,
        pages: page,
        previous: url.nullable(),
        next: url.nullable(),
      })
      .strict(),
    merchants: z.array(LeaderboardEntrySchema),
    unranked: z.array(UnrankedEntrySchema),
  })
  .strict();

/** A listing as the report states it (`bazaar_listings`). */
const listing = R.bazaar_listings.element.shape;

/** What `/v1/search/base` answers (src/reports/week/search.ts). */
export const SearchDocumentSchema = z
  .object({
    ...windowed,
    query: z.string(),
    totals: z.object({ merchants: count, listings: count }).strict(),
    merchants: z.array(LeaderboardEntrySchema),
    unranked: z.array(UnrankedEntrySchema),
    listings: z.array(
      z
        .object({
          pay_to: address,
          resource: listing.resource,
          method: z.string(),
          price_usd: listing.price_usd,
          description: listing.description,
          page: url.nullable(),
        })
        .strict(),
    ),
  })
  .strict();

/** A time of the evidence: "2026-11-21T09:00:00Z" (empty when nothing is known). */
const time = z.string();
const hash = z.string();

/** One flagged wallet of the evidence (`EvidenceWallet`, src/reports/model.ts). */
const EvidenceWalletSchema = z
  .object({
    wallet: address,
    tx: count,
    usd,
    rule: z.string(),
    payments: z
      .object({
        count,
        common_usd: usd,
        common_count: count,
        first: time,
        last: time,
        median_interval_seconds: z.number().nullable(),
        shown: z.array(z.object({ tx_hash: hash, block: count, time, usd }).strict()),
      })
      .strict(),
    provenance: z
      .object({ paid_usd: usd, merchant_usd: usd, merchant_share: z.number(), transfers: count })
      .strict()
      .optional(),
    cluster: z
      .object({
        id: z.string(),
        wallets: count,
        links: z.array(
          z
            .object({
              wallet: wayWallet,
              linked: wayWallet,
              rule: z.enum(["funding", "first_funder", "behaviour"]),
              strong: z.boolean(),
              share: z.number().min(0).max(1).optional(),
              chance: z.number().min(0).max(1).optional(),
            })
            .strict(),
        ),
        links_total: count,
      })
      .strict()
      .optional(),
    funding_path: z
      .array(
        z
          .object({
            from: wayWallet,
            to: wayWallet,
            block: count,
            time: time.nullable(),
            usd,
            tx_hash: hash.nullable(),
            hub_return: z
              .object({ span_seconds: z.number().positive(), chance: z.number().min(0).max(1) })
              .strict()
              .optional(),
          })
          .strict(),
      )
      .optional(),
    ring: z
      .object({
        returned_usd: usd,
        sent_usd: usd,
        cycle: z
          .object({
            wallets_in_component: count,
            moves: count,
            steps: z.array(
              z
                .object({
                  from: address,
                  to: address,
                  usd,
                  by: z.enum(["x402", "transfer"]),
                  first_block: count,
                  last_block: count,
                })
                .strict(),
            ),
          })
          .strict()
          .nullable(),
      })
      .strict()
      .optional(),
    prober: z
      .object({ merchants: count, light_merchants: count, payments_to_this_merchant: count })
      .strict()
      .optional(),
    tiny: z
      .object({
        price_usd: usd.nullable(),
        price_source: z.enum(["listed", "paid"]).nullable(),
        tiny_max_usd: usd,
        exact_tiny_max_usd: usd.optional(),
        tiny_payments: count,
        cluster_tiny_payments: count,
      })
      .strict()
      .optional(),
  })
  .strict();

/** What `/v1/reports/base/{address}/evidence` answers (src/reports/week/evidence-document.ts). */
export const EvidenceDocumentSchema = z
  .object({
    schema_version: R.schema_version,
    chain: R.chain,
    address,
    name: R.name,
    generated_at: R.generated_at,
    license: R.license,
    window: R.window,
    report: url,
    page: url,
    screens: url,
    methodology: R.methodology,
    flags: z.array(
      z
        .object({
          kind: z.enum(FLAG_KINDS as [string, ...string[]]),
          summary: z.string(),
          tx: count,
          usd,
          wallets: z.array(EvidenceWalletSchema),
          more_wallets: z.object({ wallets: count, tx: count, usd }).strict().nullable(),
        })
        .strict(),
    ),
    flag_feed: z.object({ wallets: count, url }).strict(),
    apps: z
      .object({
        caveat: z.string(),
        apps: z.array(z.object({ app: builderCode, tx: count, usd }).strict()),
        none: z.object({ tx: count, usd }).strict(),
      })
      .strict(),
  })
  .strict();

const kind = z.enum(FLAG_KINDS as [string, ...string[]]);
const block = R.window.shape.end_block;

/** Which version of the screens made the figures, and its changelog: the report's own field. */
const methodology = R.methodology;

/** A flagged wallet at one merchant under one screen (`FlaggedAt`, src/reports/model.ts). */
const FlaggedAtSchema = z
  .object({
    address,
    name: R.name,
    kind,
    reason: z.string(),
    tx: count,
    usd,
    evidence: url,
    apps: z.array(builderCode),
  })
  .strict();

/** A wallet's flags in one window, at every merchant (`FlaggedWallet`). */
const flaggedWallet = {
  cluster: address.nullable(),
  tx: count,
  usd,
  first_block: block,
  last_block: block,
  methodology_version: z.string(),
  merchants: z.array(FlaggedAtSchema),
};

/** A page of `/v1/flags/base` (src/reports/week/flags.ts). */
export const FlagFeedDocumentSchema = z
  .object({
    ...windowed,
    methodology,
    merchant: address.nullable(),
    totals: z.object({ wallets: count, tx: count, usd }).strict(),
    page: LeaderboardDocumentSchema.shape.page,
    wallets: z.array(z.object({ wallet: address, ...flaggedWallet }).strict()),
    apps_caveat: z.string(),
    attestation: FeedAttestationSchema.optional(),
  })
  .strict();

/** What `/v1/wallets/base/{address}` answers: the stored windows in which the wallet was flagged. */
export const WalletHistorySchema = z
  .object({
    chain: R.chain,
    license: R.license,
    wallet: address,
    methodology,
    weeks: z.array(z.object({ window: R.window, generated_at: R.generated_at, ...flaggedWallet }).strict()),
    apps_caveat: z.string(),
  })
  .strict();

/** What `/v1/weeks/base` answers: the sealed weeks, newest first, each with its attestation once mined. */
export const SealedWeeksDocumentSchema = z
  .object({
    chain: R.chain,
    weeks: z.array(
      z
        .object({
          end_block: R.window.shape.end_block,
          start_block: R.window.shape.start_block,
          methodology: z.string(),
          root: z.string().regex(/^0x[0-9a-f]{64}$/),
          reports: count,
          sealed_at: R.generated_at,
          dataset: url,
          attestation: z
            .object({
              uid: z.string().regex(/^0x[0-9a-f]{64}$/),
              tx: z.string().regex(/^0x[0-9a-f]{64}$/),
              attester: address,
              chain_id: z.number().int().positive(),
              attested_at: R.generated_at,
            })
            .strict()
            .nullable(),
          conflict_uid: z.string().nullable(),
        })
        .strict(),
    ),
  })
  .strict();

/** True when a schema's documents are documents of type `T`: each field the type requires is declared. */
type Fits<S extends z.ZodType, T> = z.infer<S> extends T ? true : false;
const fits: [
  Fits<typeof LeaderboardDocumentSchema, LeaderboardDocument>,
  Fits<typeof SearchDocumentSchema, SearchDocument>,
  Fits<typeof EvidenceDocumentSchema, EvidenceDocument>,
  Fits<typeof FlagFeedDocumentSchema, FlagFeedDocument>,
  Fits<typeof WalletHistorySchema, WalletHistory>,
  Fits<typeof SealedWeeksDocumentSchema, SealedWeeksDocument>,
] = [true, true, true, true, true, true];
void fits;
