/**
 * What every social-data endpoint shares: GET (the seed named GET for six paths; the live service's
 * clients use GET for the others but the media upload), the payer's funds reserved first when the
 * provider costs money outside, its tables, and a handler that receives the provider and the tokens.
 * A paged endpoint names its page's scope: a `next_token` that is not that query's is then refused before
 * the 402, so no buyer signs for a page it cannot have.
 */
import type { z } from "zod";
import {
  defineEndpoint,
  type Endpoint,
  type ErrorStatus,
  type Errors,
  type HandlerContext,
  precheckOf,
} from "../../merchant-kit/index.ts";
import {
  type PageScope,
  type SocialRuntime,
  type SocialSetup,
  type socialRuntime,
  socialTables,
} from "./runtime.ts";

type SocialEndpointSpec<In extends z.ZodType, Out extends z.ZodType> = Omit<
  Endpoint<In, Out>,
  "method" | "handler" | "effects" | "tables" | "precheck"
> & {
  method?: Endpoint<In, Out>["method"];
  /**
   * The call changes the archive (the media upload): on a provider without an upstream its writes go in
   * the payment's transaction, committed only once the payment has settled. A remote provider's writes
   * happen at X and cost upstream: the payer's funds are reserved for them instead.
   */
  writes?: true;
  /** A paged endpoint's scope of `next_token` for an input (the same its handler gives `pageOf`). */
  pageScope?: (input: z.output<In>) => PageScope;
  precheck?: Endpoint<In, Out>["precheck"];
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
  const { handler, method, pageScope, writes, errors, ...rest } = spec;
  const provider = setup.errors?.(spec.path) ?? {};
  const effects = setup.upstream ? (["upstream"] as const) : writes ? (["writes"] as const) : undefined;
  return defineEndpoint({
    ...rest,
    method: method ?? "GET",
    ...(effects && { effects }),
    tables: socialTables(setup),
    errors: mergeErrors(errors ?? {}, provider),
    ...(pageScope && {
      precheck: precheckOf(async (input: z.output<In>, { services }) => {
        const token = (input as { next_token?: string }).next_token;
        if (token === undefined) return;
        const { tokens, provider } = await runtimeOf(services.db);
        tokens.open({ ...pageScope(input), provider: provider.name }, token);
      }),
    }),
    // A writing endpoint's database is the payment's transaction: the provider made over it writes in it.
    handler: async (input, ctx) => handler(input, await runtimeOf(ctx.services.db), ctx),
  });
}

/** The route's refusals and its provider's, a status both give described by both. */
function mergeErrors(route: Errors, provider: Errors): Errors {
  const merged: Partial<Record<ErrorStatus, string>> = { ...provider };
  for (const [status, reason] of Object.entries(route) as [`${ErrorStatus}`, string][]) {
    const theirs = provider[Number(status) as ErrorStatus];
    merged[Number(status) as ErrorStatus] = theirs ? `${reason} ${theirs}` : reason;
  }
  return merged;
}
