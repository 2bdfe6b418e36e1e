/**
 * Validation of a `bazaar` extension's `info` against its own `schema`, as `@x402/extensions`'
 * `validateDiscoveryExtension` does it (Ajv, JSON Schema 2020-12, `strict: false`, `allErrors: true`, no
 * external `$ref`/`$id`), but with each distinct schema compiled once: the SDK builds a new Ajv and compiles
 * the schema (and the 2020-12 meta-schema) on every call, about 8 ms of CPU per settlement.
 *
 * The schema comes from the buyer's echo of the payment (untrusted), so:
 * - one long-lived Ajv with `addUsedSchema: false`: a compiled schema is never registered under its `$id`
 *   (two payloads with the same `$id` and different bodies are each validated against their own body), and
 *   Ajv's own per-object cache entry is removed after each compilation (it would otherwise grow forever);
 * - compiled validators are kept in a bounded, least-recently-used Map keyed by the schema's canonical JSON
 *   (object keys sorted), compilation failures included;
 * - a schema over `MAX_SCHEMA_BYTES` of JSON, or with a `$ref`/`$id` that is not local (`#...`), fails.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/** The largest schema (canonical JSON, UTF-8 bytes) that is compiled. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** How many compiled schemas are kept. */
export const MAX_CACHED_SCHEMAS = 256;

export type BazaarValidation = { valid: true } | { valid: false; errors: string[] };

/** A compiled schema, or why it does not compile. */
type Compiled = { validate: ValidateFunction } | { error: string };

// Formats are not checked, as in the SDK (which has no format plugin): `validateFormats: false` says so
// instead of warning "unknown format ignored" on stderr for every schema with a `format`.
const ajv = new Ajv2020({ strict: false, allErrors: true, addUsedSchema: false, validateFormats: false });
const compiled = new Map<string, Compiled>();
let compilations = 0;

/**
 * Validates `extension.info` against `extension.schema`; never throws. The same verdicts as the SDK's
 * `validateDiscoveryExtension`, plus the size limit.
 */
export function validateBazaarExtension(extension: { schema?: unknown; info?: unknown }): BazaarValidation {
  try {
    const { schema } = extension;
    if (hasExternalSchemaReference(schema)) {
      return { valid: false, errors: ["schema must not contain external $ref/$id references"] };
    }
    const backtracking = backtrackingPattern(schema);
    if (backtracking !== undefined) {
      return {
        valid: false,
        errors: [
          `schema's pattern ${JSON.stringify(backtracking.slice(0, 80))} repeats a group that holds a quantifier or an alternation`,
        ],
      };
    }
    const key = canonicalJson(schema);
    if (key === undefined) return { valid: false, errors: ["Schema validation failed: no schema"] };
    if (Buffer.byteLength(key, "utf8") > MAX_SCHEMA_BYTES) {
      return { valid: false, errors: [`schema is larger than ${MAX_SCHEMA_BYTES} bytes of JSON`] };
    }
    const entry = lookup(key);
    if ("error" in entry) return { valid: false, errors: [`Schema validation failed: ${entry.error}`] };
    const { validate } = entry;
    if (validate(extension.info)) return { valid: true };
    const errors = validate.errors?.map((err) => `${err.instancePath || "(root)"}: ${err.message}`) ?? [
      "Unknown validation error",
    ];
    return { valid: false, errors };
  } catch (error) {
    // A schema nested deep enough to overflow the stack, for one.
    return { valid: false, errors: [`Schema validation failed: ${messageOf(error)}`] };
  }
}

/** The compiled schema for `key`, compiling it (from a private copy) at most once while it stays cached. */
function lookup(key: string): Compiled {
  const hit = compiled.get(key);
  if (hit) {
    // Most recently used last.
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const schema: unknown = JSON.parse(key);
  let entry: Compiled;
  compilations++;
  try {
    entry = { validate: ajv.compile(schema as object) };
  } catch (error) {
    entry = { error: messageOf(error) };
  } finally {
    // Ajv keeps every schema object it saw (even with addUsedSchema: false, even when compiling failed).
    if (schema !== null && typeof schema === "object") ajv.removeSchema(schema);
  }
  if (compiled.size >= MAX_CACHED_SCHEMAS) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(key, entry);
  return entry;
}

/** How many schemas were compiled and how many are cached (for tests and diagnostics). */
export function bazaarValidationStats(): { compilations: number; cached: number } {
  return { compilations, cached: compiled.size };
}

/** Empties the cache (for tests). */
export function clearBazaarValidationCache(): void {
  compiled.clear();
}

/** The SDK's check: any `$ref` or `$id` key, at any depth, whose value is not a string starting with "#". */
function hasExternalSchemaReference(node: unknown): boolean {
  if (Array.isArray(node)) return node.some((item) => hasExternalSchemaReference(item));
  if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if ((key === "$ref" || key === "$id") && (typeof value !== "string" || !value.startsWith("#"))) {
        return true;
      }
      if (hasExternalSchemaReference(value)) return true;
    }
  }
  return false;
}

/**
 * The first regular expression of the schema (a `pattern`, or a key of `patternProperties`, at any depth) that
 * repeats a group holding a quantifier or an alternation (`(a+)+`, `(a|aa)*`, `(\\d{1,3}\\.?)+`): the shape
 * whose backtracking grows exponentially with the string it is tried on. The schema is the buyer's, and the
 * info it is tested on too: `^(a+)+$` against thirty `a`s and a `!` held the event loop for seconds (issue 83),
 * after a payment of a cent. JavaScript's engine backtracks and no linear one is at hand, so the shape is
 * refused before anything compiles; a listing's real patterns (ids, dates, hosts) have no such group.
 */
export function backtrackingPattern(node: unknown, depth = 0): string | undefined {
  if (depth > 64 || node === null || typeof node !== "object") return undefined;
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = backtrackingPattern(item, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "pattern" && typeof value === "string" && repeatsAmbiguousGroup(value)) return value;
    if (key === "patternProperties" && value && typeof value === "object") {
      const risky = Object.keys(value).find(repeatsAmbiguousGroup);
      if (risky !== undefined) return risky;
    }
    const found = backtrackingPattern(value, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether `source` has a group, followed by `*`, `+` or `{n,}`/`{n,m}`, that holds a quantifier or a `|`. */
function repeatsAmbiguousGroup(source: string): boolean {
  // Per open group: whether it holds a quantifier or an alternation, its own nested groups' included.
  const open: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      continue;
    }
    if (ch === "[") inClass = true;
    else if (ch === "(") open.push(false);
    else if (ch === ")") {
      const ambiguous = open.pop() ?? false;
      if (ambiguous && repeats(source, i + 1)) return true;
      if (ambiguous && open.length > 0) open[open.length - 1] = true;
    } else if (ch === "|" || repeats(source, i)) {
      if (open.length > 0) open[open.length - 1] = true;
    }
  }
  return false;
}

/** Whether a repetition starts at `i`: `*`, `+`, or a brace quantifier allowing more than one. */
function repeats(source: string, i: number): boolean {
  const ch = source[i];
  if (ch === "*" || ch === "+") return true;
  if (ch !== "{") return false;
  const brace = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24));
  if (!brace) return false;
  return brace[2] !== undefined && (brace[3] === "" || Number(brace[3]) > 1);
}

/** JSON with object keys sorted (undefined when `value` has no JSON form, as JSON.stringify). */
function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, node: unknown) => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(node).sort()) {
      Object.defineProperty(sorted, key, {
        value: (node as Record<string, unknown>)[key],
        enumerable: true,
        configurable: true,
        writable: true,
      });
    }
    return sorted;
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
