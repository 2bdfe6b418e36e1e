/**
 * A list from `ListByRestId`'s `data.list`: `id_str`, `name`, `description`, `mode` (`Public`/`Private`),
 * `member_count`, `subscriber_count`, `created_at` (epoch milliseconds), the banner
 * (`custom_banner_media` over `default_banner_media`, `media_info.original_img_url`) and its owner in
 * `user_results.result`. A private one is `null`, as an unknown one.
 */
import type { ListLookup } from "../../provider.ts";
import { at, isoTime, num, obj, str } from "./json.ts";
import { parseUser } from "./parse-user.ts";

export function parseList(value: unknown): ListLookup | null {
  const l = obj(value);
  const id = str(l?.id_str) ?? str(l?.rest_id);
  if (!l || !id || !/^\d+$/.test(id)) return null;
  if (String(l.mode ?? "").toLowerCase() === "private") return null;
  const owner = parseUser(at(l, "user_results", "result"));
  if (!owner) return null;
  return {
    list: {
      id,
      name: str(l.name) ?? "",
      description: str(l.description) ?? "",
      mode: "public",
      memberCount: num(l.member_count),
      followerCount: num(l.subscriber_count),
      createdAt: isoTime(l.created_at),
      bannerUrl:
        str(at(l, "custom_banner_media", "media_info", "original_img_url")) ??
        str(at(l, "default_banner_media", "media_info", "original_img_url")) ??
        null,
      ownerId: owner.id,
    },
    owner,
  };
}
