/**
 * twitterapi.io's user object (their docs: `{type: "user", userName, id, name, isBlueVerified, verifiedType,
 * profilePicture, coverPicture, description, location, followers, following, createdAt, favouritesCount,
 * statusesCount, pinnedTweetIds, unavailable, profile_bio{entities{url{urls[]}}}, ...}`) in the model.
 */
import { UpstreamError } from "../../../../common/errors.ts";
import type { SocialUser } from "../../model.ts";
import type { Json } from "./client.ts";

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const num = (v: unknown): number =>
  typeof v === "number" && Number.isFinite(v) ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : 0;
export const text = (v: unknown): string => (typeof v === "string" ? v : "");

/** A decimal id from a string or a (safe) number; null when it is neither. */
export function idOf(v: unknown): string | null {
  if (typeof v === "string" && /^\d{1,20}$/.test(v)) return v;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  return null;
}

export function invalid(what: string): UpstreamError {
  return new UpstreamError(
    `the social-data provider (twitterapi.io) answered ${what} that makes no sense`,
    "upstream_invalid",
  );
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** X's legacy time (`Sun Nov 01 12:00:00 +0000 2026`) or an ISO time as ISO in UTC; null when neither. */
export function isoTime(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const m =
    /^[A-Z][a-z]{2} ([A-Z][a-z]{2}) (\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2}) (\d{4})$/.exec(v);
  if (m) {
    const month = MONTHS.indexOf(m[1] as string);
    if (month < 0) return null;
    const offset = (m[6] === "-" ? -1 : 1) * (Number(m[7]) * 60 + Number(m[8])) * 60_000;
    const t = Date.UTC(Number(m[9]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) - offset;
    return new Date(t).toISOString();
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(v)) return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

function verifiedTypeOf(u: Json): SocialUser["verifiedType"] {
  const type = text(u.verifiedType).toLowerCase();
  if (type === "business") return "business";
  if (type === "government") return "government";
  if (type === "blue" || u.isBlueVerified === true) return "blue";
  return "none";
}

/** The profile's own link, expanded, from `profile_bio.entities.url.urls[0]`. */
function profileUrl(u: Json): string | null {
  const bio = isObject(u.profile_bio) ? u.profile_bio : {};
  const entities = isObject(bio.entities) ? bio.entities : {};
  const url = isObject(entities.url) ? entities.url : {};
  const first = asArray(url.urls)[0];
  if (!isObject(first)) return null;
  return text(first.expanded_url) || text(first.url) || null;
}

/** A user, or null for one twitterapi.io marks unavailable (suspended, deactivated). Throws 502 on nonsense. */
export function parseUser(u: unknown): SocialUser | null {
  if (!isObject(u)) throw invalid("a user");
  if (u.unavailable === true) return null;
  const id = idOf(u.id);
  const username = text(u.userName);
  if (!id || !username) throw invalid("a user without an id or a username");
  const verifiedType = verifiedTypeOf(u);
  const pinned = idOf(asArray(u.pinnedTweetIds)[0]);
  return {
    id,
    name: text(u.name),
    username,
    createdAt: isoTime(u.createdAt) ?? new Date(0).toISOString(),
    description: text(u.description),
    location: text(u.location) || null,
    url: profileUrl(u),
    profileImageUrl: text(u.profilePicture) || null,
    profileBannerUrl: text(u.coverPicture) || null,
    protected: u.protected === true,
    verified: verifiedType !== "none",
    verifiedType,
    pinnedTweetId: pinned,
    metrics: {
      followersCount: num(u.followers),
      followingCount: num(u.following),
      tweetCount: num(u.statusesCount),
      listedCount: num(u.listedCount),
      ...(u.favouritesCount !== undefined && { likeCount: num(u.favouritesCount) }),
    },
  };
}

/** The users of a page, leaving out the unavailable ones. */
export function parseUsers(list: unknown): SocialUser[] {
  return asArray(list)
    .map(parseUser)
    .filter((u): u is SocialUser => u !== null);
}
