/** `/api/summarize`: TextRank on the saved article, deterministic, sentences in document order. */
import { describe, expect, it } from "vitest";
import { parsePage } from "../../../../src/merchants/utility/pages/parse.ts";
import { summarizePage } from "../../../../src/merchants/utility/pages/summarize-engine.ts";
import {
  contentWords,
  similarity,
  splitSentences,
  textRank,
} from "../../../../src/merchants/utility/pages/textrank.ts";
import { fixturePage } from "./fixtures.ts";

const URL_ = "https://shore.example.com/guides/tide-pools";

describe("summarizePage", () => {
  it("picks the key sentences of the article, in document order", () => {
    const result = summarizePage(fixturePage("article", URL_), 3);
    expect(result.key_sentences).toEqual([
      "Tide pools are small worlds left behind by the falling sea, and every rock pool on the shore holds its own community of animals and seaweeds.",
      "The best time to explore tide pools is during a spring low tide, when the sea drops furthest and exposes the lower shore.",
      "Shore crabs hide under rocks and seaweed during the day and come out to feed when the tide pool is covered again.",
    ]);
    expect(result.scores.map((s) => s.index)).toEqual([0, 2, 7]);
    expect(result).toMatchObject({
      url: URL_,
      title: "What lives in a tide pool",
      summary: result.key_sentences.join(" "),
      sentence_count: 14,
      original_word_count: 303,
      summary_word_count: 71,
      method: "textrank",
    });
  });

  it("is deterministic, and a longer summary contains the shorter one", () => {
    const page = () => fixturePage("article", URL_);
    expect(summarizePage(page(), 5)).toEqual(summarizePage(page(), 5));
    const five = summarizePage(page(), 5).key_sentences;
    expect(five).toHaveLength(5);
    for (const s of summarizePage(page(), 3).key_sentences) expect(five).toContain(s);
  });

  it("never summarizes the navigation, ads or footer", () => {
    const all = summarizePage(fixturePage("article", URL_), 10).key_sentences.join(" ");
    expect(all).not.toMatch(/wetsuits|Sponsored|rights reserved|buckets/);
  });

  it("refuses a page with no sentence to rank (422, not charged)", () => {
    const page = parsePage(
      "<html><body><nav><a href='/'>Home</a></nav></body></html>",
      "https://example.com/",
    );
    expect(() => summarizePage(page, 3)).toThrow(expect.objectContaining({ status: 422, code: "no_text" }));
  });
});

describe("TextRank pieces", () => {
  it("splits paragraphs into sentences and drops fragments under five words", () => {
    expect(
      splitSentences(
        "Dr. Smith arrived at 9 a.m. on Monday. Hello there.\n\nShort heading\n\nThe sea was calm all day long.",
      ),
    ).toEqual(["Dr. Smith arrived at 9 a.m. on Monday.", "The sea was calm all day long."]);
  });

  it("measures similarity as shared content words over the log lengths", () => {
    const a = contentWords("The crabs hide under the rocks");
    expect([...a]).toEqual(["crab", "hide", "rock"]);
    const b = contentWords("Rocks shelter crabs and anemones");
    expect(similarity(a, b)).toBeCloseTo(2 / (Math.log(3) + Math.log(4)), 12);
    expect(similarity(new Set(["x"]), new Set(["x"]))).toBe(0);
  });

  it("ranks a sentence that shares words with many others above an outlier", () => {
    const text =
      "Coral reefs shelter thousands of fish species. Reef fish depend on coral for shelter and food. Warm water bleaches coral and harms reef fish. My neighbour bought a new bicycle yesterday afternoon.";
    const { chosen } = textRank(text, 1);
    expect(chosen.map((c) => c.index)).not.toContain(3);
    expect(textRank(text, 4).chosen.map((c) => c.index)).toEqual([0, 1, 2, 3]);
  });
});
