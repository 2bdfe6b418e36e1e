import { openAnalytics } from "../analytics/duckdb.ts";
import { DEFAULT_PUBLIC_URL } from "../config/config.ts";
import { isAddress, ReportService } from "../reports/service.ts";
import { configFrom, type Flags, parseEndBlock, UsageError } from "./args.ts";

async function withReports<T>(flags: Flags, fn: (reports: ReportService) => Promise<T>): Promise<T> {
  const config = configFrom(flags);
  const analytics = await openAnalytics(config);
  try {
    return await fn(new ReportService(analytics, { publicUrl: config.publicUrl ?? DEFAULT_PUBLIC_URL }));
  } finally {
    analytics.close();
  }
}

export async function runReport(args: string[], flags: Flags): Promise<number> {
  const [address, ...extra] = args;
  if (!address || extra.length > 0) throw new UsageError("report takes exactly one ADDRESS");
  if (!isAddress(address))
    throw new UsageError(`"${address}" is not an address: 0x followed by 40 hex digits`);
  const endBlock = parseEndBlock(flags["end-block"]);
  const { report } = await withReports(flags, (reports) => reports.report(address, endBlock));
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return 0;
}

export async function runLeaderboard(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("leaderboard takes no arguments");
  const endBlock = parseEndBlock(flags["end-block"]);
  const board = await withReports(flags, (reports) => reports.leaderboard(endBlock));
  process.stdout.write(`${JSON.stringify(board, null, 2)}\n`);
  return 0;
}
