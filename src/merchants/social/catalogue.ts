/**
 * The social-data API (docs/social.md): its 19 paid endpoints in the order docs/http.md lists them, over the provider the
 * operator chose (`SocialSetup`), and the paid-proxy host (docs/http.md, "The merchant hosts") whose `/pay/<agent_id>` is the
 * user lookup under another host: same description and price, the path's segment the username. The
 * platform builds the routes, the OpenAPI document, the reference page, `/.well-known/x402` and the
 * listings from these.
 */
import { z } from "zod";
import type { AnyEndpoint, Merchant } from "../../merchant-kit/index.ts";
import { socialEndpoint } from "./endpoint.ts";
import { SOCIAL_GUIDANCE, SOCIAL_PROXY_GUIDANCE } from "./guidance.ts";
import { lookupEndpoints, NO_USER, userAnswer } from "./lookups.ts";
import { mediaEndpoints } from "./media.ts";
import { username } from "./params.ts";
import { peopleEndpoints } from "./people.ts";
import { type SocialSetup, socialRuntime } from "./runtime.ts";
import { exampleUser, UserAnswer } from "./schemas.ts";
import { timelineEndpoints } from "./timelines.ts";

export const SOCIAL_TITLE = "Social-data API";
export const SOCIAL_PROXY_TITLE = "Social-data API (paid proxy)";

/** The paths of the social-data API, in the order docs/social.md and docs/http.md list them: the order of the OpenAPI document and the reference page. */
export const SOCIAL_SPEC_ORDER: readonly string[] = [
  "/tweets/by/id",
  "/lists/by/id",
  "/users/by/username",
  "/tweets/search",
  "/tweets/mentions",
  "/tweets/mediaUpload",
  "/tweets/user",
  "/tweets/quote_tweets",
  "/users/followers",
  "/tweets/replies",
  "/users/search",
  "/lists/tweets",
  "/users/following",
  "/tweets/retweeted_by",
  "/tweets",
  "/lists/members",
  "/articles/by/id",
  "/lists/followers",
  "/communities/posts",
];

export interface SocialHost {
  payTo: `0x${string}`;
  publicUrl: string;
}

/** Every endpoint of the social-data API, in the order docs/http.md lists them, over `setup`'s provider. */
export function socialEndpoints(setup: SocialSetup): readonly AnyEndpoint[] {
  const runtimeOf = socialRuntime(setup);
  const all: AnyEndpoint[] = [
    ...Object.values(lookupEndpoints(setup, runtimeOf)),
    ...Object.values(timelineEndpoints(setup, runtimeOf)),
    ...Object.values(peopleEndpoints(setup, runtimeOf)),
    ...Object.values(mediaEndpoints(setup, runtimeOf)),
  ];
  const rank = (e: AnyEndpoint) => SOCIAL_SPEC_ORDER.indexOf(e.path);
  return all.sort((a, b) => rank(a) - rank(b));
}

export function socialMerchant(host: SocialHost, setup: SocialSetup): Merchant {
  return {
    name: "social",
    title: SOCIAL_TITLE,
    guidance: SOCIAL_GUIDANCE,
    payTo: host.payTo,
    publicUrl: host.publicUrl,
    endpoints: socialEndpoints(setup),
  };
}

/**
 * A day of `/pay/<agent_id>`: ten of its lookups' price for the agent's profile now and, for a day, again to the
 * wallet that paid, which signs in (x402's sign-in-with-x) instead of paying: an agent that watches another's
 * profile polls it all day for the price of ten calls.
 */
export const PROXY_DAY_PRICE = "0.05";
export const PROXY_DAY_SECONDS = 86_400;
/**
 * The day's signed-in calls. Each may be an upstream lookup that no payment of its own covers: 100 at
 * twitterapi.io's listed $0.18 per 1,000 profiles is $0.018, inside the day's $0.05 (docs/social.md); an X web
 * session's rate limit is spent by at most 100 lookups a wallet a day.
 */
export const PROXY_DAY_CALLS = 100;

/**
 * The paid-proxy host: `GET /pay/<agent_id>`, the profile of the user whose screen name is `agent_id`,
 * described and priced as `/users/by/username` (both written once, there); and `GET /pay/<agent_id>/day`, the
 * same profile sold for a day (docs/platform.md, "Access for a period"). The day is an addition the spec leaves
 * room for: it says what the proxy's `/pay/<agent_id>` duplicates, which stays as it is (price, description,
 * answer), and nothing of what else the host may sell. It is not listed (no Bazaar, no listing), so the
 * listings stay the spec's catalogue.
 */
export function socialProxyMerchant(host: SocialHost, setup: SocialSetup): Merchant {
  const runtimeOf = socialRuntime(setup);
  const lookup = lookupEndpoints(setup, runtimeOf).userByUsername;
  const pay = socialEndpoint(setup, runtimeOf, {
    path: "/pay/:agent_id",
    price: lookup.price,
    description: lookup.description,
    input: z.object({ agent_id: username("agent_id").describe("The agent's screen name.") }),
    output: UserAnswer,
    errors: NO_USER,
    example: { input: { agent_id: exampleUser.username }, output: { data: exampleUser } },
    handler: ({ agent_id }, { provider }, ctx) => userAnswer(provider, agent_id, ctx.signal),
  });
  const day = socialEndpoint(setup, runtimeOf, {
    path: "/pay/:agent_id/day",
    price: PROXY_DAY_PRICE,
    accessSeconds: PROXY_DAY_SECONDS,
    accessCalls: PROXY_DAY_CALLS,
    listed: false,
    description: `A day of /pay/<agent_id>: the agent's profile now, and for 24 hours (up to ${PROXY_DAY_CALLS} calls) again to the wallet that paid, which signs in with that wallet (x402's sign-in-with-x, the 402's challenge) instead of paying. ${lookup.description}`,
    input: z.object({ agent_id: username("agent_id").describe("The agent's screen name.") }),
    output: UserAnswer,
    errors: NO_USER,
    example: { input: { agent_id: exampleUser.username }, output: { data: exampleUser } },
    handler: ({ agent_id }, { provider }, ctx) => userAnswer(provider, agent_id, ctx.signal),
  });
  return {
    name: "social-proxy",
    title: SOCIAL_PROXY_TITLE,
    guidance: SOCIAL_PROXY_GUIDANCE,
    payTo: host.payTo,
    publicUrl: host.publicUrl,
    endpoints: [pay, day],
  };
}
