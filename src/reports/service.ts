import { BadInputError, NotFoundError } from "../platform/errors.ts";
import type { Store } from "../store/duckdb.ts";
import { dataVersion } from "../store/migrations.ts";
import { usd2 } from "./money.ts";
import { rankByRealRevenue } from "./rank.ts";
import { buildReport, emptyAggregate, LICENSE_URL, type MerchantInfo } from "./report.ts";
import type { Report } from "./schema.ts";
import { aggregateWindow } from "./sql.ts";
import { isoUtc, type ReportWindow, resolveWindow } from "./window.ts";

/** What the page shows beyond the report: the wallets behind each flag (the 20 largest per kind). */
export interface ReportDetails {
  flagged_wallets: Record<string, { wallet: string; tx: number; usd: number }[]>;
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

export interface ReportServiceOptions {
  /** Base of the page and badge URLs, without a trailing slash. */
  publicUrl: string;
  now?: () => Date;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Lower-cases a merchant address, or rejects it as bad input. */
export function parseAddress(value: string): string {
  if (!ADDRESS.test(value))
    throw new BadInputError(`"${value}" is not an address: 0x followed by 40 hex digits`, "bad_address");
  return value.toLowerCase();
}

/**
 * Reports, materialized per window. A window's reports are built together (rank needs all of them)
 * and kept in the store's `reports` table with the data version they saw; they are rebuilt when an
 * import or the indexer has changed the data since, so `generated_at` is stable between changes.
 * Calls are serialized: the store has one connection and a build uses temporary tables.
 */
export class ReportService {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;

  constructor(
    private readonly store: Store,
    private readonly options: ReportServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
  }

  /** One merchant's report for the window ending at `endBlock` (default: the latest checkpoint). */
  async report(address: string, endBlock?: number): Promise<{ report: Report; details: ReportDetails }> {
    const merchant = parseAddress(address);
    return this.serial(async () => {
      const window = await this.ensureWindow(endBlock);
      const row = await this.store.one<{ body: string; details: string }>(
        "SELECT body, details FROM reports WHERE chain = 'base' AND end_block = $end AND address = $address",
        { end: window.end_block, address: merchant },
      );
      if (!row) throw new NotFoundError(`no merchant ${merchant} is known on Base`, "unknown_merchant");
      return { report: JSON.parse(row.body) as Report, details: JSON.parse(row.details) as ReportDetails };
    });
  }

  /** Every merchant's report of one window, by address. */
  reports(endBlock?: number): Promise<{ window: ReportWindow; reports: Report[] }> {
    return this.serial(async () => {
      const window = await resolveWindow(this.store, endBlock);
      const built = await this.buildIfStale(window);
      if (built) return { window, reports: built };
      const rows = await this.store.all<{ body: string }>(
        "SELECT body FROM reports WHERE chain = 'base' AND end_block = $end ORDER BY address",
        { end: window.end_block },
      );
      return { window, reports: rows.map((r) => JSON.parse(r.body) as Report) };
    });
  }

