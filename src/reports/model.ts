/**
 * The shapes the reports' parts share, in one place: the window, a report's details with its wallets'
 * evidence facts (what the build stores and the views draw), and the documents the service answers (the
 * evidence, a page of the leaderboard, a search). The builders (week/), the views (render/) and the
 * service (serve/) take them from here, never from one another. The report's own type comes from its
 * schema (schema.ts).
 */
import type { FeedAttestation } from "./attest/field.ts";
import type { Report } from "./schema.ts";

/** The report's `window` object (docs/report.md, "Window"). */
/** A chain's slug (`src/chain/chains.ts`): "base", "polygon", "arbitrum". */
export type ChainSlug = string;

export interface ReportWindow {
  start_block: number;
  end_block: number;
  complete: boolean;
  start: string;
  end: string;
  days: number;
}

/** What the page shows beyond the report: the wallets behind each flag (the 20 largest per kind). */
export interface ReportDetails {
  /** Per flag kind, its largest wallets (at most 20), largest first. */
  flagged_wallets: Record<string, { wallet: string; tx: number; usd: number; evidence?: EvidenceFacts }[]>;
  /** Per flag kind with more wallets than that, the rest in one row. */
  more_wallets?: Record<string, { wallets: number; tx: number; usd: number }>;
  /** How many wallets any flag names (a wallet under two kinds counted once): the merchant's part of the flag feed. */
  wallets?: number;
  /** The reported and real totals in atomic units (decimal text), unrounded: cents hide small merchants' figures. */
  exact?: { amount: string; real_amount: string };
}

/** One flagged wallet's facts, as stored in the details (atomic units, block numbers); a kind's own part is null for other kinds. */
export interface EvidenceFacts {
  /** Every screen whose rule the pair meets; each payment goes to the first whose payment rule it meets. */
  screens: string[];
  /** merchant_funded: the block of the wallet's first payment paid with the merchant's money. */
  funded_from: number | null;
  /** tiny_repeat: the merchant's largest tiny amount (metered payments and those of unknown scheme). */
  tiny_max: number;
  /** tiny_repeat: the largest tiny exact payment, a share of the lowest listed price where there is one. */
  exact_tiny_max?: number;
  /** tiny_repeat: how many of the pair's tiny payments its cluster's share flagged, the earliest first. */
  tiny_n?: number;
  /**
   * merchant_funded: the transfers that took the merchant's money to the wallet, the merchant's first (past
   * 64, the first and the last 63: `provenance.hops` counts them all). A hub's payout read as the merchant's
   * deposit coming back (docs/screens.md, "Money that comes back through a hub") says the span after the
   * deposit it was read at (ms) and the null model's chance of the deposits so followed.
   */
  funding_path:
    | {
        from: string;
        to: string;
        block: number;
        amount: number;
        tx?: string;
        hub_return?: { span_ms: number; chance: number };
      }[]
    | null;
  /**
   * Of the wallet's payments to the merchant in the window, the atomic units paid with the merchant's
   * money (FIFO) and in all, and the block ranges of those flagged merchant_funded ([first, last]); null
   * when none was.
   */
  provenance: { own: number; paid: number; ranges: [number, number][]; hops: number } | null;
  /**
   * The cluster the wallet was counted in (named by its smallest address), how many wallets it has, and the
   * links that made it (the first 64 by wallet, of `links_total`); null alone.
   */
  cluster: { id: string; wallets: number; links: ClusterLinkFacts[]; links_total: number } | null;
  ring: {
    /** What came back to the wallet from inside its component, and what it sent into it. */
    returned: number;
    sent: number;
    /** How many of the pair's payments the ring's share flagged: the earliest by day, then amount. */
    flagged: number;
    /** A cycle through the payment, or null when the search gave up (a very large component). */
    cycle: {
      steps: {
        from: string;
        to: string;
        amount: number;
        paid: boolean;
        first_block: number;
        last_block: number;
      }[];
      moves: number;
      component_size: number;
    } | null;
  } | null;
  prober: { merchants: number; light_merchants: number; pair_tx: number } | null;
  tiny: {
    /** The cluster's tiny payments to the merchant, and the wallet's own. */
    tiny_tx: number;
    wallet_tiny_tx: number;
    price: number | null;
    price_source: string | null;
  } | null;
}

/** What every page of one merchant is rendered from. */
export interface MerchantDocuments {
  report: Report;
  details: ReportDetails;
  evidence: EvidenceDocument;
}

/** A window, and its merchants' documents in batches by address, read as they are asked for. */
export interface WindowBatches<T> {
  window: ReportWindow;
  batches: AsyncIterable<T[]>;
}

