import { openAnalytics } from "../analytics/duckdb.ts";
import { importNdjson } from "../analytics/import.ts";
import { UsageError } from "../common/errors.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

export async function runImport(args: string[], flags: Flags): Promise<number> {
  const [file, ...extra] = args;
  if (!file || extra.length > 0) throw new UsageError("import takes exactly one FILE.ndjson");
  const config = configFrom(flags);
  const analytics = await openAnalytics(config);
  try {
    const started = performance.now();
    const counts = await importNdjson(analytics, file);
    const seconds = (performance.now() - started) / 1000;
    const read = Object.values(counts).reduce((n, c) => n + c.read, 0);
    process.stdout.write(
      `${JSON.stringify({ file, seconds: Number(seconds.toFixed(3)), rows: read, ...counts })}\n`,
    );
    return 0;
  } finally {
    analytics.close();
  }
}
