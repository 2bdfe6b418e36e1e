/**
 * The kinds of value settings take, shared by every section of the configuration (src/config/section.ts),
 * and how a raw environment string becomes a list of them.
 */
import { z } from "zod";

/** The environment a configuration is read from: `process.env`, or a test's own. */
export type Env = Record<string, string | undefined>;

export const Port = z.coerce
  .number({ error: "a port from 0 to 65535" })
  .int("a port from 0 to 65535")
  .min(0, "a port from 0 to 65535")
  .max(65535, "a port from 0 to 65535");

/** An http(s) base URL, kept without its trailing slashes (paths are appended to it). */
export const BaseUrl = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ""));

/** A memory size such as "1GB" or "512 MiB". */
export const Size = z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, "a size such as 1GB");

/** A comma-separated setting's entries, trimmed, empty ones dropped. */
export function commaList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** A `name=value,...` setting's pairs, trimmed; a pair without `=` has an empty value (refused by its schema). */
export function namedValues(value: string | undefined): Record<string, string> {
  return Object.fromEntries(
    commaList(value).map((pair) => {
      const at = pair.indexOf("=");
      return at < 0 ? [pair, ""] : [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}
