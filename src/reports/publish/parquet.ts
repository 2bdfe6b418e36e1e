/**
 * The reports dataset as Parquet, for analysts' tools (DuckDB, pandas, Spark, BigQuery) that read it
 * without parsing JSON: DuckDB reads the published NDJSON and writes it, nested fields as Parquet structs
 * and lists, in a throwaway in-memory database (so a running service's store is never opened for it).
 */
import { DuckDBInstance } from "@duckdb/node-api";

/** Writes `ndjson` (a file of one JSON object a line, at least one) as Parquet at `parquet`. */
export async function ndjsonToParquet(ndjson: string, parquet: string): Promise<void> {
  const instance = await DuckDBInstance.create(":memory:", { threads: "1" });
  const connection = await instance.connect();
  const quoted = (p: string) => `'${p.replaceAll("'", "''")}'`;
  try {
    await connection.run(
      `COPY (SELECT * FROM read_json(${quoted(ndjson)}, format = 'newline_delimited', sample_size = -1,
         maximum_object_size = 67108864)) TO ${quoted(parquet)} (FORMAT parquet, COMPRESSION zstd)`,
    );
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
