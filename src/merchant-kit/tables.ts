import { type Database, migrate } from "../common/db/index.ts";
import { log } from "../common/log.ts";
import type { AnyEndpoint, Tables } from "./endpoint.ts";

/** How often each module's sweep runs. */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Migrates the tables the endpoints declare (each module once), then runs each module's sweep now and
 * hourly. The sweeps run on the database itself, never inside a request's transaction; their timers do
 * not keep the process alive, and a failed sweep is logged and tried again next hour.
 */
export async function startTables(db: Database, endpoints: readonly AnyEndpoint[]): Promise<void> {
  const modules = new Map<string, Tables>();
  for (const e of endpoints) for (const t of [e.tables ?? []].flat()) modules.set(t.module, t);
  for (const tables of modules.values()) {
    await migrate(db, tables.module, tables.migrations);
    const sweep = tables.sweep;
    if (!sweep) continue;
    const run = () =>
      sweep(db).catch((error: unknown) => log("warn", "sweep failed", { module: tables.module, error }));
    await run();
    setInterval(run, SWEEP_INTERVAL_MS).unref();
  }
}
