import { randomInt } from "node:crypto";
import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const NOTATION = /^(\d{0,3})d(\d{1,4})([+-]\d{1,5})?$/;
export const MAX_DICE = 100;
export const MAX_SIDES = 1000;

const RollInput = z.object({
  notation: z
    .string()
    .trim()
    .toLowerCase()
    .max(20)
    .regex(NOTATION, 'dice notation like "2d6+1", "d20" or "4d8-2"')
    .describe(`Dice notation NdS±M: up to ${MAX_DICE} dice of 2 to ${MAX_SIDES} sides, e.g. "2d6+1".`),
});

const RollOutput = z.object({
  notation: z.string().describe("The notation as read, e.g. 2d6+1."),
  rolls: z.array(z.number().int()).describe("Each die, in order."),
  modifier: z.number().int(),
  total: z.number().int().describe("Sum of the dice plus the modifier."),
  min: z.number().int().describe("The lowest possible total."),
  max: z.number().int().describe("The highest possible total."),
});

export function parseNotation(notation: string): { count: number; sides: number; modifier: number } {
  const m = NOTATION.exec(notation);
  if (!m) throw new BadInputError(`"${notation}" is not dice notation like 2d6+1`);
  const count = m[1] ? Number(m[1]) : 1;
  const sides = Number(m[2]);
  const modifier = m[3] ? Number(m[3]) : 0;
  if (count < 1 || count > MAX_DICE) throw new BadInputError(`roll 1 to ${MAX_DICE} dice`);
  if (sides < 2 || sides > MAX_SIDES) throw new BadInputError(`dice have 2 to ${MAX_SIDES} sides`);
  return { count, sides, modifier };
}

export const roll = defineEndpoint({
  method: "GET",
  path: "/roll",
  price: "0.002",
  description:
    'Rolls dice from standard notation such as "2d6+1" with a cryptographic random source, and gives each die and the total.',
  input: RollInput,
  output: RollOutput,
  example: {
    input: { notation: "2d6+1" },
    output: { notation: "2d6+1", rolls: [4, 2], modifier: 1, total: 7, min: 3, max: 13 },
  },
  errors: {
    400: "Notation that is not dice notation, or more dice or sides than allowed (bad_request), found once the payment is verified.",
  },
  handler: async (q) => {
    const { count, sides, modifier } = parseNotation(q.notation);
    const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
    const sign = modifier > 0 ? `+${modifier}` : modifier < 0 ? `${modifier}` : "";
    return {
      notation: `${count}d${sides}${sign}`,
      rolls,
      modifier,
      total: rolls.reduce((a, b) => a + b, 0) + modifier,
      min: count + modifier,
      max: count * sides + modifier,
    };
  },
});
