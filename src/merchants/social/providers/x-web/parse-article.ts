/**
 * An article (X's long-form post) from its hosting tweet's `article.article_results.result`: `rest_id`,
 * `title`, `preview_text`, `cover_media.media_info.original_img_url`, `metadata.first_published_at_secs`,
 * and the body as Draft.js `content_state` (asked for with the `withArticleRichContentState` field toggle).
 * X writes `entityMap` as a list of `{key, value}`; the model keys it by the decimal strings.
 */
import type { DraftBlock, DraftContentState, DraftEntity, SocialArticle, SocialUser } from "../../model.ts";
import { arr, at, num, obj, str } from "./json.ts";
import { Collected, parseTweet } from "./parse-tweet.ts";

/** The article a tweet hosts, with its author: null when it hosts none or its author is not there. */
export function parseHostedArticle(
  tweetResult: Record<string, unknown>,
): { article: SocialArticle; author: SocialUser } | null {
  const into = new Collected();
  const t = parseTweet(tweetResult, into);
  const author = t && into.users.get(t.authorId);
  if (!t || !author) return null;
  const article = parseArticle(tweetResult, t.id, author.id, t.createdAt);
  return article ? { article, author } : null;
}

export function parseArticle(
  tweetResult: Record<string, unknown>,
  tweetId: string,
  authorId: string,
  tweetCreatedAt: string,
): SocialArticle | null {
  const a = obj(at(tweetResult, "article", "article_results", "result"));
  const id = str(a?.rest_id);
  if (!a || !id || !/^\d+$/.test(id)) return null;
  const published = num(at(a, "metadata", "first_published_at_secs"));
  const state = parseContentState(a.content_state);
  const previewText = str(a.preview_text) ?? "";
  return {
    id,
    tweetId,
    authorId,
    title: str(a.title) ?? "",
    previewText,
    coverImageUrl: str(at(a, "cover_media", "media_info", "original_img_url")) ?? null,
    publishedAt: published > 0 ? new Date(published * 1000).toISOString() : tweetCreatedAt,
    content: state
      ? { format: "draftjs", state }
      : { format: "markdown", markdown: str(a.plain_text) ?? previewText },
  };
}

export function parseContentState(value: unknown): DraftContentState | null {
  const s = obj(value);
  if (!s || !Array.isArray(s.blocks)) return null;
  const blocks: DraftBlock[] = arr(s.blocks).flatMap((b) => {
    const block = obj(b);
    if (!block) return [];
    return [
      {
        key: str(block.key) ?? "",
        type: str(block.type) ?? "unstyled",
        text: str(block.text) ?? "",
        ...(typeof block.depth === "number" && { depth: block.depth }),
        inlineStyleRanges: arr(block.inlineStyleRanges).flatMap((r) => {
          const range = obj(r);
          const style = str(range?.style);
          return range && style ? [{ offset: num(range.offset), length: num(range.length), style }] : [];
        }),
        entityRanges: arr(block.entityRanges).flatMap((r) => {
          const range = obj(r);
          const key = range?.key;
          return range && (typeof key === "number" || typeof key === "string")
            ? [{ offset: num(range.offset), length: num(range.length), key }]
            : [];
        }),
      },
    ];
  });
  const entityMap: Record<string, DraftEntity> = {};
  const entity = (value: unknown): DraftEntity | undefined => {
    const e = obj(value);
    const type = str(e?.type);
    return e && type
      ? { type, ...(str(e.mutability) && { mutability: str(e.mutability) }), data: obj(e.data) ?? {} }
      : undefined;
  };
  if (Array.isArray(s.entityMap)) {
    for (const pair of s.entityMap) {
      const key = obj(pair)?.key;
      const e = entity(obj(pair)?.value);
      if ((typeof key === "string" || typeof key === "number") && e) entityMap[String(key)] = e;
    }
  } else {
    for (const [key, value] of Object.entries(obj(s.entityMap) ?? {})) {
      const e = entity(value);
      if (e) entityMap[key] = e;
    }
  }
  return { blocks, entityMap };
}
