import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/merchant-kit/openapi.ts";
import { MAX_SUMMARY_LENGTH, summaryOf } from "../../src/merchant-kit/summary.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../src/merchants/inference/catalogue.ts";
import { socialMerchant } from "../../src/merchants/social/catalogue.ts";
import { socialSetup } from "../../src/merchants/social/setup.ts";
import { utilityMerchant } from "../../src/merchants/utility/catalogue.ts";
import { loadConfig } from "../../src/services/config.ts";

const host = { payTo: `0x${"1".repeat(40)}` as const, publicUrl: "http://127.0.0.1:1" };
const config = loadConfig({ env: {} });

describe("OpenAPI summaries", () => {
  it("end at a sentence, not at the period of an abbreviation or inside parentheses", () => {
    expect(
      summaryOf(
        "Calculator with 50 significant digits: roots, logs and unit conversions (e.g. 5 km to mi). More.",
      ),
    ).toBe("Calculator with 50 significant digits: roots, logs and unit conversions (e.g. 5 km to mi).");
    // A long first sentence "what: details" keeps the what.
    expect(summaryOf(`Calculator with 50 significant digits: ${"roots, ".repeat(20)}logs.`)).toBe(
      "Calculator with 50 significant digits",
    );
    expect(summaryOf("Costs $0.001 per call. Second.")).toBe("Costs $0.001 per call.");
    expect(summaryOf("No sentence end")).toBe("No sentence end");
    const long = `${"word ".repeat(40)}end.`;
    expect(summaryOf(long)).toMatch(/^(word )+word…$/);
    expect(summaryOf(long).length).toBeLessThanOrEqual(MAX_SUMMARY_LENGTH + 1);
  });

  // Issue 21: /api/calc's summary was cut after "(e.g.". Every merchant's document, built from its catalogue.
  it.each([
    ["utility", () => utilityMerchant(host)],
    ["inference", () => inferenceMerchant(host, OFFLINE_SETTINGS)],
    ["social", () => socialMerchant(host, socialSetup(config.social))],
  ])("of %s end on a whole word", (_name, merchant) => {
    const doc = openApiDocument(merchant(), config.payments);
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));
    expect(operations.length).toBeGreaterThan(0);
    for (const op of operations) {
      const { summary, description } = op as { summary: string; description: string };
      const kept = summary.replace(/…$/, "");
      expect(description.startsWith(kept), summary).toBe(true);
      // What follows the summary in the description is no letter or digit: the summary's last word is whole.
      expect(description.slice(kept.length, kept.length + 1), summary).toMatch(/^[^\p{L}\p{N}]?$/u);
      expect(summary, summary).not.toMatch(/(?:^|[\s(])(?:e\.g|i\.e)\.$/);
      expect(kept.split("(").length, summary).toBe(kept.split(")").length);
      expect(summary.length, summary).toBeLessThanOrEqual(MAX_SUMMARY_LENGTH + 1);
    }
  });
});
