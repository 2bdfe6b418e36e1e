import { randomInt } from "node:crypto";
import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const items = z
  .array(z.string().max(200))
  .min(1)
  .max(1_000)
  .describe("The list: 1 to 1,000 items of up to 200 characters each.");

/** Fisher-Yates with a cryptographic random source: every order equally likely. */
export function shuffled<T>(list: readonly T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const PickInput = z.object({
  items,
  count: z.number().int().min(1).max(100).default(1).describe("How many to pick, 1-100. Default 1."),
  unique: z
    .boolean()
    .default(true)
    .describe(
      "true (default): never the same item twice (a draw); false: independent picks (with replacement).",
    ),
});

export const pick = defineEndpoint({
  method: "POST",
  path: "/pick",
  price: "0.002",
  description:
    "Picks items at random from a list (a fair draw, or with replacement), from a cryptographic source.",
  input: PickInput,
  output: z.object({ picked: z.array(z.string()), from: z.number().int().describe("Size of the list.") }),
  example: {
    input: { items: ["pizza", "sushi", "tacos", "curry"], count: 2 },
    output: { picked: ["tacos", "pizza"], from: 4 },
  },
  errors: {
    400: "More unique items asked for than the list holds (bad_request), found once the payment is verified.",
  },
  handler: async (b) => {
    if (b.unique && b.count > b.items.length) {
      throw new BadInputError(`cannot draw ${b.count} different items from a list of ${b.items.length}`);
    }
    const picked = b.unique
      ? shuffled(b.items).slice(0, b.count)
      : Array.from({ length: b.count }, () => b.items[randomInt(b.items.length)] as string);
    return { picked, from: b.items.length };
  },
});

export const shuffle = defineEndpoint({
  method: "POST",
  path: "/shuffle",
  price: "0.003",
  description: "Shuffles a list into a uniformly random order (Fisher-Yates, cryptographic random source).",
  input: z.object({ items }),
  output: z.object({ shuffled: z.array(z.string()) }),
  example: {
    input: { items: ["alice", "bob", "carol", "dave"] },
    output: { shuffled: ["carol", "alice", "dave", "bob"] },
  },
  handler: async (b) => ({ shuffled: shuffled(b.items) }),
});
