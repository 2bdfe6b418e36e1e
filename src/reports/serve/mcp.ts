/**
 * The report service's tools for agents, over MCP: a merchant's weekly report, its evidence, the
 * leaderboard page by page, a search of merchants and listings, the flag feed page by page and one
 * wallet's flags across the stored weeks. Free, read-only, and the same answers
 * as the HTTP API's (`ReportAnswers`: the functions its routes call), each declared with the document's
 * schema (the report's own, src/reports/schema.ts; the others built from it, document-schemas.ts).
 *
 * An error is a tool result with `isError` and the HTTP API's body, `{"error": {"code", "message"}}`:
 * an agent reads the same `bad_address` or `unknown_merchant` either way.
 *
 * Served over Streamable HTTP at `/mcp` by the report service (src/reports/serve/http.ts) and over stdio by
 * `x402-merchants mcp` (src/cli/mcp.ts).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { storeChains } from "../../chain/chains.ts";
import { AppError, errorBody, NotFoundError } from "../../common/errors.ts";
import { log } from "../../common/log.ts";
import { projectVersion } from "../../common/version.ts";
import {
  type EvidenceDocument,
  FLAG_FEED_PAGE_SIZE,
  type FlagFeedDocument,
  type LeaderboardDocument,
  type SealedWeeksDocument,
  type SearchDocument,
  type WalletHistory,
} from "../model.ts";
import { type Report, ReportSchema } from "../schema.ts";
import {
  EvidenceDocumentSchema,
  FlagFeedDocumentSchema,
  LeaderboardDocumentSchema,
  SealedWeeksDocumentSchema,
  SearchDocumentSchema,
  WalletHistorySchema,
} from "./document-schemas.ts";
import { flagFeedDocument } from "./routes/flags.ts";
import { leaderboardDocument } from "./routes/leaderboard.ts";
import type { ReportService } from "./service.ts";

/**
 * What the tools answer from: the report service's functions in this process (`serviceAnswers`), or, for
 * `x402-merchants mcp`, those of whichever process holds the store (src/cli/readers.ts). Errors are
 * `AppError`s, as the HTTP routes throw them.
 */
export interface ReportAnswers {
  report(address: string, endBlock?: number): Promise<Report>;
  evidence(address: string, endBlock?: number): Promise<EvidenceDocument>;
  /** A page of the leaderboard's JSON (1-based), as `/v1/leaderboard/base[/pages/N]` answers it. */
  leaderboard(endBlock?: number, page?: number): Promise<LeaderboardDocument>;
  search(query: string, endBlock?: number): Promise<SearchDocument>;
  /** A page of the flag feed's JSON (1-based), of one merchant when `merchant` is set, as `/v1/flags/base[/pages/N]` answers it. */
  flags(endBlock?: number, page?: number, merchant?: string): Promise<FlagFeedDocument>;
  /** One wallet's flags across the stored windows, as `/v1/wallets/base/{address}` answers them. */
  wallet(address: string): Promise<WalletHistory>;
  /** The sealed weeks and their attestations, as `/v1/weeks/base` answers them. */
  weeks(): Promise<SealedWeeksDocument>;
}

/** The answers of each chain (by slug): the tools take a `chain`, Base's by default. */
export type ChainAnswers = (chain: string) => ReportAnswers;

/** The answers of the chains' report services in this process, by slug (`serviceAnswers`). */
export function chainServiceAnswers(services: readonly ReportService[]): ChainAnswers {
  const bySlug = new Map(services.map((s) => [s.chain.slug, serviceAnswers(s)]));
  return (chain) => {
    const answers = bySlug.get(chain);
    if (!answers) throw new NotFoundError(`no reports of a chain "${chain}" here`, "unknown_chain");
    return answers;
  };
}

/**
 * The answers of a report service in this process: the calls its HTTP routes make, the latest window
 * of a report, its evidence and the leaderboard being the one readers are served (`ReportService.latestEnd`).
 */
