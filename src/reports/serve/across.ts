/**
 * A merchant wallet across chains: each chain's service asked for its latest report of the wallet, the
 * chains that have none (no data yet, or the wallet was never paid there) left out, and the dollars summed in
 * cents (dollars added as floating point would drift off the cent). Each chain's week is its own latest: the
 * chains' heads are not one moment, so the sum covers each chain's 7 days to its own latest block.
 */
import { storeChains } from "../../chain/chains.ts";
import { NotFoundError } from "../../common/errors.ts";
import {
  type AcrossLeaderboard,
  type BoardPage,
  type ChainPart,
  LEADERBOARD_PAGE_SIZE,
  type MerchantAcrossChains,
} from "../model.ts";
import { boardAcross } from "../week/board.ts";
import { LICENSE_URL } from "../week/report.ts";
import { checkedBoardPage, parseAddress } from "./params.ts";
import type { ReportService } from "./service.ts";

const cents = (usd: number) => Math.round(usd * 100);

/**
 * The chains the store holds data of (a merchant paid, or a checkpoint), in the registry's order: the pages
 * link the other chains' rankings and a merchant's page across chains only where there is more than one.
 */
export async function chainsWithData(service: ReportService): Promise<string[]> {
  const rows = await service.readStore("chains", (db) =>
    db.all<{ chain: string }>(
      "SELECT DISTINCT chain FROM (SELECT chain FROM merchant_chains UNION ALL SELECT chain FROM checkpoints)",
    ),
  );
  const held = new Set(rows.map((r) => r.chain));
  return storeChains.list.map((c) => c.slug).filter((slug) => held.has(slug));
}

export async function merchantAcrossChains(
  services: readonly ReportService[],
  address: string,
): Promise<MerchantAcrossChains> {
  const wallet = parseAddress(address);
  const found = await Promise.all(
    services.map(async (service) => {
      try {
        return (await service.report(wallet, await service.latestEnd())).report;
      } catch (error) {
        // A chain without data, or where the wallet is no merchant, has no part.
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
    }),
  );
  const reports = found.filter((r) => r !== undefined);
  const [first] = reports;
  if (!first) {
    throw new NotFoundError(`no merchant ${wallet} is known on any chain`, "unknown_merchant");
  }
  const chains: ChainPart[] = reports.map((r) => ({
    chain: r.chain,
    window: r.window,
    tx: r.tx,
    usd: r.usd,
    real_tx: r.real_tx,
    real_usd: r.real_usd,
    buyers: r.buyers,
    real_buyers: r.real_buyers,
    rank_by_real_revenue: r.rank_by_real_revenue,
    report: r.page.replace(/\/reports\//, "/v1/reports/"),
    page: r.page,
  }));
  const sum = (key: "tx" | "real_tx") => chains.reduce((n, c) => n + c[key], 0);
  const usd = (key: "usd" | "real_usd") => chains.reduce((n, c) => n + cents(c[key]), 0) / 100;
  const base = first.page.slice(0, first.page.indexOf("/reports/"));
  return {
    address: wallet,
    name: first.name,
    held: first.held,
    license: LICENSE_URL,
    methodology: first.methodology,
    chains,
    sum: { tx: sum("tx"), usd: usd("usd"), real_tx: sum("real_tx"), real_usd: usd("real_usd") },
    days: Math.min(...chains.map((c) => c.window.days)),
    badge: `${base}/badges/all/${wallet}.svg`,
  };
}

/** Where page `n` of the leaderboard of every chain is. */
export const acrossBoardPath = (n: number): string =>
  n === 1 ? "/v1/leaderboard/all" : `/v1/leaderboard/all/pages/${n}`;

/**
 * A page of the leaderboard of every chain: each merchant's latest weeks summed across the chains that have data
 * (each chain's latest window built first, as its own board's readers are served it), ranked by the sum of real
 * revenue; the pages' links are to the latest, which moves on with every chain's blocks.
 */
export async function leaderboardAcrossChains(
  services: readonly ReportService[],
  { page = 1, size = LEADERBOARD_PAGE_SIZE }: BoardPage = {},
): Promise<AcrossLeaderboard> {
  checkedBoardPage(page, size);
  const [first] = services;
  if (!first) throw new Error("internal: no chain's service");
  const weeks = (
    await Promise.all(
      services.map(async (service) => {
        try {
          return { service, window: await service.build(await service.latestEnd()) };
        } catch (error) {
          if (error instanceof NotFoundError) return undefined;
          throw error;
        }
      }),
    )
  ).filter((w) => w !== undefined);
  const board = await first.readStore("leaderboard", (db) =>
    boardAcross(
      db,
      weeks.map((w) => ({ chain: w.service.chain, end: w.window.end_block })),
      first.publicUrl,
      { offset: (page - 1) * size, size },
    ),
  );
  const pages = Math.max(1, Math.ceil(board.totals.merchants / size));
  if (page > pages) {
    throw new NotFoundError(
      `the leaderboard of every chain has ${pages} ${pages === 1 ? "page" : "pages"} of ${size}, not ${page}`,
      "no_such_page",
    );
  }
  const link = (n: number) => `${first.publicUrl}${acrossBoardPath(n)}`;
  return {
    chain: "all",
    license: LICENSE_URL,
    weeks: weeks.map((w) => ({ chain: w.service.chain.slug, window: w.window })),
    totals: board.totals,
    page: {
      number: page,
      size,
      pages,
      previous: page > 1 ? link(page - 1) : null,
      next: page < pages ? link(page + 1) : null,
    },
    merchants: board.merchants,
    unranked: board.unranked,
  };
}
