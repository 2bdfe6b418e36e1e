/**
 * Migration 15 (the flag feed): a store whose windows were built before it has their reports dropped, so
 * that no window is served without its flag rows; the next read builds both. Migration 19 (builder codes) keeps
 * the windows and their flag rows, which gain apps.
 */
import { describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { ReportService } from "../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, repeat } from "../helpers/data.ts";

describe("migration 15", () => {
  it("drops the windows built before it and adds report_flags, which the next build fills", async () => {
    const m = addr("migration-merchant");
    let store = await analyticsWith(repeat(12, { payer: addr("migration-farm"), payTo: m, amount: 100 }));
    const dataDir = store.dataDir;
    try {
      await new ReportService(store, { publicUrl: "https://r.test" }).report(m, END);
      // Back to the schema before migration 15, a window stored; and before 19, which makes report_flags again.
      await store.run("DROP TABLE report_flags");
      for (const column of ["builder_app", "builder_wallet", "builder_services"])
        await store.run(`ALTER TABLE payments DROP COLUMN ${column}`);
      await store.run("DELETE FROM schema_migrations WHERE version IN (15, 19)");
      store.close();
      store = await Analytics.open({ dataDir });
      expect(await store.all("SELECT count(*)::INTEGER AS n FROM report_windows")).toEqual([{ n: 0 }]);
      expect(await store.all("SELECT count(*)::INTEGER AS n FROM reports")).toEqual([{ n: 0 }]);
      await new ReportService(store, { publicUrl: "https://r.test" }).report(m, END);
      expect(await store.all("SELECT wallet, kind FROM report_flags")).toEqual([
        { wallet: addr("migration-farm"), kind: "tiny_repeat" },
      ]);
    } finally {
      store.close();
    }
  });

  it("19 keeps every stored window, its reports and its flag rows, with no apps", async () => {
    const m = addr("migration-19-merchant");
    let store = await analyticsWith(repeat(12, { payer: addr("migration-19-farm"), payTo: m, amount: 100 }));
    const dataDir = store.dataDir;
    try {
      await new ReportService(store, { publicUrl: "https://r.test" }).report(m, END);
      const windows = await store.all("SELECT * FROM report_windows");
      const reports = await store.all("SELECT count(*)::INTEGER AS n FROM reports");
      // Back to the schema before migration 19: report_flags without apps, payments without codes.
      await store.run("ALTER TABLE report_flags RENAME TO report_flags_19");
      await store.run("CREATE TABLE report_flags AS SELECT * EXCLUDE (apps) FROM report_flags_19");
      await store.run("DROP TABLE report_flags_19");
      for (const column of ["builder_app", "builder_wallet", "builder_services"])
        await store.run(`ALTER TABLE payments DROP COLUMN ${column}`);
      await store.run("DELETE FROM schema_migrations WHERE version = 19");
      store.close();
      store = await Analytics.open({ dataDir });
      expect(await store.all("SELECT * FROM report_windows")).toEqual(windows);
      expect(await store.all("SELECT count(*)::INTEGER AS n FROM reports")).toEqual(reports);
      expect(await store.all("SELECT wallet, kind, apps FROM report_flags")).toEqual([
        { wallet: addr("migration-19-farm"), kind: "tiny_repeat", apps: null },
      ]);
    } finally {
      store.close();
    }
  });
});