export interface LeaderboardEntry {
  rank: number;
  address: string;
  name: string;
  real_usd: number;
  usd: number;
  real_tx: number;
  tx: number;
  real_buyers: number;
  buyers: number;
  page: string;
}

/** Why a merchant of the window has no rank (src/reports/week/rank.ts). */
export type UnrankedReason = "held" | "no_passing_payment" | "below_one_cent";

/** A merchant of the window without a rank, listed below the ranking with the reason. */
export type UnrankedEntry = Omit<LeaderboardEntry, "rank"> & { reason: UnrankedReason };

/** Merchants a page of the leaderboard's JSON holds. */
export const LEADERBOARD_PAGE_SIZE = 1000;

/** Which page of the leaderboard, of how many merchants. */
export interface BoardPage {
  /** 1-based; default 1. */
  page?: number;
  /** Default `LEADERBOARD_PAGE_SIZE`. */
  size?: number;
}

/** A window's merchants, counted. */
export interface BoardTotals {
  merchants: number;
  ranked: number;
  unranked: number;
}

/**
 * One page of a window's leaderboard (`ReportService.leaderboard`): the ranked merchants by rank, then the
 * unranked with the reason.
 */
export interface Leaderboard {
  chain: ChainSlug;
  generated_at: string;
  license: string;
  window: ReportWindow;
  totals: BoardTotals;
  page: { number: number; size: number; pages: number };
  merchants: LeaderboardEntry[];
  unranked: UnrankedEntry[];
}

/** A page of the leaderboard as its JSON states it: with the URLs of the pages before and after it. */
export type LeaderboardDocument = Omit<Leaderboard, "page"> & {
  page: Leaderboard["page"] & { previous: string | null; next: string | null };
};

/** Which version of the screens' rules made a figure, and where its changelog is (docs/screens.md). */
export interface Methodology {
  version: string;
  url: string;
}

/** Wallets a page of the flag feed holds. */
export const FLAG_FEED_PAGE_SIZE = 500;

/** A flagged wallet at one merchant under one screen: a line of the feed's `merchants`. */
export interface FlaggedAt {
  /** The merchant's wallet, and its name in the window's report. */
  address: string;
  name: string;
  /** The screen, and what it found, in one sentence. */
  kind: string;
  reason: string;
  /** The wallet's flagged payments and dollars under this screen, as the merchant's page shares them out. */
  tx: number;
  usd: number;
  /** The wallet's entry on the merchant's evidence page, or the page where it names only the largest wallets. */
  evidence: string;
  /**
   * The ERC-8021 app codes its payments to the merchant in the window carried, sorted: what the payer's
   * software claims, not proof (`APPS_CAVEAT`).
   */
  apps: string[];
}

/** A wallet of the flag feed: its flags in one window, at every merchant. */
export interface FlaggedWallet {
  wallet: string;
  /** The cluster it was counted in as one buyer (named by its smallest address); null: a wallet alone. */
  cluster: string | null;
  tx: number;
  usd: number;
  /** Its first and last payment in the window to the merchants below, flagged or not. */
  first_block: number;
  last_block: number;
  methodology_version: string;
  merchants: FlaggedAt[];
}

/**
 * One page of a window's flag feed (`ReportService.flags`): the flagged wallets by flagged dollars, largest
 * first, then address; of one merchant when `merchant` is set.
 */
export interface FlagFeed {
  chain: ChainSlug;
  generated_at: string;
  license: string;
  window: ReportWindow;
  methodology: Methodology;
  merchant: string | null;
  totals: { wallets: number; tx: number; usd: number };
  page: { number: number; size: number; pages: number };
  wallets: FlaggedWallet[];
  /** What the wallets' `apps` are worth (`APPS_CAVEAT`). */
  apps_caveat: string;
  /** In a week attested on Base: the attestation, and the hash of the whole feed it states (attest/field.ts). */
  attestation?: FeedAttestation;
}

/** A page of the flag feed as its JSON states it: with the URLs of the pages before and after it. */
export type FlagFeedDocument = Omit<FlagFeed, "page"> & {
  page: FlagFeed["page"] & { previous: string | null; next: string | null };
};

/**
 * A line of `flags.ndjson`: one row of a window's feed, a wallet at one merchant under one screen, with the
 * wallet's cluster and the pair's first and last payment in the window.
 */
export interface FlagRecord {
  chain: ChainSlug;
  end_block: number;
  wallet: string;
  cluster: string | null;
  merchant: string;
  merchant_name: string;
  kind: string;
  reason: string;
  tx: number;
  usd: number;
  first_block: number;
  last_block: number;
  methodology_version: string;
  evidence: string;
}