export function serviceAnswers(reports: ReportService): ReportAnswers {
  const end = async (endBlock: number | undefined) => endBlock ?? (await reports.latestEnd());
  return {
    report: async (address, endBlock) => (await reports.report(address, await end(endBlock))).report,
    evidence: async (address, endBlock) => reports.evidence(address, await end(endBlock)),
    leaderboard: async (endBlock, page) =>
      leaderboardDocument(await reports.leaderboard(await end(endBlock), { page }), reports.publicUrl),
    search: (query, endBlock) => reports.search(query, endBlock),
    flags: async (endBlock, page, merchant) =>
      flagFeedDocument(await reports.flags(await end(endBlock), { page, merchant }), reports.publicUrl),
    wallet: (address) => reports.wallet(address),
    weeks: () => reports.weeks(),
  };
}

const INSTRUCTIONS =
  "Weekly x402 payment reports for merchant wallets on Base, Polygon, Arbitrum and Solana (each tool's chain, Base by default): what each wallet was paid (reported) beside what passes every screen against wash trading, self-payment, merchant-funded buyers, rings and probers (real). Find a merchant with search_merchants (by name, host or endpoint URL), then read its report, and its evidence for any flag. A flag marks a pattern in public on-chain data, not a finding of wrongdoing. Every figure is reproducible from chain data; reports are CC BY 4.0.";

// Not the report's `address` schema (lower case only): the API takes an address in any case.
const address = z
  .string()
  .describe(
    "the merchant's wallet: 0x and 40 hex digits, in any case (a checksummed address too), or on Solana a base58 public key as written (case-sensitive)",
  );
const chain = z
  .enum(storeChains.list.map((c) => c.slug) as [string, ...string[]])
  .optional()
  .describe(
    `the chain: ${storeChains.list.map((c) => c.slug).join(", ")} (default base); each chain's weeks are its own`,
  );
const endBlock = ReportSchema.shape.window.shape.end_block
  .optional()
  .describe("the block the week's window ends at (default: the latest the service has indexed)");

const FLAG_INSTRUCTIONS =
  " The flagged wallets themselves, with the merchants and screens that flagged them, are flagged_wallets, a week at a time; one wallet's weeks are wallet_history.";

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

/** A fresh MCP server of the report tools (one per request over stateless HTTP; one per stdio session). */
export function reportMcpServer(answersOf: ChainAnswers): McpServer {
  const on = (slug: string | undefined) => answersOf(slug ?? "base");
  const server = new McpServer(
    { name: "x402-merchants-reports", version: projectVersion() },
    { instructions: INSTRUCTIONS + FLAG_INSTRUCTIONS },
  );
  server.registerTool(
    "get_report",
    {
      title: "Merchant report",
      description:
        "One merchant wallet's weekly report: reported and real (passing every screen) payments, buyers, flags by screen, price quartiles, daily figures, Bazaar listings, and the URLs of its page and badge. Schema: /v1/schema/report.json.",
      inputSchema: { address, end_block: endBlock, chain },
      outputSchema: ReportSchema,
      annotations: { title: "Merchant report", ...READ_ONLY },
    },
    ({ address, end_block, chain }) => answered(() => on(chain).report(address, end_block)),
  );
  server.registerTool(
    "get_evidence",
    {
      title: "Evidence behind a report's flags",
      description:
        "The evidence behind a merchant's flags: per flagged wallet the rule it crossed with the thresholds, its payments (hashes, times, pattern), the funding path from the merchant, or the ring's cycle.",
      inputSchema: { address, end_block: endBlock, chain },
      outputSchema: EvidenceDocumentSchema,
      annotations: { title: "Evidence behind a report's flags", ...READ_ONLY },
    },
    ({ address, end_block, chain }) => answered(() => on(chain).evidence(address, end_block)),
  );
  server.registerTool(
    "get_leaderboard",
    {
      title: "Leaderboard",
      description:
        "A page of the week's ranking: merchants by real revenue (1,000 a page), then the unranked with the reason. page.next names the next page; pass page and the window's end_block to read on in the same week.",
      inputSchema: {
        page: z.number().int().min(1).optional().describe("the page, from 1 (default 1)"),
        end_block: endBlock,
        chain,
      },
      outputSchema: LeaderboardDocumentSchema,
      annotations: { title: "Leaderboard", ...READ_ONLY },
    },
    ({ page, end_block, chain }) => answered(() => on(chain).leaderboard(end_block, page ?? 1)),
  );
  server.registerTool(
    "search_merchants",
    {
      title: "Search merchants and listings",
      description:
        "Merchants whose name or address contains the text, or one of whose listed endpoints' host or URL does (with their leaderboard figures), and the listings whose host or URL contains it (with the page of their merchant's report). Case-insensitive; at most 50 of each, totals counts every match.",
      inputSchema: {
        query: z.string().describe("text to find: a name, a host (api.example.com), a URL or part of one"),
        end_block: endBlock,
        chain,
      },
      outputSchema: SearchDocumentSchema,
      annotations: { title: "Search merchants and listings", ...READ_ONLY },
    },
    ({ query, end_block, chain }) => answered(() => on(chain).search(query, end_block)),
  );
  flagTools(server, on);
  server.registerTool(
    "sealed_weeks",
    {
      title: "Sealed and attested weeks",
      description:
        "The weeks whose reports are sealed, newest first: each week's end_block (pass it to get_report to read that week as sealed), its Merkle root, the URL of all its reports as sealed, and its attestation on Base once mined (uid, transaction, attester). A report of an attested week carries the proof that `x402-merchants verify` checks.",
      inputSchema: { chain },
      outputSchema: SealedWeeksDocumentSchema,
      annotations: { title: "Sealed and attested weeks", ...READ_ONLY },
    },
    ({ chain }) => answered(() => on(chain).weeks()),
  );
  return server;
}

