/**
 * The social-data API's pages of profiles (docs/social.md): a user's followers and followings, a tweet's
 * reposters, a user search, a list's members and followers. `next_token` to go on, each endpoint's page size (docs/social.md);
 * an unknown subject is a 404, never charged.
 */
import { z } from "zod";
import { socialEndpoint } from "./endpoint.ts";
import { type PagedByIdSpec, pagedById } from "./paged-by-id.ts";
import { nextToken } from "./params.ts";
import type { UserPage } from "./provider.ts";
import { renderMeta, renderUser } from "./render.ts";
import { PAGE_SIZES, type PageScope, pageOf, type SocialSetup, type socialRuntime } from "./runtime.ts";
import { EXAMPLE_TWEET, EXAMPLE_USER, exampleUserPage, UserPageAnswer } from "./schemas.ts";

function answer(page: UserPage, nextToken: string | undefined) {
  return { data: page.users.map(renderUser), meta: renderMeta(page.users, nextToken, false) };
}

const userSearchScope = ({ query }: { query: string }): PageScope => ({
  route: "/users/search",
  subject: query.toLowerCase(),
});

export function peopleEndpoints(setup: SocialSetup, runtimeOf: ReturnType<typeof socialRuntime>) {
  const byId = (
    spec: Omit<PagedByIdSpec<UserPage, typeof UserPageAnswer>, "output" | "exampleOutput" | "render">,
  ) =>
    pagedById(setup, runtimeOf, {
      ...spec,
      output: UserPageAnswer,
      exampleOutput: exampleUserPage,
      render: answer,
    });
  const noUser = (id: string) => `no user ${id}: unknown, suspended or deactivated`;
  const noList = (id: string) => `no list ${id}: unknown or private`;

  const followers = byId({
    path: "/users/followers",
    description: `Follower profiles of the user, ${PAGE_SIZES.followers} a page.`,
    what: "user",
    exampleId: EXAMPLE_USER.id,
    size: PAGE_SIZES.followers,
    call: (rt, id, req, signal) => rt.provider.followers(id, req, signal),
    missing: noUser,
  });
  const following = byId({
    path: "/users/following",
    description: `Profiles the user follows, ${PAGE_SIZES.following} a page.`,
    what: "user",
    exampleId: EXAMPLE_USER.id,
    size: PAGE_SIZES.following,
    call: (rt, id, req, signal) => rt.provider.following(id, req, signal),
    missing: noUser,
  });
  const retweetedBy = byId({
    path: "/tweets/retweeted_by",
    description: `User profiles that reposted the tweet, ${PAGE_SIZES.retweetedBy} a page.`,
    what: "tweet",
    exampleId: EXAMPLE_TWEET.id,
    size: PAGE_SIZES.retweetedBy,
    call: (rt, id, req, signal) => rt.provider.retweetedBy(id, req, signal),
    missing: (id) => `no tweet ${id}: it does not exist, was deleted, or is not visible`,
  });
  const listMembers = byId({
    path: "/lists/members",
    description: `Member profiles of the List, ${PAGE_SIZES.listMembers} a page.`,
    what: "List",
    exampleId: "1790000000000008000",
    size: PAGE_SIZES.listMembers,
    call: (rt, id, req, signal) => rt.provider.listMembers(id, req, signal),
    missing: noList,
  });
  const listFollowers = byId({
    path: "/lists/followers",
    description: `Profiles following the List, ${PAGE_SIZES.listFollowers} a page.`,
    what: "List",
    exampleId: "1790000000000008000",
    size: PAGE_SIZES.listFollowers,
    call: (rt, id, req, signal) => rt.provider.listFollowers(id, req, signal),
    missing: noList,
  });

  const searchUsers = socialEndpoint(setup, runtimeOf, {
    path: "/users/search",
    price: "0.01",
    description: `User profiles matching a keyword or phrase, ${PAGE_SIZES.userSearch} a page.`,
    input: z.object({
      query: z
        .string({
          error: (i) => (i.input === undefined ? "Missing required query parameter: query" : undefined),
        })
        .trim()
        .min(1, "Missing required query parameter: query")
        .max(512)
        .describe("A keyword or phrase."),
      next_token: nextToken,
    }),
    output: UserPageAnswer,
    example: { input: { query: "payments" }, output: exampleUserPage },
    pageScope: userSearchScope,
    handler: async ({ query, next_token }, rt, ctx) => {
      const { page, nextToken: next } = await pageOf(
        rt,
        userSearchScope({ query }),
        next_token,
        PAGE_SIZES.userSearch,
        (req) => rt.provider.searchUsers(query, req, ctx.signal),
        "nothing to search",
      );
      return answer(page, next);
    },
  });

  return { followers, following, retweetedBy, listMembers, listFollowers, searchUsers };
}