/** One stored window in which a wallet was flagged. */
export type WalletWeek = Omit<FlaggedWallet, "wallet"> & { window: ReportWindow; generated_at: string };

/** What `/v1/wallets/base/{address}` answers: the stored windows in which the wallet was flagged, latest first. */
export interface WalletHistory {
  chain: ChainSlug;
  license: string;
  wallet: string;
  methodology: Methodology;
  weeks: WalletWeek[];
  /** What the weeks' `apps` are worth (`APPS_CAVEAT`). */
  apps_caveat: string;
}

/** A sealed week as readers list it (`GET /v1/weeks/base`): what was sealed, and where it is attested. */
export interface SealedWeekListing {
  end_block: number;
  start_block: number;
  methodology: string;
  root: string;
  reports: number;
  sealed_at: string;
  /** Every report of the week as sealed, one JSON object a line. */
  dataset: string;
  /** Null until the attestation's transaction is mined. */
  attestation: {
    uid: string;
    tx: string;
    attester: string;
    chain_id: number;
    attested_at: string;
  } | null;
  /** Another attestation of this week by the same key under another root (another store's), if one was found. */
  conflict_uid: string | null;
}

/** What `/v1/weeks/base` answers: the sealed weeks, newest first. */
export interface SealedWeeksDocument {
  chain: ChainSlug;
  weeks: SealedWeekListing[];
}

/** A listing that matched a search, with its merchant's report page when the merchant is in the window. */
export type SearchListing = {
  pay_to: string;
  resource: string;
  /** GET, POST, ... when its source said, else "". */
  method: string;
  price_usd: number;
  /** Cleaned and cut as the report's `bazaar_listings` are. */
  description: string;
  /** The report page of `pay_to` (a wallet that lists an endpoint is a merchant of every window), else null. */
  page: string | null;
};

/** What `/v1/search/base` answers (src/reports/week/search.ts). */
export interface SearchDocument {
  chain: ChainSlug;
  generated_at: string;
  license: string;
  window: ReportWindow;
  query: string;
  totals: { merchants: number; listings: number };
  merchants: LeaderboardEntry[];
  unranked: UnrankedEntry[];
  listings: SearchListing[];
}

export interface EvidencePayment {
  tx_hash: string;
  block: number;
  time: string;
  usd: number;
}

export interface EvidenceWallet {
  wallet: string;
  /** The flagged payments and their dollars, as on the report's page. */
  tx: number;
  usd: number;
  /** The screen's rule as this wallet crossed it, in one sentence with the thresholds. */
  rule: string;
  /** The flagged payments: the first `SHOWN_PAYMENTS` by hash, and their pattern. */
  payments: {
    count: number;
    /** The most common amount and how many payments were of it. */
    common_usd: number;
    common_count: number;
    first: string;
    last: string;
    /** The median time between consecutive payments, null for a single payment. */
    median_interval_seconds: number | null;
    shown: EvidencePayment[];
  };
  /**
   * merchant_funded: how much of the wallet's payments to the merchant in the window was the merchant's
   * money (first in first out), and the transfers that took it to this wallet, the merchant's first.
   */
  provenance?: { paid_usd: number; merchant_usd: number; merchant_share: number; transfers: number };
  /**
   * The cluster of wallets this one was counted in as one buyer, when it has others: its links, each with
   * the rule that made it (docs/screens.md, "Clusters and hubs"), and whether the price test uses it.
   */
  cluster?: {
    id: string;
    wallets: number;
    links: EvidenceClusterLink[];
    /** All the cluster's links; `links` shows the first 64 by wallet. */
    links_total: number;
  };
  funding_path?: {
    from: string;
    to: string;
    block: number;
    time: string | null;
    usd: number;
    tx_hash: string | null;
    /**
     * A hub's payout read as the merchant's deposit coming back (docs/screens.md, "Money that comes back
     * through a hub"): within how long of the deposit, and how likely so many of the merchant's deposits
     * would be followed so soon by a payout to its buyers at the rate such payouts follow other times.
     */
    hub_return?: { span_seconds: number; chance: number };
  }[];
  /** ring: a cycle through this wallet's payment (moves summed over the window), and its balance. */
  ring?: {
    returned_usd: number;
    sent_usd: number;
    cycle: {
      wallets_in_component: number;
      moves: number;
      steps: {
        from: string;
        to: string;
        usd: number;
        by: "x402" | "transfer";
        first_block: number;
        last_block: number;
      }[];
    } | null;
  };
  prober?: { merchants: number; light_merchants: number; payments_to_this_merchant: number };
  tiny?: {
    price_usd: number | null;
    price_source: "listed" | "paid" | null;
    tiny_max_usd: number;
    /** The largest tiny exact payment (`tiny_max_usd` is the metered payments'). */
    exact_tiny_max_usd?: number;
    /** This wallet's tiny payments, and its cluster's (which the rule counts). */
    tiny_payments: number;
    cluster_tiny_payments: number;
  };
}

