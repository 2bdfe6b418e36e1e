/**
 * What the report service answers a reader of flags: a page of the flag feed and one wallet's history, each
 * read on a reader connection of its own once its window is built (windows.ts).
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { NotFoundError } from "../../common/errors.ts";
import { feedAttestation } from "../attest/store.ts";
import {
  APPS_CAVEAT,
  type BoardPage,
  FLAG_FEED_PAGE_SIZE,
  type FlagFeed,
  type WalletHistory,
  type WalletWeek,
} from "../model.ts";
import { sqlChain } from "../scope.ts";
import { methodologyOf } from "../screens/methodology.ts";
import { evidenceUrl } from "../week/flag-records.ts";
import { type FlagRow, flaggedWallets, flagRows, flagTotals, walletRows } from "../week/flags.ts";
import { LICENSE_URL } from "../week/report.ts";
import { resolveWindow } from "../week/window.ts";
import { parseAddress } from "./params.ts";
import type { ReportWindows } from "./windows.ts";

/**
 * One page of a window's flag feed: its flagged wallets by flagged dollars, largest first, then address,
 * `size` a page (page 1 first), each with its merchants and screens; only one merchant's rows when
 * `merchant` is its address (src/reports/week/flags.ts).
 */
export function flags(
  windows: ReportWindows,
  endBlock?: number,
  { page = 1, size = FLAG_FEED_PAGE_SIZE, merchant }: BoardPage & { merchant?: string } = {},
): Promise<FlagFeed> {
  if (!Number.isSafeInteger(page) || page < 1) throw new Error(`a feed page is 1 or more, not ${page}`);
  if (!Number.isSafeInteger(size) || size < 1) throw new Error(`a feed page holds 1 or more, not ${size}`);
  const only = merchant === undefined ? null : parseAddress(merchant);
  return windows.reading(endBlock, "flags", async (db, window) => {
    const context = await windows.context(window, db);
    const end = window.end_block;
    const { chain } = windows;
    if (only !== null) await knownMerchant(db, chain, end, only);
    const totals = await flagTotals(db, chain, end, only);
    const pages = Math.max(1, Math.ceil(totals.wallets / size));
    if (page > pages) {
      throw new NotFoundError(
        `the flag feed of the window ending at block ${end}${only === null ? "" : ` at ${only}`} has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
        "no_such_page",
      );
    }
    const rows = await flagRows(db, chain, end, only, { offset: (page - 1) * size, size });
    const attestation = await feedAttestation(db, chain, end);
    return {
      chain: chain.slug,
      generated_at: context.generatedAt,
      license: LICENSE_URL,
      window,
      methodology: methodologyOf(windows.publicUrl, context.methodology),
      merchant: only,
      totals,
      page: { number: page, size, pages },
      wallets: flaggedWallets(
        rows,
        (row) => evidenceUrl(context.publicUrl, chain.slug, end, row),
        context.methodology,
      ),
      apps_caveat: APPS_CAVEAT,
      ...(attestation ? { attestation } : {}),
    };
  });
}

/**
 * One wallet's flags in every stored window, the latest first: where it was flagged, by which screen, and
 * why. The latest window as readers are served it is built first, so that the history reaches this week;
 * older weeks are those still stored (`keepWindows`). A wallet never flagged has no weeks.
 */
export async function wallet(
  windows: ReportWindows,
  address: string,
  latestEnd: () => Promise<number>,
): Promise<WalletHistory> {
  const wallet = parseAddress(address);
  const latest = await latestEnd();
  return windows.reading(latest, "wallet", async (db) => {
    const byWindow = new Map<number, (FlagRow & { generated_at: string; methodology: string })[]>();
    for (const row of await walletRows(db, windows.chain, wallet)) {
      const rows = byWindow.get(row.end_block) ?? [];
      rows.push(row);
      byWindow.set(row.end_block, rows);
    }
    const weeks: WalletWeek[] = [];
    for (const [end, rows] of byWindow) {
      const first = rows[0] as (typeof rows)[number];
      const [flags] = flaggedWallets(
        rows,
        (row) => evidenceUrl(windows.publicUrl, windows.chain.slug, end, row),
        first.methodology,
      );
      if (!flags) continue;
      const { wallet: _, ...week } = flags;
      weeks.push({
        window: await resolveWindow(db, windows.chain, end),
        generated_at: first.generated_at,
        ...week,
      });
    }
    return {
      chain: windows.chain.slug,
      license: LICENSE_URL,
      wallet,
      methodology: methodologyOf(windows.publicUrl),
      weeks,
      apps_caveat: APPS_CAVEAT,
    };
  });
}

/** Unless the window has a report of `merchant`, a 404 as `report` answers it. */
async function knownMerchant(
  db: Analytics,
  chain: AnyChainRecord,
  end: number,
  merchant: string,
): Promise<void> {
  const known = await db.one(
    `SELECT 1 AS known FROM reports WHERE ${sqlChain(chain)} AND end_block = $end AND address = $merchant`,
    { end, merchant },
  );
  if (!known)
    throw new NotFoundError(`no merchant ${merchant} is known on ${chain.name}`, "unknown_merchant");
}
