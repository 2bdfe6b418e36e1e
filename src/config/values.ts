/**
 * The kinds of value settings take, shared by every section of the configuration (src/config/section.ts),
 * and how a raw environment string becomes a list of them.
 */
import fs from "node:fs";
import { z } from "zod";
import { ConfigError } from "./config-error.ts";

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

/** A private key as the settings take it: 32 bytes in hex, 0x-prefixed. */
export const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;

/**
 * A private key from the environment: `variable`, or the content of the file `<variable>_FILE` names
 * (whitespace trimmed), never both; else the one `fallback` names, read the same way (an alias host's is its
 * source's). Null: none set. A refusal names the setting, never the content.
 */
export function readKeySetting(env: Env, variable: string, fallback?: string): string | null {
  const file = env[`${variable}_FILE`];
  if (!file) {
    const key = env[variable];
    if (key) return key;
    return fallback ? readKeySetting(env, fallback) : null;
  }
  if (env[variable])
    throw new ConfigError(
      `both ${variable} and ${variable}_FILE are set: pick one (the file keeps the key out of the environment)`,
    );
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8").trim();
  } catch (error) {
    throw new ConfigError(
      `invalid ${variable}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
    );
  }
  if (!PRIVATE_KEY.test(content))
    throw new ConfigError(
      `invalid ${variable}_FILE: ${file} must hold a 32-byte private key in hex, 0x-prefixed, and nothing else`,
    );
  return content;
}

/**
 * The variable that gives the JSON-RPC of the chain `slug` (X402M_RPC_URL_BASE, X402M_RPC_URL_POLYGON, ...):
 * the chain `serve` follows, and where merchants paid on it read their payers' funds.
 */
export const chainRpcVariable = (slug: string): string =>
  `X402M_RPC_URL_${slug.toUpperCase().replace(/-/g, "_")}`;

/** The variable of a chain's own facilitator setting: X402M_FACILITATOR_KEY_POLYGON, ..._PAYEES_POLYGON. */
export const facilitatorChainVariable = (setting: "KEY" | "PAYEES", slug: string): string =>
  `X402M_FACILITATOR_${setting}_${slug.toUpperCase().replace(/-/g, "_")}`;
