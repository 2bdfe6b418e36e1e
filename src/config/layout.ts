/**
 * What lives where in a data directory (`--data`, `X402M_DATA`). Every path of the program's own files
 * comes from here, so a newcomer (or an operator backing up) reads the layout in one place.
 *
 * ```
 * DIR/analytics.duckdb        the analytics database (payments, transfers, listings, reports)
 * DIR/tmp/                    DuckDB's spill space past its memory limit
 * DIR/postgres/               merchant state on PGlite (collections, scratchpads, payment ledger)
 * DIR/facilitator-postgres/   the facilitator's ledger and Bazaar on PGlite
 * DIR/demo/                   the demo: world.json, chain/state.json, truth.ndjson, merchants.ndjson
 * ```
 *
 * With `DATABASE_URL`, the merchant state and the facilitator live in that server instead (each with its
 * own connections); the two PGlite directories are then unused.
 */
import path from "node:path";

export interface DataLayout {
  dir: string;
  analytics: { file: string; spill: string };
  /** PGlite directories: one per service that keeps PostgreSQL state (PGlite allows one process each). */
  pglite: { merchants: string; facilitator: string };
  demo: { dir: string; world: string; chain: string; truth: string; merchants: string };
}

export function dataLayout(dataDir: string): DataLayout {
  const dir = path.resolve(dataDir);
  const demo = path.join(dir, "demo");
  return {
    dir,
    analytics: { file: path.join(dir, "analytics.duckdb"), spill: path.join(dir, "tmp") },
    pglite: { merchants: path.join(dir, "postgres"), facilitator: path.join(dir, "facilitator-postgres") },
    demo: {
      dir: demo,
      world: path.join(demo, "world.json"),
      chain: path.join(demo, "chain"),
      truth: path.join(demo, "truth.ndjson"),
      merchants: path.join(demo, "merchants.ndjson"),
    },
  };
}
