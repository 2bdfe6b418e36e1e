import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const JsonInput = z.object({
  json: z.string().min(1).max(200_000).describe("The JSON text to check, up to 200,000 characters."),
  indent: z
    .number()
    .int()
    .min(0)
    .max(8)
    .default(2)
    .describe("Spaces per level, 0-8 (0: minified). Default 2."),
  sort_keys: z
    .boolean()
    .default(false)
    .describe("Sort object keys alphabetically, at every level. Default false."),
});

const JsonOutput = z.object({
  valid: z.boolean(),
  error: z.string().nullable().describe("The parse error, or null."),
  formatted: z.string().nullable().describe("The re-serialised JSON, or null when invalid."),
  type: z.enum(["object", "array", "string", "number", "boolean", "null"]).nullable(),
  depth: z.number().int().nullable().describe("Nesting depth: 0 for a scalar, 1 for a flat object or array."),
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((m: number, c) => Math.max(m, depthOf(c)), 0);
}

export function formatJson(text: string, indent: number, sort: boolean): z.output<typeof JsonOutput> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { valid: false, error: (error as Error).message, formatted: null, type: null, depth: null };
  }
  const type = value === null ? "null" : Array.isArray(value) ? "array" : (typeof value as "object");
  return {
    valid: true,
    error: null,
    formatted: JSON.stringify(sort ? sortKeys(value) : value, null, indent),
    type,
    depth: depthOf(value),
  };
}

export const format = defineEndpoint({
  method: "POST",
  path: "/format",
  price: "0.005",
  description:
    "Validates JSON and pretty-prints (or minifies) it, optionally with sorted keys; invalid JSON gets the parser's error.",
  input: JsonInput,
  output: JsonOutput,
  example: {
    input: { json: '{"b":[1,2],"a":{"c":null}}', sort_keys: true },
    output: {
      valid: true,
      error: null,
      formatted: '{\n  "a": {\n    "c": null\n  },\n  "b": [\n    1,\n    2\n  ]\n}',
      type: "object",
      depth: 2,
    },
  },
  handler: async (b) => formatJson(b.json, b.indent, b.sort_keys),
});
