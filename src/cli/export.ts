import fs from "node:fs";
import { openAnalyticsWaiting } from "../analytics/duckdb.ts";
import { exportNdjson } from "../analytics/export.ts";
import { NotFoundError, UsageError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import { configFrom, parseWaitMs } from "./flag-values.ts";
import { DEFAULT_WAIT_SECONDS, type Flags } from "./flags.ts";

/**
 * `export FILE.ndjson`: the store's data in the import format, for `import` into another store. It opens the
 * store itself (a running serve or demo holds it: stop it first, or wait out a command that will end), and
 * never makes one: an export of nothing would be a file the import refuses.
 */
export async function runExport(args: string[], flags: Flags): Promise<number> {
  const [file, ...extra] = args;
  if (!file || extra.length > 0) throw new UsageError("export takes exactly one FILE.ndjson");
  const config = configFrom(flags);
  const waitMs = parseWaitMs(flags.wait, DEFAULT_WAIT_SECONDS);
  const store = dataLayout(config.dataDir).analytics.file;
  if (!fs.existsSync(store)) throw new NotFoundError(`there is no analytics store at ${store}`);
  const analytics = await openAnalyticsWaiting(config, waitMs);
  try {
    const started = performance.now();
    const counts = await exportNdjson(analytics, file, { replace: flags.replace === true });
    const seconds = (performance.now() - started) / 1000;
    const rows = Object.values(counts).reduce((n, c) => n + c, 0);
    process.stdout.write(
      `${JSON.stringify({ file, seconds: Number(seconds.toFixed(3)), rows, ...counts })}\n`,
    );
    return 0;
  } finally {
    analytics.close();
  }
}
