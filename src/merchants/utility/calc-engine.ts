import { all, type BigNumber, create, type MathNode, type Unit } from "mathjs";
import { BadInputError } from "../../common/errors.ts";
import { MAX_TRIG_ARGUMENT, preciseFunctions } from "./calc-functions.ts";
import { CALC_CONSTANTS, CALC_FUNCTIONS, MAX_EXPRESSION_LENGTH } from "./calc-limits.ts";

export { MAX_EXPRESSION_LENGTH, MAX_TRIG_ARGUMENT };

/** Significant digits of every non-integer result (docs/platform.md, "The utility API's endpoints"). */
export const SIGNIFICANT_DIGITS = 50;
/** Digits computed internally: guard digits so that rounding to 50 is right after a chain of operations. */
const WORKING_PRECISION = 64;
/** Largest exact integer result (and intermediate) in decimal digits; 3000! has 9,131. */
export const MAX_INTEGER_DIGITS = 10_000;
/** Largest factorial argument: checked before computing, so a huge factorial is an error, not a hang. */
export const MAX_FACTORIAL = 3000;

export type CalcResultType = "integer" | "decimal" | "unit";

export interface CalcResult {
  result: string;
  type: CalcResultType;
}

/**
 * A restricted mathjs instance, following mathjs's "security" guide: BigNumbers, and the functions that
 * reach the parser or change the instance replaced by ones that throw. On top of that every expression's
 * tree is checked against an allow-list (below) before it is evaluated in a fresh, empty scope.
 */
const math = create(all as NonNullable<typeof all>, { number: "BigNumber", precision: WORKING_PRECISION });
const parse = math.parse;
const factorial = math.factorial;
const checkedFactorial = (n: BigNumber): BigNumber => factorial(checkFactorialArgument(n)) as BigNumber;
const disabled = (name: string) => () => {
  throw new BadInputError(`${name} is not available in calc expressions`, "forbidden");
};
math.import(
  {
    ...Object.fromEntries(
      [
        "import",
        "createUnit",
        "reviver",
        "evaluate",
        "parse",
        "compile",
        "simplify",
        "derivative",
        "resolve",
      ].map((name) => [name, disabled(name)]),
    ),
    factorial: math.typed("factorial", { BigNumber: checkedFactorial }),
    ...preciseFunctions(math, WORKING_PRECISION),
  },
  { override: true },
);

const OPERATORS = new Set([
  "add",
  "subtract",
  "multiply",
  "divide",
  "pow",
  "unaryMinus",
  "unaryPlus",
  "factorial",
  "mod",
  "to",
]);
const FUNCTIONS = new Set<string>([...CALC_FUNCTIONS, "to"]);
const CONSTANTS = new Set<string>(CALC_CONSTANTS);

function checkFactorialArgument(n: BigNumber): BigNumber {
  if (!n.isInteger() || n.isNegative()) {
    throw new BadInputError("factorial takes a non-negative integer", "invalid_expression");
  }
  if (n.greaterThan(MAX_FACTORIAL)) {
    throw new BadInputError(`factorial is limited to n <= ${MAX_FACTORIAL}`, "too_large");
  }
  return n;
}

/** Throws unless every node is a number, an allowed constant or unit, operator or function call. */
function checkTree(root: MathNode): void {
  root.traverse((node) => {
    switch (node.type) {
      case "ConstantNode":
      case "ParenthesisNode":
        return;
      case "SymbolNode": {
        const name = (node as unknown as { name: string }).name;
        if (CONSTANTS.has(name) || FUNCTIONS.has(name) || math.Unit.isValuelessUnit(name)) return;
        throw new BadInputError(`unknown name "${name}"`, "invalid_expression");
      }
      case "OperatorNode": {
        const fn = (node as unknown as { fn: string; op: string }).fn;
        if (OPERATORS.has(fn)) return;
        throw new BadInputError(
          `operator "${(node as unknown as { op: string }).op}" is not supported`,
          "invalid_expression",
        );
      }
      case "FunctionNode": {
        const fn = (node as unknown as { fn: MathNode }).fn;
        const name = fn.type === "SymbolNode" ? (fn as unknown as { name: string }).name : "";
        if (FUNCTIONS.has(name)) return;
        throw new BadInputError(`function "${name || "?"}" is not available`, "forbidden");
      }
      default:
        throw new BadInputError(
          "only numbers, units, operators and math functions are allowed (no assignments, definitions, matrices or objects)",
          "forbidden",
        );
    }
  });
}

const digits = (n: bigint) => (n < 0n ? -n : n).toString().length;

function boundedInteger(n: bigint): bigint {
  if (digits(n) > MAX_INTEGER_DIGITS) {
    throw new BadInputError(`the result has more than ${MAX_INTEGER_DIGITS} digits`, "too_large");
  }
  return n;
}

/**
 * Integer arithmetic done exactly with bigint when the whole tree is integers and integer-preserving
 * operations (100!, 2^200, 100!/98!); undefined as soon as something is not, and the BigNumber path
 * takes over. Sizes are checked before each power and after each product, so nothing runs away.
 */