export interface EvidenceFlag {
  kind: string;
  summary: string;
  tx: number;
  usd: number;
  wallets: EvidenceWallet[];
  /** The flag's wallets past the named ones, in one row (the report page's last row). */
  more_wallets: { wallets: number; tx: number; usd: number } | null;
}

export interface EvidenceDocument {
  schema_version: "1";
  chain: ChainSlug;
  address: string;
  name: string;
  generated_at: string;
  license: string;
  window: ReportWindow;
  /** The report these flags belong to (JSON and page), and the screens' rules. */
  report: string;
  page: string;
  screens: string;
  /** The version of the screens the figures were built under: the report's. */
  methodology: Methodology;
  flags: EvidenceFlag[];
  /** How many wallets any flag names (a wallet under two kinds once), and the merchant's part of the flag feed. */
  flag_feed: { wallets: number; url: string };
  /** Which apps the window's payments to the merchant came from, as their ERC-8021 builder codes claim. */
  apps: EvidenceApps;
}

/**
 * What a decoded builder code is worth, said wherever one is shown: the payer's software wrote it, and any
 * sender can write any code (x402 #3299).
 */
export const APPS_CAVEAT =
  "An app code is the ERC-8021 builder code at the end of the payment's settlement transaction: the payer's software put it there (copied from the merchant's 402 or its own), and any sender can write any code. It says which app claims the payment, not where the payment came from; no screen uses it.";

/** The window's payments to a merchant by the app code they carried (`EvidenceDocument.apps`). */
export interface EvidenceApps {
  caveat: string;
  /** Per app code, the payments that carried it: most payments first, then code. */
  apps: { app: string; tx: number; usd: number }[];
  /** The payments that carried none. */
  none: { tx: number; usd: number };
}

/** A cluster link as the build keeps it (`provenance/cluster-links.ts`). */
export interface ClusterLinkFacts {
  wallet: string;
  linked: string;
  rule: "funding" | "first_funder" | "behaviour";
  strong: boolean;
  /** funding, first_funder: the funder's share of what the wallet received; behaviour: the null model's chance. */
  measure: number;
}

/** A cluster link on the evidence page. */
export interface EvidenceClusterLink {
  wallet: string;
  linked: string;
  rule: "funding" | "first_funder" | "behaviour";
  /** Strong links join clusters for every screen; weak ones only where buyers are counted, not for the price test. */
  strong: boolean;
  /** funding and first_funder: the linked cluster's share of all the USDC the wallet received. */
  share?: number;
  /** behaviour: the chance that as many independent payers of the group would behave this alike. */
  chance?: number;
}

/** One chain's part of a merchant across chains: its latest report there, in brief. */
export interface ChainPart {
  chain: ChainSlug;
  window: ReportWindow;
  tx: number;
  usd: number;
  real_tx: number;
  real_usd: number;
  buyers: number;
  real_buyers: number;
  rank_by_real_revenue: number | null;
  /** The chain's report (JSON) and page of the merchant. */
  report: string;
  page: string;
}

/**
 * A merchant wallet across the chains it was paid on (`/v1/merchants/{address}`): each chain's latest week side by
 * side, and their sum. Buyers are not summed: one wallet may buy on several chains (an EVM address is the same on
 * each), so each chain counts its own.
 */
export interface MerchantAcrossChains {
  address: string;
  name: string;
  held: boolean;
  license: string;
  methodology: Report["methodology"];
  chains: ChainPart[];
  sum: { tx: number; usd: number; real_tx: number; real_usd: number };
  /** The shortest of the chains' windows in days: the sum covers at most that span of every chain. */
  days: number;
  badge: string;
}

/** A merchant on the leaderboard of every chain: its latest weeks' sums, and the chains that paid it. */
export type AcrossEntry = Omit<LeaderboardEntry, "buyers" | "real_buyers"> & { chains: ChainSlug[] };

/**
 * A page of the leaderboard of every chain (`/v1/leaderboard/all`): each merchant's latest weeks summed across
 * the chains (`weeks`: each chain's latest window), ranked by the sum of real revenue as one chain's board is.
 */
export interface AcrossLeaderboard {
  chain: "all";
  license: string;
  weeks: { chain: ChainSlug; window: ReportWindow }[];
  totals: BoardTotals;
  page: { number: number; size: number; pages: number; previous: string | null; next: string | null };
  merchants: AcrossEntry[];
  unranked: (Omit<AcrossEntry, "rank"> & { reason: UnrankedReason })[];
}
