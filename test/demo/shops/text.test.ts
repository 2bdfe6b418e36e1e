import { describe, expect, it } from "vitest";
import { BadInputError } from "../../../src/common/errors.ts";
import { decode, decodeBase64, encode } from "../../../src/demo/shops/base64.ts";
import { caseConvert, convertCase, splitWords } from "../../../src/demo/shops/case.ts";
import { diff, diffTexts } from "../../../src/demo/shops/diff.ts";
import { format, formatJson } from "../../../src/demo/shops/json.ts";
import { lorem } from "../../../src/demo/shops/lorem.ts";
import { slug, slugify } from "../../../src/demo/shops/slugify.ts";
import { count, countText, syllables, textReport } from "../../../src/demo/shops/text-stats.ts";
import { call } from "./helpers.ts";

describe("base64", () => {
  it("round-trips UTF-8 text, standard and URL-safe", async () => {
    const text = "héllo ✓ 🚀 ???>>>";
    const std = (await call(encode, { text })) as { base64: string };
    const url = (await call(encode, { text, url_safe: true })) as { base64: string };
    expect(std.base64).toBe(Buffer.from(text).toString("base64"));
    expect(url.base64).not.toMatch(/[+/=]/);
    expect(await call(decode, { base64: std.base64 })).toMatchObject({ text });
    expect(await call(decode, { base64: url.base64 })).toMatchObject({ text });
  });

  it("gives hex and null text for bytes that are not UTF-8", async () => {
    expect(await call(decode, { base64: "/w==" })).toEqual({ text: null, hex: "ff", bytes: 1 });
  });

  it("refuses what is not base64", () => {
    expect(() => decodeBase64("abc!")).toThrow(BadInputError);
    expect(() => decodeBase64("a")).toThrow(BadInputError);
    expect(() => decodeBase64("a+b_")).toThrow(BadInputError);
  });
});

describe("slugify", () => {
  it("strips accents, joins words and cuts at a word boundary", () => {
    expect(slugify("Crème Brûlée Straße", "_")).toBe("creme_brulee_strasse");
    expect(slugify("one two three four", "-", 13)).toBe("one-two-three");
    expect(slugify("supercalifragilistic", "-", 5)).toBe("super");
  });

  it("refuses text with nothing to slug", async () => {
    await expect(call(slug, { text: "🚀🚀" })).rejects.toThrow(BadInputError);
    expect(slug.input.safeParse({ text: "x", max_length: "0" }).success).toBe(false);
    expect(slug.input.safeParse({ text: "" }).success).toBe(false);
  });
});

describe("case converter", () => {
  it("splits identifiers and converts", () => {
    expect(splitWords("XMLHttpRequest_id-2")).toEqual(["xml", "http", "request", "id", "2"]);
    expect(convertCase("hello world", "pascal")).toBe("HelloWorld");
    expect(convertCase("hello_world", "camel")).toBe("helloWorld");
    expect(convertCase("helloWorld", "constant")).toBe("HELLO_WORLD");
    expect(convertCase("helloWorld", "kebab")).toBe("hello-world");
    expect(convertCase("HELLO world", "sentence")).toBe("Hello world");
    expect(convertCase("the old man", "title")).toBe("The Old Man");
  });

  it("refuses an unknown case", () => {
    expect(caseConvert.input.safeParse({ text: "a", to: "spongebob" }).success).toBe(false);
  });
});

describe("text statistics", () => {
  it("counts words, sentences and paragraphs", () => {
    const r = countText("One two three. Four five!\n\nSix seven eight nine? Ten.");
    expect(r).toMatchObject({ words: 10, sentences: 4, paragraphs: 2 });
    expect(r.reading_time_seconds).toBe(Math.ceil((10 / 238) * 60));
  });

  it("counts syllables roughly right", () => {
    expect(syllables("cat")).toBe(1);
    expect(syllables("table")).toBe(2);
    expect(syllables("beautiful")).toBe(3);
  });

  it("reports Flesch scores: simple text reads easier than dense text", () => {
    const easy = textReport("The cat sat on the mat. The dog ran. It was fun.");
    const hard = textReport(
      "Notwithstanding considerable institutional heterogeneity, comprehensive organisational restructuring necessitates interdisciplinary collaboration.",
    );
    expect(easy.flesch_reading_ease).toBeGreaterThan(90);
    expect(hard.flesch_reading_ease).toBeLessThan(10);
    expect(hard.flesch_kincaid_grade).toBeGreaterThan(easy.flesch_kincaid_grade);
    expect(easy.top_words[0]).toEqual({ word: "cat", count: 1 });
    expect(hard.longest_word).toBe("interdisciplinary");
  });

  it("refuses empty text", () => {
    expect(count.input.safeParse({ text: "" }).success).toBe(false);
  });
});

describe("lorem ipsum", () => {
  it("is reproducible from a seed and sized as asked", () => {
    const a = lorem(3, 5, "x");
    expect(lorem(3, 5, "x")).toEqual(a);
    expect(lorem(3, 5, "y")).not.toEqual(a);
    expect(a.paragraphs).toHaveLength(3);
    expect(a.paragraphs[0]).toMatch(/^Lorem ipsum dolor sit amet/);
    for (const p of a.paragraphs) expect(p.match(/\./g)).toHaveLength(5);
  });
});

describe("JSON tidy", () => {
  it("pretty-prints, minifies and sorts keys", () => {
    expect(formatJson('{ "b": 1, "a": [true] }', 0, true).formatted).toBe('{"a":[true],"b":1}');
    expect(formatJson("42", 2, false)).toMatchObject({ valid: true, type: "number", depth: 0 });
  });

  it("reports invalid JSON without failing", async () => {
    const r = (await call(format, { json: '{"a":}' })) as { valid: boolean; error: string | null };
    expect(r.valid).toBe(false);
    expect(r.error).toBeTruthy();
    expect(format.input.safeParse({ json: "{}", indent: 9 }).success).toBe(false);
  });
});

describe("diff", () => {
  it("marks identical texts", () => {
    expect(diffTexts("a\nb\n", "a\nb")).toMatchObject({
      identical: true,
      added: 0,
      removed: 0,
      unchanged: 2,
    });
  });

  it("finds a minimal edit", () => {
    const r = diffTexts("a\nb\nc\nd", "a\nc\nd\ne");
    expect(r.patch).toBe(" a\n-b\n c\n d\n+e");
  });

  it("refuses too many lines", async () => {
    await expect(call(diff, { a: "x\n".repeat(501), b: "" })).rejects.toThrow(BadInputError);
  });
});
