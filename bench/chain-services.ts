/** One report service per chain on one store, as `serve` runs them: the first on the store's connection, the others on forks. */
import type { Analytics } from "../src/analytics/duckdb.ts";
import type { ChainRecord } from "../src/chain/chains.ts";
import { ReportService } from "../src/reports/index.ts";

export function chainServices(
  analytics: Analytics,
  chains: readonly ChainRecord[],
): Promise<ReportService[]> {
  return Promise.all(
    chains.map(
      async (chain, i) =>
        new ReportService(i === 0 ? analytics : await analytics.fork(), {
          publicUrl: "http://127.0.0.1:8402",
          chain,
        }),
    ),
  );
}
