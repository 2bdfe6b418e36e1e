import { randomUUID } from "node:crypto";
import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";
import { queryInt } from "./common.ts";

const UuidInput = z.object({
  count: queryInt(1, 20).default(1).describe("How many UUIDs, 1-20. Default 1."),
});

const UuidOutput = z.object({
  uuids: z.array(z.uuid()).describe("Random version 4 UUIDs (RFC 9562), lower-case."),
});

export const uuid = defineEndpoint({
  method: "GET",
  path: "/uuid",
  price: "0.0001",
  // The demo's tiny-repeat farm pays it, far below the shop's listed prices: farms use endpoints they
  // do not advertise.
  listed: false,
  description: "Fresh random version 4 UUIDs from a cryptographic source, 1 to 20 at a time.",
  input: UuidInput,
  output: UuidOutput,
  example: {
    input: { count: "2" },
    output: { uuids: ["3b241101-e2bb-4255-8caf-4136c566a962", "9f1c2e4a-7d3b-4c8e-a1f0-5b6d7e8f9a0b"] },
  },
  handler: async (q) => ({ uuids: Array.from({ length: q.count }, () => randomUUID()) }),
});
