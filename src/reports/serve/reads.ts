/**
 * What the report service answers a reader of merchants: one merchant's report or evidence, a page of the
 * leaderboard and a search, each read on a reader connection of its own once its window is built
 * (windows.ts); the flag feed's answers are flag-reads.ts'.
 */
import { NotFoundError } from "../../common/errors.ts";
import { servedRows } from "../attest/store.ts";
import {
  type BoardPage,
  type EvidenceDocument,
  LEADERBOARD_PAGE_SIZE,
  type Leaderboard,
  type ReportDetails,
  type SearchDocument,
} from "../model.ts";
import type { Report } from "../schema.ts";
import { sqlChain } from "../scope.ts";
import { boardEntries, boardTotals } from "../week/board.ts";
import { evidenceContext, evidenceDocuments } from "../week/evidence-document.ts";
import {
  LICENSE_URL,
  pagePrefix,
  parseStoredReport,
  reportsQuery,
  type StoredReportRow,
} from "../week/report.ts";
import { listingsMatching, SEARCH_LIMIT, SQL_MERCHANT_MATCHES, searchText } from "../week/search.ts";
import { checkedBoardPage, parseAddress } from "./params.ts";
import type { ReportWindows } from "./windows.ts";

const unknownMerchant = (windows: ReportWindows, merchant: string) =>
  new NotFoundError(`no merchant ${merchant} is known on ${windows.chain.name}`, "unknown_merchant");

/** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
export async function report(
  windows: ReportWindows,
  address: string,
  endBlock?: number,
): Promise<{ report: Report; details: ReportDetails }> {
  const merchant = parseAddress(address);
  return windows.reading(endBlock, "report", async (db, window) => {
    const { sql, params } = reportsQuery(await windows.context(window, db), merchant);
    // One statement text for every merchant: planned once, its plan kept (a page view's main cost).
    const [row] = await db.allPrepared<StoredReportRow & { address: string }>(sql, params);
    if (!row) throw unknownMerchant(windows, merchant);
    const [served] = await servedRows(db, windows.chain, window.end_block, [row], { only: merchant });
    return parseStoredReport(served ?? row);
  });
}

/** The evidence behind one merchant's flags (`week/evidence-document.ts`). */
export async function evidence(
  windows: ReportWindows,
  address: string,
  endBlock?: number,
): Promise<EvidenceDocument> {
  const merchant = parseAddress(address);
  return windows.reading(endBlock, "evidence", async (db, window) => {
    const context = await windows.context(window, db);
    const { sql, params } = reportsQuery(context, merchant);
    const [row] = await db.allPrepared<StoredReportRow>(sql, params);
    if (!row) throw unknownMerchant(windows, merchant);
    const [document] = await evidenceDocuments(db, evidenceContext(context), [parseStoredReport(row)]);
    return document as EvidenceDocument;
  });
}

/**
 * One page of a window's leaderboard: the ranked merchants by rank, then the unranked with the reason,
 * `size` a page (page 1 first), read from the stored reports' figures by their place on the board.
 */
export function leaderboard(
  windows: ReportWindows,
  endBlock?: number,
  { page = 1, size = LEADERBOARD_PAGE_SIZE }: BoardPage = {},
): Promise<Leaderboard> {
  checkedBoardPage(page, size);
  return windows.reading(endBlock, "leaderboard", async (db, window) => {
    const context = await windows.context(window, db);
    const totals = await boardTotals(db, windows.chain, window.end_block);
    const pages = Math.max(1, Math.ceil(totals.merchants / size));
    if (page > pages) {
      throw new NotFoundError(
        `the leaderboard of the window ending at block ${window.end_block} has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
        "no_such_page",
      );
    }
    const { merchants, unranked } = await boardEntries(
      db,
      windows.chain,
      windows.publicUrl,
      window.end_block,
      "r.board_place > $after AND r.board_place <= $last",
      { after: (page - 1) * size, last: page * size },
    );
    return {
      chain: windows.chain.slug,
      generated_at: context.generatedAt,
      license: LICENSE_URL,
      window,
      totals,
      page: { number: page, size, pages },
      merchants,
      unranked,
    };
  });
}

/**
 * The window's merchants whose name or address holds `query`, or one of whose listings' host or URL does,
 * as leaderboard entries (at most `SEARCH_LIMIT`, in the leaderboard's order), and the listings whose host
 * or URL holds it, any merchant's (src/reports/week/search.ts).
 */
export function search(windows: ReportWindows, query: string, endBlock?: number): Promise<SearchDocument> {
  const text = searchText(query);
  return windows.reading(endBlock, "search", async (db, window) => {
    const context = await windows.context(window, db);
    const end = window.end_block;
    const q = text.toLowerCase();
    const found = await boardEntries(
      db,
      windows.chain,
      windows.publicUrl,
      end,
      SQL_MERCHANT_MATCHES,
      { q },
      SEARCH_LIMIT,
    );
    const matching = await db.one<{ merchants: number }>(
      `SELECT count(*)::DOUBLE AS merchants FROM reports r
         WHERE ${sqlChain(windows.chain, "r.")} AND r.end_block = $end AND ${SQL_MERCHANT_MATCHES}`,
      { end, q },
    );
    const { total, listings } = await listingsMatching(db, windows.chain, {
      end,
      q,
      page_prefix: pagePrefix(windows.publicUrl, windows.chain),
    });
    return {
      chain: windows.chain.slug,
      generated_at: context.generatedAt,
      license: LICENSE_URL,
      window,
      query: text,
      totals: { merchants: matching?.merchants ?? 0, listings: total },
      ...found,
      listings,
    };
  });
}
