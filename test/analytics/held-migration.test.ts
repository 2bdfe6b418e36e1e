/**
 * Migration 17 (the operator's hold is `held`): a store written before it, with a merchant held out of the
 * ranking as `frozen` and a stored window, opens with the merchant held and the window's reports kept,
 * their `held` read from the renamed column; the report's `frozen` now says whether the week is attested.
 */
import { describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment } from "../helpers/data.ts";

describe("migration 17", () => {
  it("renames frozen to held in the merchants and the stored reports, keeping every row", async () => {
    const [kept, ranked] = [addr("migration-held"), addr("migration-ranked")];
    let store = await analyticsWith([
      payment({ payer: addr("migration-a"), payTo: kept, amount: 9_000_000 }),
      payment({ payer: addr("migration-b"), payTo: ranked, amount: 5_000_000 }),
      { type: "merchant", address: kept, name: "held.example", claimed: true, held: true },
    ]);
    const dataDir = store.dataDir;
    try {
      await new ReportService(store, { publicUrl: "https://r.test" }).report(kept, END);
      // Back to the schema before migration 17, a window stored.
      await store.run("ALTER TABLE merchants RENAME COLUMN held TO frozen");
      await store.run("ALTER TABLE reports RENAME COLUMN held TO frozen");
      await store.run("DELETE FROM schema_migrations WHERE version = 17");
      const windows = await store.all("SELECT * FROM report_windows");
      const reports = await store.all("SELECT * EXCLUDE (frozen) FROM reports ORDER BY address");
      store.close();

      store = await Analytics.open({ dataDir });
      expect(await store.all("SELECT address, name, claimed, held FROM merchants ORDER BY address")).toEqual(
        [
          { address: kept, name: "held.example", claimed: true, held: true },
          { address: ranked, name: null, claimed: false, held: false },
        ].sort((x, y) => x.address.localeCompare(y.address)),
      );
      expect(await store.all("SELECT * FROM report_windows")).toEqual(windows);
      expect(await store.all("SELECT * EXCLUDE (held) FROM reports ORDER BY address")).toEqual(reports);
      expect(await store.all("SELECT address, held FROM reports ORDER BY address")).toEqual(
        [
          { address: kept, held: true },
          { address: ranked, held: false },
        ].sort((x, y) => x.address.localeCompare(y.address)),
      );

      const service = new ReportService(store, { publicUrl: "https://r.test" });
      const { report } = await service.report(kept, END);
      expect(report).toMatchObject({ held: true, frozen: false, rank_by_real_revenue: null });
      expect((await service.leaderboard(END)).unranked.map((e) => [e.address, e.reason])).toEqual([
        [kept, "held"],
      ]);
    } finally {
      store.close();
    }
  });
});
