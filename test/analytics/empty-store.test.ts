/**
 * The tests' new stores are copies of one empty store (test/helpers/data.ts, `tempAnalytics`): a copy must be what
 * `Analytics.open` makes of an empty directory, or every test on a copy would test another schema.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { emptyStoreDir, tempAnalytics } from "../helpers/data.ts";
import { openTempAnalytics } from "../helpers/indexer.ts";

const open: Analytics[] = [];
afterEach(() => {
  for (const a of open.splice(0)) a.close();
});

/** Everything the catalog says of a store's own objects, in one order (not DuckDB's internal ones). */
async function schema(a: Analytics) {
  const own = "database_name = current_database() AND NOT internal";
  const queries = {
    tables: `SELECT schema_name, table_name, temporary, has_primary_key, column_count, sql FROM duckdb_tables() WHERE ${own}`,
    columns: `SELECT schema_name, table_name, column_index, column_name, data_type, column_default, is_nullable,
        numeric_precision, numeric_scale FROM duckdb_columns() WHERE ${own}`,
    constraints: `SELECT schema_name, table_name, constraint_index, constraint_type, constraint_text,
        constraint_column_names FROM duckdb_constraints() WHERE database_name = current_database()`,
    indexes: `SELECT schema_name, table_name, index_name, is_unique, is_primary, expressions, sql FROM duckdb_indexes()
        WHERE database_name = current_database()`,
    views: `SELECT schema_name, view_name, sql FROM duckdb_views() WHERE ${own}`,
    sequences: `SELECT schema_name, sequence_name, start_value, increment_by, last_value, sql FROM duckdb_sequences()
        WHERE database_name = current_database()`,
    macros: `SELECT schema_name, function_name, function_type, parameters, macro_definition FROM duckdb_functions()
        WHERE database_name = current_database() AND NOT internal`,
    migrations: "SELECT version, name FROM schema_migrations",
    meta: "SELECT key, value FROM meta",
  };
  const out: Record<string, unknown> = {};
  for (const [name, sql] of Object.entries(queries)) {
    out[name] = JSON.parse(
      JSON.stringify(await a.all(`${sql} ORDER BY ALL`), (_, v) =>
        typeof v === "bigint" ? v.toString() : v,
      ),
    );
  }
  return out;
}

describe("the tests' empty analytics store", () => {
  it("is a single checkpointed file, whose copies have the schema and rows a new store has", async () => {
    const template = await emptyStoreDir();
    expect(fs.readdirSync(template).filter((f) => f.endsWith(".wal"))).toEqual([]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-new-"));
    const fresh = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    open.push(fresh);
    const expected = await schema(fresh);
    expect((expected.tables as unknown[]).length).toBeGreaterThan(20);
    expect((expected.migrations as unknown[]).length).toBeGreaterThan(20);
    expect((expected.constraints as unknown[]).length).toBeGreaterThan(20);
    for (const copy of [
      await tempAnalytics(),
      await tempAnalytics({ threads: 4 }),
      await openTempAnalytics(),
    ]) {
      open.push(copy);
      expect(path.dirname(copy.file)).not.toBe(template);
      expect(await schema(copy)).toEqual(expected);
      expect(await copy.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 0n });
    }
    // The comparison sees a difference of one column's default.
    const changed = await tempAnalytics();
    open.push(changed);
    await changed.run("ALTER TABLE merchants ALTER COLUMN name SET DEFAULT 'x'");
    expect(await schema(changed)).not.toEqual(expected);
  });

  it("is copied into a directory given without a store, and never over one", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-indexer-"));
    const first = await openTempAnalytics(dir);
    await first.run("INSERT INTO meta VALUES ('kept', 'yes')");
    first.close();
    const again = await openTempAnalytics(dir);
    open.push(again);
    expect(await again.one("SELECT value FROM meta WHERE key = 'kept'")).toEqual({ value: "yes" });
  });
});
