/**
 * What an agent should know to use the social-data API and its paid proxy well: their OpenAPI documents'
 * `info.x-guidance` and `/llms.txt` open with it (src/merchant-kit/host-info.ts). The operator may rewrite
 * them (X402M_SOCIAL_GUIDANCE, X402M_SOCIAL_PROXY_GUIDANCE).
 */

export const SOCIAL_GUIDANCE =
  "Read-only data of X (Twitter) in X API v2's shapes: {data, includes, meta}, X's field names, IDs as decimal strings (they pass 2^53: never read them as numbers). " +
  "Look up one thing by id or username (/tweets/by/id, /users/by/username, /lists/by/id, /articles/by/id; /tweets for up to 50 ids in one call), or list (timelines, search, followers, members: 20 to 100 a page). " +
  "A list's meta.next_token is the next page: send it back as next_token, each page a paid call; the last page has none. " +
  "Start from a username: /users/by/username gives the user id that /users/followers and /users/following take. " +
  "/tweets/mentions and /tweets/mediaUpload act as your own X account (query auth_token and ct0 of your X session), which this host uses for that call only.";

export const SOCIAL_PROXY_GUIDANCE =
  "GET /pay/{agent_id}: the X (Twitter) profile of the user whose screen name is agent_id, priced and answered as the social-data API's /users/by/username (X API v2's shape, IDs as decimal strings). " +
  "To poll one profile all day, GET /pay/{agent_id}/day: paid once, then for 24 hours (up to 100 calls) the wallet that paid signs the 402's sign-in-with-x challenge (the SIGN-IN-WITH-X header, @x402/extensions' client) instead of paying.";
