/**
 * What every social-data endpoint shares: GET (spec 4.3 names GET for six paths; the live service's
 * clients use GET for the others but the media upload), the payer's funds reserved first when the
 * provider costs money outside, its tables, and a handler that receives the provider and the tokens.
 */
import type { z } from "zod";
import { defineEndpoint, type Endpoint, type HandlerContext } from "../../merchant-kit/catalogue.ts";
import { type SocialRuntime, type SocialSetup, type socialRuntime, socialTables } from "./runtime.ts";

type SocialEndpointSpec<In extends z.ZodType, Out extends z.ZodType> = Omit<
  Endpoint<In, Out>,
  "method" | "handler" | "effects" | "tables"
> & {
  method?: Endpoint<In, Out>["method"];
  handler: (
    input: z.output<In>,
    runtime: SocialRuntime,
    ctx: HandlerContext,
  ) => Promise<z.output<Out> | Response>;
};

/** A social-data endpoint over `setup`'s provider. */
export function socialEndpoint<In extends z.ZodType, Out extends z.ZodType>(
  setup: SocialSetup,
  runtimeOf: ReturnType<typeof socialRuntime>,
  spec: SocialEndpointSpec<In, Out>,
): Endpoint<In, Out> {
  const { handler, method, ...rest } = spec;
  return defineEndpoint({
    ...rest,
    method: method ?? "GET",
    ...(setup.upstream && { effects: ["upstream" as const] }),
    tables: socialTables(setup),
    handler: async (input, ctx) => handler(input, await runtimeOf(ctx.services.db), ctx),
  });
}
