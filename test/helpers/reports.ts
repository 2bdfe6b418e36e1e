import { afterAll } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { analyticsWith, END, END_TIME, reportOf } from "./data.ts";
import { dispose, Replica } from "./window-flags.ts";

type Report = Awaited<ReturnType<ReportService["report"]>>;

/**
 * `reportOf` (data.ts) for several addresses of one world: `read` asks for any address's report of the window
 * ending at END, and one build serves them all, where each `reportOf` imports and builds the whole window again
 * (a second of CPU; issue 87 item 6). The same store, clock and window as `reportOf`'s.
 */
export async function withReports<T>(
  records: readonly object[],
  read: (reportOf: (address: string) => Promise<Report>) => Promise<T>,
): Promise<T> {
  const analytics = await analyticsWith(records);
  try {
    const service = new ReportService(analytics, {
      publicUrl: "https://reports.test",
      now: () => new Date(END_TIME * 1000 + 3_600_000),
    });
    return await read((address) => service.report(address, END));
  } finally {
    analytics.close();
  }
}

/** What `withService` builds the reports with: `reportOf`'s, unless a test gives its own. */
type ServiceOptions = ConstructorParameters<typeof ReportService>[1];

/**
 * A report service over a store of `records` (`analyticsWith`) for `read`, the store then closed without its
 * checkpoint and removed: a test that reads its world once has no use for what a close writes to the file
 * (DuckDB's checkpoint, a tenth of a CPU-second and up to half a second of wall under load: docs/benchmarks-log.md,
 * "fresh analytics stores"), nor for the directory, which `reportOf` and `withReports` leave behind.
 */
export async function withService<T>(
  records: readonly object[],
  read: (service: ReportService) => Promise<T>,
  options: ServiceOptions = {
    publicUrl: "https://reports.test",
    now: () => new Date(END_TIME * 1000 + 3_600_000),
  },
): Promise<T> {
  const analytics = await analyticsWith(records);
  try {
    await analytics.run("PRAGMA disable_checkpoint_on_shutdown");
    return await read(new ReportService(analytics, options));
  } finally {
    dispose(analytics);
  }
}

/**
 * The reports of one world of `SideBySide`, read by the address its records name; `address` is what the
 * store calls that address (a copy's own: what a report's address, page and badge show).
 */
export type WorldReports = ((address: string) => Promise<Report>) & { address: (a: string) => string };

/**
 * Many small worlds in one store and one build, where a file's cases each imported and built a week of their own
 * (`reportOf`: 0.4 CPU-s a case, nearly all of it the store's and the build's fixed cost; issue 87 item 6). Each
 * world's records go on a copy of their own (`Replica`, test/helpers/window-flags.ts: wallets, merchants and
 * transactions renamed; listings' hosts, which name a merchant and nothing else, kept), so that no world meets
 * another but through what every copy shares
 * (the facilitator, the chains' named exchanges), and a world's reader asks for the report of the address its
 * records name. Worlds are added while the file's tests are collected; the first read imports them all and
 * builds the window once, and the store is removed after the file (`afterAll`). A test may only add worlds
 * whose reports come out as alone: screens that count the whole week's payers (behaviour's null model) or
 * rank merchants can see the others, so such cases keep `reportOf`. SIDE_BY_SIDE_ALONE=1 builds each world
 * alone, to compare.
 */
export class SideBySide {
  private readonly worlds: object[][] = [];
  private built: Promise<ReportService> | undefined;
  private analytics: Analytics | undefined;

  constructor() {
    afterAll(() => {
      if (this.analytics) dispose(this.analytics);
    });
  }

  /** Adds a world of `records` (a checkpoint at END is added to the store, as `analyticsWith` does). */
  world(records: readonly object[]): WorldReports {
    if (this.built) throw new Error("a world added after the side-by-side store was built");
    if (records.some((r) => (r as { type?: string }).type === "checkpoint"))
      throw new Error("a world with a checkpoint of its own: build it alone (reportOf)");
    if (process.env.SIDE_BY_SIDE_ALONE)
      return Object.assign((address: string) => reportOf(records, address), { address: (a: string) => a });
    const replica = new Replica(this.worlds.length);
    this.worlds.push(replica.records(records));
    // Only what the copy renamed: another chain's address (base58) is the world's as written.
    const address = (a: string) => (/^0x[0-9a-fA-F]{40}$/.test(a) ? replica.address(a) : a);
    return Object.assign(async (a: string) => (await this.service()).report(address(a), END), { address });
  }

  private service(): Promise<ReportService> {
    this.built ??= (async () => {
      const analytics = await analyticsWith(this.worlds.flat());
      this.analytics = analytics;
      // Read and removed after the file: what a close writes to the store's file is never read.
      await analytics.run("PRAGMA disable_checkpoint_on_shutdown");
      return new ReportService(analytics, {
        publicUrl: "https://reports.test",
        now: () => new Date(END_TIME * 1000 + 3_600_000),
      });
    })();
    return this.built;
  }
}