/** The flag feed's tools. */
function flagTools(server: McpServer, on: (chain: string | undefined) => ReportAnswers): void {
  server.registerTool(
    "flagged_wallets",
    {
      title: "Flagged wallets",
      description: `A page of the week's flagged wallets (${FLAG_FEED_PAGE_SIZE} a page), by flagged dollars: per wallet its cluster, first and last block, and each merchant where a screen flagged it, with the screen, the reason, the payments and dollars, and the link to its evidence. A flag is a pattern, not a finding. page.next names the next page; pass page and the window's end_block to read on in the same week, merchant to read one merchant's.`,
      inputSchema: {
        page: z.number().int().min(1).optional().describe("the page, from 1 (default 1)"),
        end_block: endBlock,
        merchant: address
          .optional()
          .describe("only this merchant's flagged wallets: its wallet, 0x and 40 hex digits"),
        chain,
      },
      outputSchema: FlagFeedDocumentSchema,
      annotations: { title: "Flagged wallets", ...READ_ONLY },
    },
    ({ page, end_block, merchant, chain }) => answered(() => on(chain).flags(end_block, page ?? 1, merchant)),
  );
  server.registerTool(
    "wallet_history",
    {
      title: "A wallet's flags, week by week",
      description:
        "Every stored week in which a wallet was flagged, the latest first: at which merchants, by which screen and why, its payments and dollars, its cluster, and the links to the evidence. A wallet never flagged has no weeks.",
      inputSchema: {
        address: z
          .string()
          .describe("the wallet: 0x and 40 hex digits, in any case (a checksummed address too)"),
        chain,
      },
      outputSchema: WalletHistorySchema,
      annotations: { title: "A wallet's flags, week by week", ...READ_ONLY },
    },
    ({ address, chain }) => answered(() => on(chain).wallet(address)),
  );
}

/**
 * A document as a tool's result: structured, and as JSON text for clients that read only text. An
 * `AppError` is the HTTP API's error body with `isError`; anything else is a bug, logged as the HTTP
 * routes log it and answered as they answer it.
 */
async function answered(ask: () => Promise<object>): Promise<CallToolResult> {
  try {
    const document = await ask();
    return {
      structuredContent: document as Record<string, unknown>,
      content: [{ type: "text", text: JSON.stringify(document) }],
    };
  } catch (error) {
    let body = errorBody("internal", "internal error");
    if (error instanceof AppError) {
      // A message for the operator only (it names the server's files): the log has it, the caller not.
      if (error.publicMessage !== undefined) log("error", error.code, { error: error.message });
      body = errorBody(error.code, error.publicMessage ?? error.message);
    } else {
      log("error", "unhandled", { error: String((error as Error)?.stack ?? error) });
    }
    return { isError: true, content: [{ type: "text", text: JSON.stringify(body) }] };
  }
}
