/**
 * X's GraphQL user (`data.user.result`, `user_results.result`) as a `SocialUser`. X moved some fields out
 * of `legacy` in 2025 (`core.screen_name`, `core.name`, `core.created_at`, `avatar.image_url`,
 * `location.location`, `privacy.protected`): both places are read, the newer first.
 * `UserUnavailable` (suspended, deactivated) and anything without a `rest_id` is `null`.
 */
import type { SocialUser } from "../../model.ts";
import { arr, at, isoTime, num, obj, str } from "./json.ts";

export function parseUser(result: unknown): SocialUser | null {
  const r = obj(result);
  if (!r) return null;
  if (r.__typename !== undefined && r.__typename !== "User") return null;
  const id = str(r.rest_id);
  const legacy = obj(r.legacy) ?? {};
  const core = obj(r.core) ?? {};
  const username = str(core.screen_name) ?? str(legacy.screen_name);
  if (!id || !/^\d+$/.test(id) || !username) return null;

  const urls = arr(at(legacy, "entities", "url", "urls"));
  const firstUrl = obj(urls[0]);
  const url = str(firstUrl?.expanded_url) ?? str(firstUrl?.url) ?? str(legacy.url) ?? null;
  const type = str(legacy.verified_type) ?? str(at(r, "verification", "verified_type"));
  const verifiedType =
    type === "Business"
      ? "business"
      : type === "Government"
        ? "government"
        : r.is_blue_verified === true
          ? "blue"
          : "none";
  const pinned = str(arr(legacy.pinned_tweet_ids_str)[0]);
  const location = str(at(r, "location", "location")) ?? str(legacy.location);

  return {
    id,
    name: str(core.name) ?? str(legacy.name) ?? username,
    username,
    createdAt: isoTime(core.created_at ?? legacy.created_at),
    description: str(at(r, "profile_bio", "description")) ?? str(legacy.description) ?? "",
    location: location ? location : null,
    url,
    profileImageUrl: str(at(r, "avatar", "image_url")) ?? str(legacy.profile_image_url_https) ?? null,
    profileBannerUrl: str(legacy.profile_banner_url) ?? null,
    protected: at(r, "privacy", "protected") === true || legacy.protected === true,
    verified:
      verifiedType !== "none" || legacy.verified === true || at(r, "verification", "verified") === true,
    verifiedType,
    pinnedTweetId: pinned && /^\d+$/.test(pinned) ? pinned : null,
    metrics: {
      followersCount: num(legacy.followers_count),
      followingCount: num(legacy.friends_count),
      tweetCount: num(legacy.statuses_count),
      listedCount: num(legacy.listed_count),
      ...(legacy.favourites_count !== undefined && { likeCount: num(legacy.favourites_count) }),
    },
  };
}
