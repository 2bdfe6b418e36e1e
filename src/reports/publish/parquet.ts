/**
 * The reports dataset as Parquet, for analysts' tools (DuckDB, pandas, Spark, BigQuery) that read it
 * without parsing JSON: DuckDB reads the published NDJSON and writes it, nested fields as Parquet structs
 * and lists, in a throwaway in-memory database (so a running service's store is never opened for it).
 */
import { DuckDBInstance } from "@duckdb/node-api";

/**
 * Writes `ndjson` (a file of one JSON object a line) as Parquet at `parquet`. Without `columns` (name to
 * DuckDB type) they are read from the records, which needs at least one; with them, an empty file is a
 * Parquet file of those columns and no rows, and a column null in every record keeps its type.
 */
export async function ndjsonToParquet(
  ndjson: string,
  parquet: string,
  columns?: Record<string, string>,
): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:", { threads: "1" });
  const connection = await instance.connect();
  const quoted = (p: string) => `'${p.replaceAll("'", "''")}'`;
  try {
    await connection.run(
      `COPY (SELECT * FROM read_json(${quoted(ndjson)}, format = 'newline_delimited', sample_size = -1,
         maximum_object_size = 67108864${columns ? `, columns = ${structOf(columns)}` : ""}))
       TO ${quoted(parquet)} (FORMAT parquet, COMPRESSION zstd)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** DuckDB's `{name: 'TYPE', ...}` of read_json's `columns`, from names and types of the caller's own. */
function structOf(columns: Record<string, string>): string {
  const entries = Object.entries(columns).map(([name, type]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name) || !/^[A-Z]+$/.test(type))
      throw new Error(`not a column: ${name} ${type}`);
    return `${name}: '${type}'`;
  });
  return `{${entries.join(", ")}}`;
}
