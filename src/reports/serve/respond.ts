/**
 * Answering a kept answer over HTTP (answers.ts) with its validators, so that browsers, CDNs and badge
 * proxies revalidate with a `304` instead of fetching the body again.
 */
import type { Context } from "hono";
import type { Answer, Answers, Render } from "./answers.ts";
import type { ReportService } from "./service.ts";

/**
 * Seconds a reader may reuse an answer of the latest window without asking: the indexer commits about
 * every block, and Base makes one every 2 s.
 */
export const LATEST_MAX_AGE = 2;
/** A window asked for by its end block changes only when a write reaches into it (a deep reorg, a new merchant). */
export const WINDOW_MAX_AGE = 300;

/**
 * The answer, or `304 Not Modified` when the request's validators show the reader holds it already;
 * `latest`: asked for the latest window, not by its end block.
 */
export function respond(c: Context, answer: Answer, latest: boolean): Response {
  c.header("ETag", answer.etag);
  c.header("Last-Modified", answer.lastModified);
  c.header("Cache-Control", `public, max-age=${latest ? LATEST_MAX_AGE : WINDOW_MAX_AGE}`);
  if (notModified(c.req.header("If-None-Match"), c.req.header("If-Modified-Since"), answer)) {
    return c.body(null, 304);
  }
  c.header("Content-Type", answer.type);
  return c.body(answer.body);
}

/** RFC 9110 13.1: `If-None-Match` (weak comparison) decides when present, else `If-Modified-Since`. */
function notModified(
  noneMatch: string | undefined,
  modifiedSince: string | undefined,
  answer: Answer,
): boolean {
  if (noneMatch !== undefined) {
    if (noneMatch.trim() === "*") return true;
    return noneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === answer.etag);
  }
  if (modifiedSince === undefined) return false;
  const since = Date.parse(modifiedSince);
  return Number.isFinite(since) && since >= Date.parse(answer.lastModified);
}

/**
 * Answers `what` (a path without its query) for the window ending at `endBlock` from `answers`, rendered
 * by `render` for that window's end block when no kept answer is current. Without `endBlock`, the latest
 * window as readers are served it (`ReportService.latestEnd`): the last one built while the next head's
 * is built, kept as the window of its end block, which commits above it do not touch.
 */
export async function answerCached(
  c: Context,
  answers: Answers,
  reports: ReportService,
  what: string,
  endBlock: number | undefined,
  render: Render,
): Promise<Response> {
  const end = endBlock ?? (await reports.latestEnd());
  const answer = await answers.get(what, end, render);
  return respond(c, answer, endBlock === undefined);
}
