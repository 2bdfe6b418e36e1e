/** The audio rates of spec 4.5, written out here independently of the code: 6 atomic units a character, 3,000 a minute. */
import { describe, expect, it } from "vitest";
import {
  characterCount,
  speechAmount,
  transcriptionAmount,
} from "../../../../src/merchants/inference/audio/metering.ts";

describe("audio metering", () => {
  it("charges speech 0.000006 USD a code point, at most the authorised maximum", () => {
    expect(characterCount("héllo")).toBe(5);
    expect(characterCount("😀😀")).toBe(2); // four UTF-16 units
    expect(speechAmount("Hello", 6, 18_000n)).toBe(30n);
    expect(speechAmount("😀".repeat(3_000), 6, 18_000n)).toBe(18_000n);
    expect(speechAmount("x".repeat(3_000), 6, 17_000n)).toBe(17_000n);
  });

  it("charges transcription 0.003 USD a minute, rounded up, at most the maximum", () => {
    expect(transcriptionAmount(60, 6, 15_000n)).toBe(3_000n);
    expect(transcriptionAmount(300, 6, 15_000n)).toBe(15_000n);
    expect(transcriptionAmount(1, 6, 15_000n)).toBe(50n);
    // 1.0001 s is 1,001 ms: 50.05 units, charged 51.
    expect(transcriptionAmount(1.0001, 6, 15_000n)).toBe(51n);
    expect(transcriptionAmount(0.001, 6, 15_000n)).toBe(1n);
    expect(transcriptionAmount(400, 6, 15_000n)).toBe(15_000n);
  });
});
