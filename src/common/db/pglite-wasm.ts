/**
 * `PGlite.create` with PostgreSQL's WebAssembly compiled by V8's baseline compiler (Liftoff) only. V8 first
 * compiles WASM with Liftoff, then again with its optimising compiler (TurboFan) for the functions that run
 * often, and the allocator keeps what that second pass used: PGlite opened alone and idle held 226-244 MB,
 * 180-185 MB with Liftoff alone, and 20,000 upserts ran no slower (4.3-4.7 s against 5.0-7.1 s on two busy
 * cores, where the background recompiles compete with the queries). docs/benchmarks-log.md, "A merchant host's memory".
 *
 * The flag is process-wide, so it is on only while a PGlite compiles: other WASM (resvg) keeps both tiers.
 */
import v8 from "node:v8";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";

let compiling = 0;

export async function createPglite(options: PGliteOptions): Promise<PGlite> {
  if (compiling++ === 0) v8.setFlagsFromString("--liftoff-only");
  try {
    return await PGlite.create(options);
  } finally {
    if (--compiling === 0) v8.setFlagsFromString("--no-liftoff-only");
  }
}
