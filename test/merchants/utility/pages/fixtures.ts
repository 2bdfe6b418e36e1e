/** The saved HTML pages of test/fixtures/pages/, parsed as if served from a given URL. */
import { readFileSync } from "node:fs";
import { type Page, parsePage } from "../../../../src/merchants/utility/pages/parse.ts";

export type FixturePage = "article" | "images" | "head" | "wcag";

export function fixtureHtml(name: FixturePage): string {
  return readFileSync(new URL(`../../../fixtures/pages/${name}.html`, import.meta.url), "utf8");
}

export function fixturePage(name: FixturePage, url: string): Page {
  return parsePage(fixtureHtml(name), url);
}
