/**
 * The tokenizer's own merge (tokens.ts) gives o200k_base's tokens, as js-tiktoken's encode does, for text
 * made of ordinary pieces; a run longer than a piece is merged in parts, and special tokens' text is text.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { countTokens, MAX_PIECE_CHARACTERS, tokenize } from "../../../src/merchants/inference/tokens.ts";

const SAMPLES = [
  "Hello, world! How are you today?",
  "The quick brown fox jumps over the lazy dog.\n\n  Indented   spaces\tand tabs\r\n",
  "function foo(bar) { return bar * 2; } // a comment, with 'quotes' and \"more\"",
  "日本語のテキストです。これはテストです。",
  "émigré naïve café: 1234567 and 3.14159, I'm we'll they've",
  "https://example.com/path/to/page?query=value&x=1#fragment",
  "🙂🙃 emoji 👍🏽 and ZWJ 👩‍👩‍👧",
  "SomeCamelCaseIdentifierHere_and_snake_case_too",
];

describe("the o200k_base tokenizer", () => {
  const reference = new Tiktoken(o200k);

  it("encodes ordinary text exactly as js-tiktoken does", () => {
    for (const text of SAMPLES) expect(tokenize(text), text).toEqual(reference.encode(text));
    const long = SAMPLES.join(" ").repeat(50);
    expect(tokenize(long)).toEqual(reference.encode(long));
  });

  it("merges a run longer than a piece in parts of at most MAX_PIECE_CHARACTERS", () => {
    const run = "漢字".repeat(MAX_PIECE_CHARACTERS * 10);
    const part = run.slice(0, MAX_PIECE_CHARACTERS);
    // 1,280 characters with no space: 20 parts of 64, each merged as js-tiktoken merges it alone.
    expect(countTokens(run)).toBe(20 * reference.encode(part).length);
  });

  it("counts special tokens' text as text, never failing on it", () => {
    expect(countTokens("<|endoftext|> hi")).toBeGreaterThan(2);
    expect(tokenize("<|endoftext|>")).not.toContain(199_999);
  });
});
