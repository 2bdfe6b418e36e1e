/**
 * PostgreSQL state shared by the services (facilitator ledger and Bazaar; later the merchant APIs'
 * collections, scratchpads and replay locks): one small interface over embedded PGlite or a server, and
 * versioned migrations per module.
 */
export {
  type Database,
  DatabaseBusyError,
  DatabaseDamagedError,
  DatabaseError,
  type DatabaseKind,
  type DatabaseOptions,
  type Queryable,
  type QueryResult,
} from "./database.ts";
export { type Migration, MigrationError, migrate } from "./migrate.ts";
export { openDatabase } from "./open.ts";
