import { describe, expect, it } from "vitest";
import { meteredAmount, parseRate } from "../../../src/merchants/inference/metering.ts";

const rates = { inputPerMillion: "0.05", outputPerMillion: "0.08" };

describe("the /upto metering rule", () => {
  it("charges input and output tokens at the tier's rates, rounded up to the next atomic unit", () => {
    // 1,000 x 0.05 + 500 x 0.08 = 90 atomic units (a dollar per million tokens is one unit per token).
    expect(meteredAmount({ promptTokens: 1_000, completionTokens: 500 }, rates, 15_187n)).toBe(90n);
    // 1 x 0.05 + 1 x 0.08 = 0.13 of a unit: one unit.
    expect(meteredAmount({ promptTokens: 1, completionTokens: 1 }, rates, 15_187n)).toBe(1n);
    expect(
      meteredAmount(
        { promptTokens: 10, completionTokens: 0 },
        { inputPerMillion: "3", outputPerMillion: "15" },
        99n,
      ),
    ).toBe(0n);
  });

  it("never charges above the authorised maximum", () => {
    expect(meteredAmount({ promptTokens: 10_000_000, completionTokens: 1 }, rates, 15_187n)).toBe(15_187n);
  });

  it("charges nothing for a call that produced no output", () => {
    expect(meteredAmount({ promptTokens: 50_000, completionTokens: 0 }, rates, 15_187n)).toBe(0n);
  });

  it("keeps rates exact and refuses what it cannot hold exactly", () => {
    expect(parseRate("0.000000001")).toBe(1n);
    expect(parseRate("15")).toBe(15_000_000_000n);
    for (const bad of ["-1", "1e-3", "0.0000000001", "", "1.", "abc"])
      expect(() => parseRate(bad)).toThrow(/decimal/);
  });
});
