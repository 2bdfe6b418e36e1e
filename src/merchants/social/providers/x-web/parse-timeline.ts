/**
 * X's GraphQL timelines: `instructions[]`, of which `TimelineAddEntries` brings `entries[]` (a tweet or a
 * user in a `TimelineTimelineItem`, several in a `TimelineTimelineModule`, the cursors in
 * `TimelineTimelineCursor`s), `TimelineReplaceEntry` a replaced cursor, `TimelineAddToModule` more items of
 * a module, and `TimelinePinEntry` a profile's pinned tweet (left out: pages are newest first). Promoted
 * entries are left out. X names the kinds in `type` or `__typename` (instructions) and `entryType`,
 * `itemType` or `__typename` (contents); all are read.
 */
import { arr, at, obj, str } from "./json.ts";

export interface TimelineItem {
  entryId: string;
  kind: "tweet" | "user";
  /** The raw `tweet_results.result` or `user_results.result`. */
  result: unknown;
}

export interface Timeline {
  items: TimelineItem[];
  /** The `Bottom` cursor: X gives one even on the last page. */
  bottom?: string;
}

const kindOf = (value: unknown): string | undefined =>
  str(obj(value)?.type) ??
  str(obj(value)?.entryType) ??
  str(obj(value)?.itemType) ??
  str(obj(value)?.__typename);

export function parseTimeline(instructions: unknown): Timeline {
  const timeline: Timeline = { items: [] };
  for (const instruction of arr(instructions)) {
    const kind = kindOf(instruction);
    if (kind === "TimelineAddEntries")
      for (const entry of arr(obj(instruction)?.entries)) addEntry(timeline, entry);
    else if (kind === "TimelineReplaceEntry") addEntry(timeline, obj(instruction)?.entry);
    else if (kind === "TimelineAddToModule")
      for (const item of arr(obj(instruction)?.moduleItems))
        addItem(timeline, str(obj(item)?.entryId) ?? "", at(item, "item", "itemContent"));
  }
  return timeline;
}

function addEntry(timeline: Timeline, entry: unknown): void {
  const entryId = str(obj(entry)?.entryId) ?? "";
  if (entryId.startsWith("promoted")) return;
  const content = obj(obj(entry)?.content);
  if (!content) return;
  const kind = kindOf(content);
  if (kind === "TimelineTimelineCursor") addCursor(timeline, content);
  else if (kind === "TimelineTimelineItem") addItem(timeline, entryId, content.itemContent);
  else if (kind === "TimelineTimelineModule")
    for (const item of arr(content.items))
      addItem(timeline, str(obj(item)?.entryId) ?? entryId, at(item, "item", "itemContent"));
}

function addCursor(timeline: Timeline, cursor: Record<string, unknown>): void {
  const value = str(cursor.value);
  if (value && cursor.cursorType === "Bottom") timeline.bottom = value;
}

function addItem(timeline: Timeline, entryId: string, itemContent: unknown): void {
  const content = obj(itemContent);
  if (!content || content.promotedMetadata) return;
  const kind = kindOf(content);
  if (kind === "TimelineTweet")
    timeline.items.push({ entryId, kind: "tweet", result: at(content, "tweet_results", "result") });
  else if (kind === "TimelineUser")
    timeline.items.push({ entryId, kind: "user", result: at(content, "user_results", "result") });
  else if (kind === "TimelineTimelineCursor") addCursor(timeline, content);
}
