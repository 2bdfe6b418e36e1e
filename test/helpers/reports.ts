import { ReportService } from "../../src/reports/serve/service.ts";
import { analyticsWith, END, END_TIME } from "./data.ts";
import { dispose } from "./window-flags.ts";

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
