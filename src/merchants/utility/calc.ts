import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { CALC_SYNTAX, MAX_EXPRESSION_LENGTH } from "./calc-limits.ts";
import { onFirstUse } from "./lazy.ts";
import { PRICES } from "./prices.ts";

/** mathjs with every function built is about 110 MB of a host's memory: loaded by the first calculation. */
const engine = onFirstUse(() => import("./calc-engine.ts"));

/**
 * `expr` is the name mathjs's own public API (api.mathjs.org) and most calculator APIs use; `expression`
 * is accepted too. Exactly one of them.
 */
const CalcInput = z
  .object({
    expr: z
      .string()
      .min(1)
      .max(MAX_EXPRESSION_LENGTH)
      .optional()
      .describe(
        `The expression, e.g. \`sqrt(2)\`, \`100!\`, \`2^200\`, \`1/7\`, \`ln(2)\`, \`5 km to mi\`. ${CALC_SYNTAX}`,
      ),
    expression: z.string().min(1).max(MAX_EXPRESSION_LENGTH).optional().describe("Same as `expr`."),
  })
  .refine((q) => (q.expr ?? q.expression) !== undefined, {
    message: "give the expression as `expr`",
    path: ["expr"],
  })
  .refine((q) => q.expr === undefined || q.expression === undefined, {
    message: "give either `expr` or `expression`, not both",
    path: ["expression"],
  });

const CalcOutput = z.object({
  expression: z.string().describe("The expression as evaluated."),
  result: z
    .string()
    .describe(
      "Exact for integers (up to 10,000 digits), else rounded to 50 significant digits; a unit follows a space.",
    ),
  type: z.enum(["integer", "decimal", "unit"]),
});

export const calc = defineEndpoint({
  method: "GET",
  path: "/api/calc",
  price: PRICES["/api/calc"],
  description:
    "Calculator with 50 significant digits: exact big integers, division, roots, logs, factorials and unit conversions (e.g. 5 km to mi).",
  input: CalcInput,
  output: CalcOutput,
  example: {
    input: { expr: "sqrt(2)" },
    output: {
      expression: "sqrt(2)",
      result: "1.4142135623730950488016887242096980785696718753769",
      type: "decimal",
    },
  },
  timeoutMs: 5_000,
  load: engine,
  errors: {
    400: "An expression that cannot be evaluated, found once the payment is verified: a syntax error or unknown name (invalid_expression), a function not offered (forbidden), a result too large (too_large), not finite (not_finite) or not real (not_real).",
  },
  handler: async (input) => {
    const expression = input.expr ?? input.expression;
    if (expression === undefined) throw new BadInputError("give the expression as `expr`");
    const { calculate } = await engine();
    return { expression, ...calculate(expression) };
  },
});
