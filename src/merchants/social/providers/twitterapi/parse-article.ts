/** twitterapi.io's article (`/twitter/article`'s `article`), its paragraphs joined as markdown. */
import type { SocialArticle, SocialUser } from "../../model.ts";
import { asArray, idOf, invalid, isObject, isoTime, parseUser, text } from "./parse-user.ts";

/** The article with its author, or null when the tweet has none. */
export function parseArticle(
  a: unknown,
  tweetId: string,
): { article: SocialArticle; author: SocialUser } | null {
  if (!isObject(a) || Object.keys(a).length === 0) return null;
  const author = parseUser(a.author);
  const publishedAt = isoTime(a.createdAt);
  if (!author || !publishedAt) throw invalid("an article without an author or a time");
  const paragraphs = asArray(a.contents)
    .map((c) => (isObject(c) ? text(c.text) : ""))
    .filter((p) => p !== "");
  const article: SocialArticle = {
    id: idOf(a.id) ?? idOf(a.rest_id) ?? tweetId,
    tweetId,
    authorId: author.id,
    title: text(a.title),
    previewText: text(a.preview_text),
    coverImageUrl: text(a.cover_media_img_url) || null,
    publishedAt,
    content: { format: "markdown", markdown: paragraphs.join("\n\n") },
  };
  return { article, author };
}
