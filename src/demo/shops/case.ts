import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const CASES = [
  "camel",
  "pascal",
  "snake",
  "kebab",
  "constant",
  "title",
  "sentence",
  "lower",
  "upper",
] as const;
type Case = (typeof CASES)[number];

const CaseInput = z.object({
  text: z.string().min(1).max(10_000).describe("The text or identifier to convert, up to 10,000 characters."),
  to: z
    .enum(CASES)
    .describe(
      "Target case: camel (helloWorld), pascal (HelloWorld), snake (hello_world), kebab (hello-world), constant (HELLO_WORLD), title (Hello World), sentence (Hello world), lower, upper.",
    ),
});

const CaseOutput = z.object({
  to: z.enum(CASES),
  result: z.string(),
  words: z.array(z.string()).describe("The words found, lower-case."),
});

/** Splits on anything not a letter or digit, and inside identifiers: fooBar, HTTPServer, x2Y. */
export function splitWords(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

export function convertCase(text: string, to: Case): string {
  const w = splitWords(text);
  switch (to) {
    case "camel":
      return w.map((x, i) => (i === 0 ? x : cap(x))).join("");
    case "pascal":
      return w.map(cap).join("");
    case "snake":
      return w.join("_");
    case "kebab":
      return w.join("-");
    case "constant":
      return w.join("_").toUpperCase();
    case "title":
      return w.map(cap).join(" ");
    case "sentence":
      return cap(w.join(" "));
    case "lower":
      return w.join(" ");
    case "upper":
      return w.join(" ").toUpperCase();
  }
}

export const caseConvert = defineEndpoint({
  method: "POST",
  path: "/case",
  price: "0.002",
  description:
    "Converts text or identifiers between camelCase, PascalCase, snake_case, kebab-case, CONSTANT_CASE, Title Case and more.",
  input: CaseInput,
  output: CaseOutput,
  example: {
    input: { text: "parseHTTPResponse code", to: "snake" },
    output: { to: "snake", result: "parse_http_response_code", words: ["parse", "http", "response", "code"] },
  },
  handler: async (b) => ({ to: b.to, result: convertCase(b.text, b.to), words: splitWords(b.text) }),
});
