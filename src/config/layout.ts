/**
 * What lives where in a data directory (`--data`, `X402M_DATA`). Every path of the program's own files
 * comes from here, so a newcomer (or an operator backing up) reads the layout in one place.
 *
 * ```
 * DIR/analytics.duckdb        the analytics database (payments, transfers, listings, reports)
 * DIR/report-service.json     the running report service that holds it (pid, url): where readers ask
 * DIR/tmp/                    DuckDB's spill space past its memory limit
 * DIR/postgres/               merchant state on PGlite (collections, scratchpads, payment ledger)
 * DIR/facilitator-postgres/   the facilitator's ledger and Bazaar on PGlite
 *   <pglite>/x402m-relation-files.json   each relation's file and size, checked at every open
 *   <pglite>.lock                         the pid of the process that has it open
 *   <pglite>.creating, <pglite>.check     scratch of a first start, of a check after a crash (removed)
 * DIR/demo/                   the demo: world.json, chain/state.json.gz, truth.ndjson, truth-complete.json,
 *                             merchants.ndjson
 * DIR/demo/<slug>/            a further chain the demo plays (arbitrum): chain/state.json.gz, truth.ndjson,
 *                             truth-complete.json
 * ```
 *
 * With `DATABASE_URL`, the merchant state and the facilitator live in that server instead (each with its
 * own connections); the two PGlite directories are then unused. Back a PGlite directory up while no
 * process has it open (no `.lock` beside it), whole: a directory that lost files is refused at start
 * (src/common/db/pglite.ts).
 */
import path from "node:path";

export interface DataLayout {
  dir: string;
  analytics: { file: string; spill: string };
  /** The record of the report service serving this directory (src/config/service-record.ts). */
  reportService: string;
  /** PGlite directories: one per service that keeps PostgreSQL state (PGlite allows one process each). */
  pglite: { merchants: string; facilitator: string };
  demo: {
    dir: string;
    world: string;
    chain: string;
    truth: string;
    /** The block up to which truth.ndjson is complete (src/demo/truth.ts). */
    truthComplete: string;
    merchants: string;
    /** A further chain the demo plays beside Base (issue 67 item 7): its saved chain and its ground truth. */
    further(slug: string): DemoChainFiles;
  };
}

/** Where the demo keeps one chain's files: Base's directly under `demo/`, a further chain's in `demo/<slug>/`. */
export interface DemoChainFiles {
  dir: string;
  chain: string;
  truth: string;
  truthComplete: string;
}

export function dataLayout(dataDir: string): DataLayout {
  const dir = path.resolve(dataDir);
  const demo = path.join(dir, "demo");
  return {
    dir,
    analytics: { file: path.join(dir, "analytics.duckdb"), spill: path.join(dir, "tmp") },
    reportService: path.join(dir, "report-service.json"),
    pglite: { merchants: path.join(dir, "postgres"), facilitator: path.join(dir, "facilitator-postgres") },
    demo: {
      dir: demo,
      world: path.join(demo, "world.json"),
      chain: path.join(demo, "chain"),
      truth: path.join(demo, "truth.ndjson"),
      truthComplete: path.join(demo, "truth-complete.json"),
      merchants: path.join(demo, "merchants.ndjson"),
      further: (slug) => {
        const dir = path.join(demo, slug);
        return {
          dir,
          chain: path.join(dir, "chain"),
          truth: path.join(dir, "truth.ndjson"),
          truthComplete: path.join(dir, "truth-complete.json"),
        };
      },
    },
  };
}
