/**
 * Markup for the pages the services render on the server (report pages, the leaderboard, merchants'
 * API references, the daily chart's SVG): hono's `html` helper, which escapes every interpolated value
 * (`& < > " '`) unless it is markup already, here typed and synchronous.
 */
import { html as honoHtml, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Markup that is already safe: the only kind of value `html` interpolates without escaping. */
export type Markup = HtmlEscapedString;

// Booleans and nulls are not accepted: hono would print nothing where a word was meant.
type Part = Markup | string | number | readonly (Markup | string | number)[];

/**
 * Tagged template that escapes every interpolated string or number; arrays are joined.
 * @example html`<p>${userText}</p>` // "<p>&lt;b&gt;</p>" for "<b>"
 */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Markup {
  const out = honoHtml(strings, ...parts);
  // Only promises make hono's result asynchronous, and no part here is one.
  if (out instanceof Promise) throw new TypeError("html: asynchronous parts are not supported");
  return out;
}

/** Marks markup this program built itself as safe. */
export const trusted = (markup: string): Markup => raw(markup);

export const nothing: Markup = raw("");

/** Text escaped for HTML or XML content and quoted attribute values. */
export const escapeText = (text: string): string => html`${text}`.toString();
