import type { BigNumber, MathJsInstance, Unit } from "mathjs";
import { BadInputError } from "../../common/errors.ts";

/** Arguments of the circular functions beyond this are refused: decimal.js reduces them with pi to
 * (exponent + precision) digits and throws past its 1,025 digits of pi, leaving itself in a broken state. */
export const MAX_TRIG_ARGUMENT = "1e100";

const CIRCULAR = ["sin", "cos", "tan", "sec", "csc", "cot"] as const;
type Circular = (typeof CIRCULAR)[number];

/**
 * The circular functions, checked. An argument built from pi (`pi`, `90 deg`) carries pi's rounding, about
 * 1e-64 of its size, so sin(pi) comes out as 3e-64 and tan(pi/2) as 7e36: silent wrong answers. A sine or
 * cosine below NOISE × |x| is therefore 0, and a function whose denominator is that 0 (tan at 90 deg) is a
 * 400. A genuinely tiny result of a tiny argument (sin(1e-70)) is kept: the bound is relative to |x|.
 * Only arguments up to SNAP_LIMIT are snapped: beyond, |x| × NOISE is no longer small, and a big argument
 * is one typed exactly (cos(1e99)), whose value decimal.js computes honestly.
 */
const SNAP_LIMIT = "1e6";
function circular(math: MathJsInstance, precision: number) {
  const noise = math.bignumber(`1e-${precision - 2}`);
  const original = { sin: math.sin, cos: math.cos };
  const radians = (name: string, x: BigNumber | Unit): BigNumber => {
    const value = (math.isUnit(x) ? x.toNumeric("rad") : x) as BigNumber;
    if (value.abs().greaterThan(MAX_TRIG_ARGUMENT)) {
      throw new BadInputError(`${name} takes arguments up to ${MAX_TRIG_ARGUMENT} in size`, "too_large");
    }
    return value;
  };
  const part = (f: "sin" | "cos", x: BigNumber): BigNumber => {
    const y = original[f](x) as unknown as BigNumber;
    const snap = x.abs().lessThanOrEqualTo(SNAP_LIMIT) && y.abs().lessThan(x.abs().times(noise));
    return snap ? math.bignumber(0) : y;
  };
  const ratio = (name: string, top: BigNumber, bottom: BigNumber): BigNumber => {
    if (bottom.isZero()) {
      throw new BadInputError(`${name} is undefined at this angle (a pole)`, "not_finite");
    }
    return top.div(bottom);
  };
  const one = math.bignumber(1);
  const formulas: Record<Circular, (x: BigNumber) => BigNumber> = {
    sin: (x) => part("sin", x),
    cos: (x) => part("cos", x),
    tan: (x) => ratio("tan", part("sin", x), part("cos", x)),
    sec: (x) => ratio("sec", one, part("cos", x)),
    csc: (x) => ratio("csc", one, part("sin", x)),
    cot: (x) => ratio("cot", part("cos", x), part("sin", x)),
  };
  return Object.fromEntries(
    CIRCULAR.map((name) => [
      name,
      math.typed(name, {
        BigNumber: (x: BigNumber) => formulas[name](radians(name, x)),
        Unit: (x: Unit) => formulas[name](radians(name, x)),
      }),
    ]),
  );
}

/**
 * Functions mathjs computes from 1 + x or e^x - 1 at the working precision: log1p(1e-70) came out 0.
 * They are computed here with as many more digits as x is small, and are x itself below 1e-precision.
 */
function nearZero(math: MathJsInstance, precision: number) {
  const tiny = math.bignumber(`1e-${precision}`);
  // mathjs's BigNumber is decimal.js's Decimal, configured: a clone with twice the digits.
  const Wide = (
    (math as unknown as { BigNumber: unknown }).BigNumber as {
      clone(config: { precision: number }): new (value: string) => BigNumber;
    }
  ).clone({ precision: 2 * precision });
  return {
    log1p: math.typed("log1p", {
      BigNumber: (x: BigNumber) => {
        if (x.lessThanOrEqualTo(-1)) {
          throw new BadInputError("log1p takes x > -1", "not_real");
        }
        if (x.abs().lessThan(tiny)) return x;
        return math.bignumber(new Wide(x.toString()).plus(1).ln().toString());
      },
    }),
    expm1: math.typed("expm1", {
      BigNumber: (x: BigNumber) => {
        if (x.abs().lessThan(tiny)) return x;
        return math.bignumber(new Wide(x.toString()).exp().minus(1).toString());
      },
    }),
  };
}

/** The functions replaced or added on top of mathjs's: `ln` is the name calculators use for log. */
export function preciseFunctions(math: MathJsInstance, precision: number) {
  return {
    ...circular(math, precision),
    ...nearZero(math, precision),
    ln: math.typed("ln", { BigNumber: (x: BigNumber) => math.log(x) }),
  };
}
