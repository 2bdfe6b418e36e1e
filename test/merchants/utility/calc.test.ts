import { describe, expect, it } from "vitest";
import { BadInputError } from "../../../src/common/errors.ts";
import { calculate, MAX_FACTORIAL } from "../../../src/merchants/utility/calc-engine.ts";

// Reference values to 50 significant digits (OEIS / standard tables), rounded half-up.
const KNOWN: [string, string, string][] = [
  ["sqrt(2)", "1.4142135623730950488016887242096980785696718753769", "decimal"],
  ["pi", "3.1415926535897932384626433832795028841971693993751", "decimal"],
  // e = 2.71828182845904523536028747135266249775724709369995957...: the 50th digit rounds up to ...0937000.
  ["e", "2.7182818284590452353602874713526624977572470937", "decimal"],
  ["log(10)", "2.3025850929940456840179914546843642076011014886288", "decimal"],
  ["1/7", "0.14285714285714285714285714285714285714285714285714", "decimal"],
  ["2/3", "0.66666666666666666666666666666666666666666666666667", "decimal"],
  ["cbrt(2)", "1.2599210498948731647672106072782283505702514647015", "decimal"],
  ["log10(2)", "0.30102999566398119521373889472449302676818988146211", "decimal"],
  ["2^200", "1606938044258990275541962092341162602522202993782792835301376", "integer"],
  [
    "100!",
    "93326215443944152681699238856266700490715968264381621468592963895217599993229915608941463976156518286253697920827223758251185210916864000000000000000000000000",
    "integer",
  ],
  ["100!/98!", "9900", "integer"],
  ["2^64 - 1", "18446744073709551615", "integer"],
  ["-7 mod 3", "2", "integer"],
  ["0.1 + 0.2", "0.3", "decimal"],
  ["sin(30 deg)", "0.5", "decimal"],
  ["5 km to mi", "3.106855961186669848087170921816591107929690606856 mi", "unit"],
  ["12 inch to cm", "30.48 cm", "unit"],
  ["1e-30 / 3", "3.3333333333333333333333333333333333333333333333333e-31", "decimal"],
];

function refusal(expression: string): { code: string; message: string } {
  try {
    calculate(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(BadInputError);
    return { code: (error as BadInputError).code, message: (error as Error).message };
  }
  throw new Error(`"${expression}" was not refused`);
}

describe("calc", () => {
  it.each(KNOWN)("%s = %s", (expression, result, type) => {
    expect(calculate(expression)).toEqual({ result, type });
  });

  it("keeps factorials and powers exact up to 10,000 digits and refuses beyond, before computing", () => {
    expect(calculate(`${MAX_FACTORIAL}!`).result).toHaveLength(9131);
    const started = Date.now();
    expect(refusal(`${MAX_FACTORIAL + 1}!`).code).toBe("too_large");
    expect(refusal("factorial(10^9)").code).toBe("too_large");
    expect(refusal("(10^100)!").code).toBe("too_large");
    expect(refusal("2^(10^9)").code).toBe("too_large");
    expect(refusal("9^9^9").code).toBe("too_large");
    expect(refusal("cos(1e3000)").code).toBe("too_large");
    expect(Date.now() - started).toBeLessThan(500);
    // A failed evaluation leaves the engine sound.
    expect(calculate("log(8, 2)").result).toBe("3");
  });

  it("refuses what is not arithmetic: no code, no assignments, no definitions", () => {
    for (const expression of [
      "import({evaluate: 1}, {override: true})",
      'createUnit("foo")',
      'evaluate("1+1")',
      'parse("1")',
      'simplify("x+x")',
      'derivative("x^2", "x")',
      "f(x) = x^2",
      "a = 3",
      "[1, 2, 3]",
      "{a: 1}",
      "x + 1",
      "ones(1000000)",
      "cos.constructor",
    ]) {
      expect(["forbidden", "invalid_expression"], expression).toContain(refusal(expression).code);
    }
    expect(refusal("1/0").code).toBe("not_finite");
    expect(refusal("sqrt(-1)").code).toBe("not_real");
    expect(refusal("2.5!").code).toBe("invalid_expression");
    expect(refusal("1 +").code).toBe("invalid_expression");
    expect(refusal("1+".repeat(600)).code).toBe("too_large");
  });
});
