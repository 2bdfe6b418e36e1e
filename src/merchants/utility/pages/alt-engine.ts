/**
 * Image alt-text audit for `/api/seo/alt-check`. What counts as an image: `<img>`, `<svg role="img">`,
 * `<area href>` of image maps and `<input type="image">`. Each is either decorative (counted apart, no
 * issue), good, or carries one or more issues:
 *
 * - `missing_alt`: an `<img>` with no `alt` attribute at all (screen readers then read the file name).
 *   An `<img>` marked `role="presentation"`/`"none"` or `aria-hidden="true"` is decorative instead.
 * - `filename_alt`: the alt is a file name (`IMG_2041.jpg`, `hero-banner.png`), the src's own file
 *   name (without extension only when it has a `-`, `_` or digit), or a camera name (`DSC_0042`).
 * - `generic_alt`: the alt says nothing about the picture ("image", "photo", "logo", "picture of"...).
 * - `long_alt`: more than 125 characters, where many screen readers used to cut off; long content belongs
 *   in the text or a `<figcaption>`.
 * - `unlabeled_svg`: `<svg role="img">` with no `aria-labelledby`, `aria-label` or `<title>`.
 * - `area_missing_alt`: an `<area href>` with no alt or ARIA name: the link is nameless.
 * - `input_image_missing_alt`: `<input type="image">` with no alt, ARIA name or title: a nameless button.
 *
 * `alt=""` (or only spaces) on an `<img>` marks it decorative (WCAG technique H67): counted in
 * `empty_alt_decorative`, not an issue; a page cannot say statically whether that was the right call.
 */
import type { DomElement } from "./dom.ts";
import { ariaName, clean, isDecorative, selectorOf, snippetOf, svgName } from "./element.ts";
import type { Page } from "./parse.ts";

export const LONG_ALT_CHARS = 125;

export const ISSUE_TYPES = [
  "missing_alt",
  "filename_alt",
  "generic_alt",
  "long_alt",
  "unlabeled_svg",
  "area_missing_alt",
  "input_image_missing_alt",
] as const;
export type IssueType = (typeof ISSUE_TYPES)[number];

/** Alts that name the medium, not the content (compared lower-case, punctuation stripped). */
const GENERIC = new Set([
  "image",
  "img",
  "images",
  "photo",
  "photos",
  "photograph",
  "picture",
  "pic",
  "graphic",
  "graphics",
  "icon",
  "logo",
  "banner",
  "thumbnail",
  "thumb",
  "placeholder",
  "spacer",
  "untitled",
  "alt",
  "alt text",
  "image description",
  "description",
  "blank",
  "null",
  "none",
  "default",
  "figure",
  "screenshot",
  "click here",
  "here",
  "link",
  "image of",
  "photo of",
  "picture of",
]);

const IMAGE_EXTENSION = /\.(jpe?g|png|gif|webp|avif|svg|bmp|tiff?|ico|heic)$/i;
const CAMERA_NAME = /^(img|dsc|dscn|dcim|pxl|photo|screenshot|screen shot|image)[\s_-]?\d{3,}/i;

export interface AltIssue {
  type: IssueType;
  element: "img" | "svg" | "area" | "input";
  /** The image's src (absolute) or the area's href; null for inline SVG. */
  src: string | null;
  alt: string | null;
  selector: string;
  snippet: string;
}

export interface AltReport {
  url: string;
  images_total: number;
  with_good_alt: number;
  missing_alt: number;
  empty_alt_decorative: number;
  low_quality_alt: number;
  summary: Record<IssueType, number>;
  issues: AltIssue[];
  decorative: { src: string | null; selector: string }[];
}

