/** Longest expression `/api/calc` takes: checked by its input schema, before the engine is loaded. */
export const MAX_EXPRESSION_LENGTH = 1000;

/**
 * The functions and constants `/api/calc` allows, all computed at 50 significant digits (BigNumber). Kept
 * here, apart from the engine, so that the endpoint's description lists them without loading mathjs.
 * Left out on purpose: gamma (mathjs has it for integers only at this precision; factorial covers them).
 */
export const CALC_FUNCTIONS = [
  "sqrt",
  "cbrt",
  "nthRoot",
  "exp",
  "expm1",
  "ln",
  "log",
  "log10",
  "log2",
  "log1p",
  "abs",
  "floor",
  "ceil",
  "round",
  "fix",
  "sign",
  "factorial",
  "gcd",
  "lcm",
  "mod",
  "pow",
  "min",
  "max",
  "hypot",
  "sin",
  "cos",
  "tan",
  "sec",
  "csc",
  "cot",
  "asin",
  "acos",
  "atan",
  "atan2",
  "asec",
  "acsc",
  "acot",
  "sinh",
  "cosh",
  "tanh",
  "asinh",
  "acosh",
  "atanh",
] as const;

export const CALC_CONSTANTS = [
  "pi",
  "PI",
  "e",
  "E",
  "tau",
  "phi",
  "LN2",
  "LN10",
  "LOG2E",
  "LOG10E",
  "SQRT2",
  "SQRT1_2",
] as const;

/** What the endpoint's description says about them: one place, shared by the schema and the docs test. */
export const CALC_SYNTAX = `Functions: ${CALC_FUNCTIONS.join(", ")}. ln is the natural log; log(x) is natural too and log(x, base) any base; round(x, n) rounds to n decimals; n! or factorial(n) for n <= 3000; trig takes radians, or degrees with deg (sin(30 deg)); atan(1) rad to deg gives degrees. Constants: pi, e, tau, phi. Operators: + - * / ^ !, mod, % after a number is percent (200 * 10%). Units convert with to (5 km to mi).`;
