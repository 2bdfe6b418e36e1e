/**
 * Migration 15 (the flag feed): a store whose windows were built before it has their reports dropped, so
 * that no window is served without its flag rows; the next read builds both. Migration 19 (builder codes) keeps
 * the windows and their flag rows, which gain apps. Migration 22 (attested weeks by chain) keeps every sealed week
 * as Base's.
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

describe("migration 22", () => {
  it("keeps every sealed week, its reports and its attestation, as Base's", async () => {
    let store = await analyticsWith([]);
    const dataDir = store.dataDir;
    try {
      // Back to the tables before migration 22, a sealed and attested week in them.
      await store.run("DROP TABLE attestations");
      await store.run("DROP TABLE attested_reports");
      await store.run(`CREATE TABLE attestations (end_block BIGINT PRIMARY KEY, start_block BIGINT NOT NULL,
        methodology VARCHAR NOT NULL, root VARCHAR NOT NULL, reports INTEGER NOT NULL, feed_hash VARCHAR NOT NULL,
        public_url VARCHAR NOT NULL, sealed_at TIMESTAMP NOT NULL, chain_id BIGINT, attester VARCHAR, nonce BIGINT,
        tx VARCHAR, raw_tx VARCHAR, uid VARCHAR, attested_at TIMESTAMP, conflict_uid VARCHAR)`);
      await store.run(`CREATE TABLE attested_reports (end_block BIGINT NOT NULL, address VARCHAR NOT NULL,
        body VARCHAR NOT NULL, proof VARCHAR NOT NULL, PRIMARY KEY (end_block, address))`);
      await store.run(`INSERT INTO attestations VALUES (${END}, ${END - 302_400}, '1.7.0', '0xr', 1, '0xf',
        'https://r.test', TIMESTAMP '2026-11-23 00:00:00', 8453, '0xa', 3, '0xt', '0xraw', '0xu',
        TIMESTAMP '2026-11-23 00:01:00', NULL)`);
      await store.run(`INSERT INTO attested_reports VALUES (${END}, '0xm', '{"a":1}', '["0xp"]')`);
      await store.run("DELETE FROM schema_migrations WHERE version = 22");
      store.close();
      store = await Analytics.open({ dataDir });
      expect(
        await store.all(
          "SELECT chain, end_block::DOUBLE AS end_block, root, uid, nonce::DOUBLE AS nonce FROM attestations",
        ),
      ).toEqual([{ chain: "base", end_block: END, root: "0xr", uid: "0xu", nonce: 3 }]);
      expect(await store.all("SELECT chain, address, body, proof FROM attested_reports")).toEqual([
        { chain: "base", address: "0xm", body: '{"a":1}', proof: '["0xp"]' },
      ]);
    } finally {
      store.close();
    }
  });
});
