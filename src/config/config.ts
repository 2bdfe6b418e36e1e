import path from "node:path";
import { z } from "zod";

/**
 * The one validated configuration. Read once at start from flags and the environment;
 * every module receives the slice it needs as a parameter and never reads `process.env` itself.
 */
export const ConfigSchema = z.object({
  /** Where the analytics store (DuckDB) lives. */
  dataDir: z.string().min(1),
  /** Base of the `page` and `badge` URLs written into reports; null = the server's own address. */
  publicUrl: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ""))
    .nullable(),
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  /** DuckDB memory limit, e.g. "1GB"; DuckDB spills to the data directory past it. */
  duckdbMemory: z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, "a size such as 1GB"),
  duckdbThreads: z.coerce.number().int().min(1).max(256).nullable(),
  /**
   * Merchant and facilitator state (PostgreSQL): a server when set (`DATABASE_URL`), else embedded
   * PGlite in `<dataDir>/postgres`.
   */
  databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).nullable(),
});

export type Config = z.infer<typeof ConfigSchema>;

export const DEFAULT_PORT = 8402;
export const DEFAULT_PUBLIC_URL = `http://127.0.0.1:${DEFAULT_PORT}`;

export interface ConfigInput {
  /** Command-line values; undefined means "not given". */
  flags?: Partial<Record<"data" | "publicUrl" | "host" | "port", string | undefined>>;
  env?: Record<string, string | undefined>;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Flags win over the environment, the environment over the defaults. */
export function loadConfig({ flags = {}, env = {} }: ConfigInput = {}): Config {
  const raw = {
    dataDir: path.resolve(flags.data ?? env.X402M_DATA ?? "data"),
    publicUrl: flags.publicUrl ?? env.X402M_PUBLIC_URL ?? null,
    host: flags.host ?? env.X402M_HOST ?? "127.0.0.1",
    port: flags.port ?? env.PORT ?? String(DEFAULT_PORT),
    duckdbMemory: env.X402M_DUCKDB_MEMORY ?? "1GB",
    duckdbThreads: env.X402M_DUCKDB_THREADS ?? null,
    databaseUrl: env.DATABASE_URL || null,
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`invalid configuration: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}