export function auditAlts(page: Page): AltReport {
  const doc = page.document;
  const issues: AltIssue[] = [];
  const decorative: AltReport["decorative"] = [];
  let total = 0;
  let good = 0;
  let lowQuality = 0;
  const resolve = (value: string | null) => absolute(value, doc.baseURI);

  const report = (
    el: DomElement,
    element: AltIssue["element"],
    src: string | null,
    alt: string | null,
    types: IssueType[],
  ) => {
    total += 1;
    if (types.length === 0) good += 1;
    if (types.some((t) => t === "filename_alt" || t === "generic_alt" || t === "long_alt")) lowQuality += 1;
    for (const type of types)
      issues.push({ type, element, src, alt, selector: selectorOf(el), snippet: snippetOf(el) });
  };

  for (const el of Array.from(doc.querySelectorAll("img, svg, area, input"))) {
    const name = el.localName;
    if (name === "img") {
      const src = resolve(el.getAttribute("src"));
      const alt = el.getAttribute("alt");
      if ((alt !== null && clean(alt) === "") || (alt === null && isDecorative(el))) {
        total += 1;
        decorative.push({ src, selector: selectorOf(el) });
        continue;
      }
      report(el, "img", src, alt, alt === null ? ["missing_alt"] : qualityIssues(clean(alt), src));
    } else if (name === "svg") {
      if (clean(el.getAttribute("role")).toLowerCase() !== "img") continue;
      report(el, "svg", null, null, svgName(el) ? [] : ["unlabeled_svg"]);
    } else if (name === "area") {
      if (!el.hasAttribute("href")) continue;
      const alt = clean(el.getAttribute("alt"));
      const named = alt || ariaName(el);
      report(
        el,
        "area",
        resolve(el.getAttribute("href")),
        el.getAttribute("alt"),
        named ? qualityIssues(alt, null) : ["area_missing_alt"],
      );
    } else if (clean(el.getAttribute("type")).toLowerCase() === "image") {
      const alt = clean(el.getAttribute("alt"));
      const named = alt || ariaName(el) || clean(el.getAttribute("title"));
      const src = resolve(el.getAttribute("src"));
      report(
        el,
        "input",
        src,
        el.getAttribute("alt"),
        named ? qualityIssues(alt, src) : ["input_image_missing_alt"],
      );
    }
  }
  const summary = Object.fromEntries(
    ISSUE_TYPES.map((t) => [t, issues.filter((i) => i.type === t).length]),
  ) as Record<IssueType, number>;
  return {
    url: page.url,
    images_total: total,
    with_good_alt: good,
    missing_alt: summary.missing_alt,
    empty_alt_decorative: decorative.length,
    low_quality_alt: lowQuality,
    summary,
    issues,
    decorative,
  };
}

/** Issues of a non-empty alt text; "" (an ARIA-named element with no alt) has none. */
export function qualityIssues(alt: string, src: string | null): IssueType[] {
  if (alt === "") return [];
  const issues: IssueType[] = [];
  if (isFilename(alt, src)) issues.push("filename_alt");
  else if (
    GENERIC.has(
      alt
        .toLowerCase()
        .replace(/[^\p{L}\p{N} ]+/gu, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
  )
    issues.push("generic_alt");
  if (alt.length > LONG_ALT_CHARS) issues.push("long_alt");
  return issues;
}

function isFilename(alt: string, src: string | null): boolean {
  if (!/\s/.test(alt) && IMAGE_EXTENSION.test(alt)) return true;
  if (CAMERA_NAME.test(alt)) return true;
  if (!src) return false;
  const file = decodeURIComponentSafe(src.split(/[?#]/)[0]?.split("/").pop() ?? "").toLowerCase();
  const stem = file.replace(/\.[a-z0-9]+$/, "");
  const text = alt.toLowerCase();
  // A bare stem counts only when it looks machine-made ("harbour-boats", "hero_2x"): alt="Search" on
  // search.png is a fine alternative that happens to match.
  return file !== "" && (text === file || (text === stem && /[-_\d]/.test(stem)));
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function absolute(value: string | null, base: string): string | null {
  if (value === null) return null;
  try {
    return new URL(value.trim(), base).href;
  } catch {
    return value;
  }
}
