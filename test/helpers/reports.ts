import { ReportService } from "../../src/reports/serve/service.ts";
import { analyticsWith, END, END_TIME } from "./data.ts";

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
