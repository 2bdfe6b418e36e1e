/**
 * Pages over twitterapi.io's fixed-size pages (20 tweets, 200 followers, about 100 reposters, whatever the
 * route asks for): a caller's page of at most `size` is cut from one upstream page, and its `next` is an opaque
 * cursor holding the upstream cursor and the offset inside that page, so that nothing is skipped or repeated.
 * When the route asks for more than the upstream page holds, it gets that page.
 */
import { BadInputError } from "../../../../common/errors.ts";
import type { Json } from "./client.ts";
import { isObject } from "./parse-user.ts";

/**
 * Where a page starts: the upstream cursor (absent for the first), the offset in that upstream page, the id of
 * the last item served (the page is found again by it when newer items have shifted the first upstream page),
 * and a value resolved on the first page and carried along (the username the followers endpoints want).
 */
export interface Position {
  c?: string;
  o: number;
  l?: string;
  u?: string;
}

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify(p)).toString("base64url");
}

export function decodeCursor(cursor: string | undefined): Position {
  if (cursor === undefined || cursor === "") return { o: 0 };
  try {
    const p = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (
      isObject(p) &&
      Number.isSafeInteger(p.o) &&
      (p.o as number) >= 0 &&
      (p.c === undefined || typeof p.c === "string") &&
      (p.l === undefined || typeof p.l === "string") &&
      (p.u === undefined || typeof p.u === "string")
    ) {
      return {
        o: p.o as number,
        ...(p.c !== undefined && { c: p.c }),
        ...(p.l !== undefined && { l: p.l }),
        ...(p.u !== undefined && { u: p.u }),
      };
    }
  } catch {
    // falls through to the error
  }
  throw new BadInputError("the page cursor is not one this server gave", "invalid_cursor");
}

/** An upstream page's items (under the first of `keys` it has, at the top or in `data`) and its next cursor. */
export function upstreamItems(body: Json, keys: readonly string[]): { items: unknown[]; next?: string } {
  const holders = [body, isObject(body.data) ? body.data : {}];
  let items: unknown[] = [];
  for (const holder of holders) {
    const found = keys.map((k) => holder[k]).find(Array.isArray);
    if (found) {
      items = found;
      break;
    }
  }
  const more = holders.find((h) => h.has_next_page !== undefined) ?? body;
  const next = more.next_cursor;
  return {
    items,
    ...(more.has_next_page === true && typeof next === "string" && next !== "" && { next }),
  };
}

/** The caller's page cut from an upstream page that starts at `at`. */
export function cut<T>(
  items: readonly T[],
  at: Position,
  size: number,
  upstreamNext: string | undefined,
): { items: T[]; next?: string } {
  // Resume after the last item served when it is still there (the page may have shifted), else at the offset.
  const last = at.l === undefined ? -1 : items.findIndex((item) => itemId(item) === at.l);
  const start = last >= 0 ? last + 1 : at.o;
  const rest = items.slice(start);
  const keep = { ...(at.u !== undefined && { u: at.u }) };
  if (rest.length > size) {
    const served = rest.slice(0, size);
    const lastId = itemId(served[served.length - 1]);
    return {
      items: served,
      next: encodeCursor({
        ...keep,
        ...(at.c && { c: at.c }),
        o: start + size,
        ...(lastId && { l: lastId }),
      }),
    };
  }
  // An upstream cursor that does not move would page forever.
  if (upstreamNext === undefined || upstreamNext === at.c) return { items: rest };
  return { items: rest, next: encodeCursor({ ...keep, c: upstreamNext, o: 0 }) };
}

function itemId(item: unknown): string | undefined {
  return isObject(item) && typeof item.id === "string" ? item.id : undefined;
}
