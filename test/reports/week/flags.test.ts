/**
 * The flag feed's stored rows (`report_flags`, migration 15): written with a window's reports from the build's
 * tables, replaced when the window is built again on new data, dropped with the window.
 */
import { describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { importNdjson } from "../../../src/analytics/import.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, ndjsonFile, payment, repeat } from "../../helpers/data.ts";

const m = addr("rows-merchant");
const farm = addr("rows-farm");

const rowsOf = (analytics: Analytics) =>
  analytics.all<{ end_block: bigint; wallet: string; kind: string; tx: bigint; cents: bigint }>(
    "SELECT end_block, wallet, kind, tx, cents FROM report_flags ORDER BY end_block, wallet, kind",
  );

describe("the stored flag rows", () => {
  it("are written with the window's reports, rebuilt with them, and dropped with them", async () => {
    const analytics = await analyticsWith([
      payment({ payer: addr("rows-buyer"), payTo: m, amount: 3_000_000 }),
      payment({ payer: m, payTo: m, amount: 1_250_000 }),
      ...repeat(12, { payer: farm, payTo: m, amount: 100 }),
    ]);
    try {
      const service = new ReportService(analytics, { publicUrl: "https://r.test", keepWindows: 1 });
      const { report } = await service.report(m, END);
      expect(report.flags).toEqual({ self_payment: { tx: 1, usd: 1.25 }, tiny_repeat: { tx: 12, usd: 0 } });
      expect(await rowsOf(analytics)).toEqual([
        { end_block: BigInt(END), wallet: m, kind: "self_payment", tx: 1n, cents: 125n },
        { end_block: BigInt(END), wallet: farm, kind: "tiny_repeat", tx: 12n, cents: 0n },
      ]);

      // New data in the window: its rows are replaced with the new build's, never added to.
      await importNdjson(
        analytics,
        ndjsonFile([payment({ payer: m, payTo: m, amount: 500_000, block: END - 10 })]),
      );
      await service.report(m, END);
      expect((await rowsOf(analytics)).map((r) => [r.wallet, r.tx, r.cents])).toEqual([
        [m, 2n, 175n],
        [farm, 12n, 0n],
      ]);

      // Another window pushes this one out (one window kept), its rows with it.
      await service.report(m, END - 20);
      expect(new Set((await rowsOf(analytics)).map((r) => r.end_block))).toEqual(new Set([BigInt(END - 20)]));
      expect(await analytics.all("SELECT end_block FROM report_windows")).toEqual([
        { end_block: BigInt(END - 20) },
      ]);
    } finally {
      analytics.close();
    }
  });
});