function exactInteger(node: MathNode): bigint | undefined {
  const n = node as unknown as {
    type: string;
    value?: unknown;
    content?: MathNode;
    fn?: unknown;
    args?: MathNode[];
    name?: string;
  };
  if (n.type === "ConstantNode") {
    const value = n.value as BigNumber;
    // A literal like 1e999999 stays a decimal: written out, it would be a million digits.
    if (
      !math.isBigNumber(value) ||
      !value.isFinite() ||
      !value.isInteger() ||
      value.e >= MAX_INTEGER_DIGITS
    ) {
      return undefined;
    }
    return BigInt(value.toFixed());
  }
  if (n.type === "ParenthesisNode" && n.content) return exactInteger(n.content);
  const name =
    n.type === "OperatorNode"
      ? (n.fn as string)
      : n.type === "FunctionNode"
        ? (n.fn as { name?: string }).name
        : undefined;
  if (!name || !n.args) return undefined;
  const args: bigint[] = [];
  for (const arg of n.args) {
    const value = exactInteger(arg);
    if (value === undefined) return undefined;
    args.push(value);
  }
  const [a, b] = args;
  if (a === undefined) return undefined;
  switch (name) {
    case "unaryMinus":
      return -a;
    case "unaryPlus":
      return a;
    case "abs":
      return a < 0n ? -a : a;
    case "factorial": {
      checkFactorialArgument(math.bignumber(a.toString()));
      let product = 1n;
      for (let i = 2n; i <= a; i++) product *= i;
      return product;
    }
  }
  if (b === undefined || args.length !== 2) return undefined;
  switch (name) {
    case "add":
      return boundedInteger(a + b);
    case "subtract":
      return boundedInteger(a - b);
    case "multiply":
      return boundedInteger(a * b);
    case "divide":
      return b !== 0n && a % b === 0n ? a / b : undefined;
    case "mod":
      return b === 0n ? undefined : ((a % b) + b) % b;
    case "pow": {
      if (b < 0n) return undefined;
      // 0, 1 and -1 stay small whatever the exponent: answered without computing a huge power.
      if (b === 0n) return 1n;
      if (a === 0n || a === 1n) return a;
      if (a === -1n) return b % 2n === 0n ? 1n : -1n;
      if (Number(b) * Math.log10(Number(a < 0n ? -a : a)) > MAX_INTEGER_DIGITS) {
        throw new BadInputError(`the result has more than ${MAX_INTEGER_DIGITS} digits`, "too_large");
      }
      return a ** b;
    }
    case "gcd": {
      let [x, y] = [a < 0n ? -a : a, b < 0n ? -b : b];
      while (y !== 0n) [x, y] = [y, x % y];
      return x;
    }
    default:
      return undefined;
  }
}

/** A BigNumber at 50 significant digits, in plain notation unless the exponent is extreme. */
export function formatDecimal(value: BigNumber): string {
  const rounded = value.toSignificantDigits(SIGNIFICANT_DIGITS);
  const exponent = rounded.e;
  if (exponent < -20 || exponent >= SIGNIFICANT_DIGITS) return rounded.toExponential();
  return rounded.toFixed();
}

/**
 * Evaluates a calculator expression: exact integers (up to 10,000 digits), else 50 significant digits,
 * units converted with `to` (`5 km to mi`). Refusals are `BadInputError`s (HTTP 400).
 */
export function calculate(expression: string): CalcResult {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new BadInputError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`, "too_large");
  }
  let tree: MathNode;
  try {
    tree = parse(expression);
  } catch (error) {
    throw new BadInputError(`cannot parse the expression: ${(error as Error).message}`, "invalid_expression");
  }
  checkTree(tree);
  const exact = exactInteger(tree);
  if (exact !== undefined) return { result: exact.toString(), type: "integer" };

  let value: unknown;
  try {
    value = tree.compile().evaluate(new Map());
  } catch (error) {
    if (error instanceof BadInputError) throw error;
    throw new BadInputError(
      `cannot evaluate the expression: ${(error as Error).message}`,
      "invalid_expression",
    );
  }
  if (math.isUnit(value)) {
    const unit = value as Unit;
    const number = unit.toNumeric(unit.formatUnits()) as unknown;
    if (!math.isBigNumber(number) || !number.isFinite()) throw notFinite();
    return { result: `${formatDecimal(number)} ${unit.formatUnits()}`.trim(), type: "unit" };
  }
  if (math.isBigNumber(value)) {
    if (value.isNaN()) throw notReal();
    if (!value.isFinite()) throw notFinite();
    if (value.isInteger() && value.precision(true) <= SIGNIFICANT_DIGITS) {
      return { result: value.toFixed(), type: "integer" };
    }
    return { result: formatDecimal(value), type: "decimal" };
  }
  if (math.isComplex(value)) throw notReal();
  throw new BadInputError("the expression does not give a number", "invalid_expression");
}

const notReal = () =>
  new BadInputError(
    "the result is not a real number (complex, or outside the function's domain, e.g. acos(2))",
    "not_real",
  );
const notFinite = () =>
  new BadInputError("the result is not a finite number (division by zero or overflow)", "not_finite");