  async leaderboard(endBlock?: number) {
    const { window, reports } = await this.reports(endBlock);
    const merchants: LeaderboardEntry[] = reports
      .filter((r): r is Report & { rank_by_real_revenue: number } => r.rank_by_real_revenue !== null)
      .sort((a, b) => a.rank_by_real_revenue - b.rank_by_real_revenue || a.address.localeCompare(b.address))
      .map((r) => ({
        rank: r.rank_by_real_revenue,
        address: r.address,
        name: r.name,
        real_usd: r.real_usd,
        usd: r.usd,
        real_tx: r.real_tx,
        tx: r.tx,
        real_buyers: r.real_buyers,
        buyers: r.buyers,
        page: r.page,
      }));
    return {
      chain: "base" as const,
      generated_at: reports[0]?.generated_at ?? isoUtc(Math.floor(this.now().getTime() / 1000)),
      license: LICENSE_URL,
      window,
      merchants,
    };
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ensureWindow(endBlock?: number): Promise<ReportWindow> {
    const window = await resolveWindow(this.store, endBlock);
    await this.buildIfStale(window);
    return window;
  }

  /** Builds the window's reports unless the stored ones saw the current data; returns what it built. */
  private async buildIfStale(window: ReportWindow): Promise<Report[] | undefined> {
    const version = await dataVersion(this.store);
    const cached = await this.store.one<{ data_version: bigint; public_url: string }>(
      "SELECT data_version, public_url FROM report_windows WHERE chain = 'base' AND end_block = $end",
      { end: window.end_block },
    );
    const fresh = cached?.data_version === version && cached.public_url === this.options.publicUrl;
    return fresh ? undefined : this.build(window, version);
  }

  private async build(window: ReportWindow, version: bigint): Promise<Report[]> {
    const agg = await aggregateWindow(this.store, {
      startBlock: window.start_block,
      endBlock: window.end_block,
    });
    const infos = await this.merchantInfos();
    const aggregates = new Map(agg.merchants.map((m) => [m.pay_to, m]));
    const daily = groupBy(agg.daily, (d) => d.pay_to);
    const ranks = rankByRealRevenue(
      [...infos.values()].map((m) => ({
        address: m.address,
        realAmount: aggregates.get(m.address)?.real_amount ?? 0n,
        frozen: m.frozen,
      })),
    );
    const generatedAt = isoUtc(Math.floor(this.now().getTime() / 1000));
    const wallets = groupBy(agg.flaggedWallets, (w) => w.pay_to);

    const built: Report[] = [];
    await this.store.transaction(async () => {
      await this.store.run("DELETE FROM reports WHERE chain = 'base' AND end_block = $end", {
        end: window.end_block,
      });
      const appender = await this.store.connection.createAppender("reports");
      for (const info of infos.values()) {
        const report = buildReport(
          aggregates.get(info.address) ?? emptyAggregate(info.address),
          daily.get(info.address) ?? [],
          info,
          { window, generatedAt, publicUrl: this.options.publicUrl, rank: ranks.get(info.address) ?? null },
        );
        built.push(report);
        const details: ReportDetails = { flagged_wallets: {} };
        for (const w of wallets.get(info.address) ?? []) {
          const list = details.flagged_wallets[w.kind] ?? [];
          list.push({ wallet: w.payer, tx: Number(w.tx), usd: usd2(w.amount) });
          details.flagged_wallets[w.kind] = list;
        }
        appender.appendVarchar("base");
        appender.appendBigInt(BigInt(window.end_block));
        appender.appendVarchar(info.address);
        appender.appendVarchar(JSON.stringify(report));
        appender.appendVarchar(JSON.stringify(details));
        appender.endRow();
      }
      appender.closeSync();
      await this.store.run(
        "INSERT OR REPLACE INTO report_windows VALUES ('base', $end, $version, $url, $generated)",
        { end: window.end_block, version, url: this.options.publicUrl, generated: generatedAt },
      );
    });
    return built;
  }

  private async merchantInfos(): Promise<Map<string, MerchantInfo>> {
    const merchants = await this.store.all<{
      address: string;
      name: string | null;
      claimed: boolean;
      frozen: boolean;
    }>("SELECT address, name, claimed, frozen FROM merchants ORDER BY address");
    const listings = groupBy(
      await this.store.all<{ pay_to: string; resource: string; price_usd: number; description: string }>(
        "SELECT pay_to, resource, price_usd, description FROM listings",
      ),
      (l) => l.pay_to,
    );
    return new Map(
      merchants.map((m) => [
        m.address,
        {
          ...m,
          listings: (listings.get(m.address) ?? []).map(({ resource, price_usd, description }) => ({
            resource,
            price_usd,
            description,
          })),
        },
      ]),
    );
  }
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export type Leaderboard = Awaited<ReturnType<ReportService["leaderboard"]>>;
