/**
 * A paged route about one thing named by its numeric id (a tweet's quotes, a user's followers, a list's
 * members): the id checked before payment, `next_token` bound to the route and the id, the route's page size (docs/social.md),
 * a 404 when the thing is not there. The timelines (pages of tweets) and the people (pages of profiles)
 * differ only in what they render.
 */
import { z } from "zod";
import { socialEndpoint } from "./endpoint.ts";
import { nextToken, numericId } from "./params.ts";
import type { PageRequest } from "./provider.ts";
import {
  type PageScope,
  pageOf,
  type SocialRuntime,
  type SocialSetup,
  type socialRuntime,
} from "./runtime.ts";

export interface PagedByIdSpec<P extends { next?: string }, Out extends z.ZodType> {
  path: `/${string}`;
  description: string;
  /** What the id names, in its 400: "tweet", "user", "List", "community". */
  what: string;
  exampleId: string;
  size: number;
  output: Out;
  exampleOutput: z.output<Out>;
  call: (rt: SocialRuntime, id: string, page: PageRequest, signal: AbortSignal) => Promise<P | null>;
  render: (page: P, nextToken: string | undefined) => z.output<Out>;
  /** The 404's message. */
  missing: (id: string) => string;
}

/** Every paged-by-id route costs 0.01 (docs/social.md). */
export function pagedById<P extends { next?: string }, Out extends z.ZodType>(
  setup: SocialSetup,
  runtimeOf: ReturnType<typeof socialRuntime>,
  spec: PagedByIdSpec<P, Out>,
) {
  const scope = ({ id }: { id: string }): PageScope => ({ route: spec.path, subject: id });
  return socialEndpoint(setup, runtimeOf, {
    path: spec.path,
    price: "0.01",
    description: spec.description,
    input: z.object({ id: numericId("id", spec.what), next_token: nextToken }),
    output: spec.output,
    errors: { 404: `The ${spec.what} is unknown, deleted, private or not visible (not_found).` },
    example: { input: { id: spec.exampleId }, output: spec.exampleOutput },
    pageScope: scope,
    handler: async ({ id, next_token }, rt, ctx) => {
      const { page, nextToken: next } = await pageOf(
        rt,
        scope({ id }),
        next_token,
        spec.size,
        (req) => spec.call(rt, id, req, ctx.signal),
        spec.missing(id),
      );
      return spec.render(page, next);
    },
  });
}
