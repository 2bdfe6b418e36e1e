/** The pages endpoints as catalogue entries: examples valid against their own schemas, documents buildable. */
import { describe, expect, it } from "vitest";
import { jsonSchemaOf } from "../../../../src/merchant-kit/json-schema.ts";
import { PAGE_ENDPOINTS } from "../../../../src/merchants/utility/pages/index.ts";

describe("the pages catalogue entries", () => {
  it("are the five paths of spec 4.4 at its prices, GET with a `url` query", () => {
    expect(PAGE_ENDPOINTS.map((e) => [e.method, e.path, e.price])).toEqual([
      ["GET", "/api/seo/alt-check", "0.001"],
      ["GET", "/api/scrape", "0.001"],
      ["GET", "/api/seo/metadata", "0.001"],
      ["GET", "/api/summarize", "0.002"],
      ["GET", "/api/a11y/check", "0.01"],
    ]);
    for (const e of PAGE_ENDPOINTS) {
      const input = jsonSchemaOf(e.input, "input") as {
        properties: Record<string, unknown>;
        required: string[];
      };
      expect(input.required, e.path).toEqual(["url"]);
    }
  });

  it.each(PAGE_ENDPOINTS.map((e) => [e.path, e] as const))(
    "%s: example valid and schemas convertible",
    (_, e) => {
      expect(e.input.safeParse(e.example.input).success).toBe(true);
      const output = e.output.safeParse(e.example.output);
      expect(output.error).toBeUndefined();
      expect(jsonSchemaOf(e.output, "output")).toBeTypeOf("object");
    },
  );
});
