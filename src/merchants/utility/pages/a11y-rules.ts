/**
 * The static WCAG 2.2 checks of `/api/a11y/check`, one rule each: what it flags, the success criterion
 * it maps to, and its impact (axe-core's scale: minor, moderate, serious, critical). Static means the
 * HTML as served: no script runs and no stylesheet is applied, so a rule only flags what the markup
 * alone proves; anything that needs rendering is in `NOT_CHECKED`.
 */
import { composite, contrastRatio, parseColor, type Rgba } from "../data/contrast-engine.ts";
import type { DomDocument, DomElement } from "./dom.ts";
import { ariaName, clean, isDecorative, svgName, visibleText } from "./element.ts";

export type Level = "A" | "AA" | "AAA";
export type Impact = "minor" | "moderate" | "serious" | "critical";

export interface Hit {
  element: DomElement;
  message: string;
}

export interface Rule {
  id: string;
  criterion: string;
  criterion_name: string;
  level: Level;
  impact: Impact;
  /** What the rule flags, for the report's `rules` list. */
  description: string;
  check: (doc: DomDocument) => Hit[];
}

const all = (doc: DomDocument, selector: string) => Array.from(doc.querySelectorAll(selector));

/** Controls that take a label (not hidden, not buttons: buttons are named by their value or content). */
const LABELABLE =
  "input:not([type=hidden]):not([type=submit]):not([type=reset]):not([type=button]):not([type=image]), select, textarea";

function hasLabel(el: DomElement): boolean {
  if (ariaName(el) || clean(el.getAttribute("title"))) return true;
  const id = el.getAttribute("id");
  if (id) {
    for (const label of all(el.ownerDocument, "label[for]")) {
      if (label.getAttribute("for") === id && visibleText(label)) return true;
    }
  }
  const wrapper = el.closest("label");
  return wrapper !== null && visibleText(wrapper) !== "";
}

/** A table used for data: not role=presentation/none, and more than one row. */
function isDataTable(table: DomElement): boolean {
  const role = clean(table.getAttribute("role")).toLowerCase();
  return role !== "presentation" && role !== "none" && table.querySelectorAll("tr").length > 1;
}

/** `1.4.3` and `1.4.6` need both colours on the same element's inline style and text directly inside. */
function inlineContrast(el: DomElement): { ratio: number; large: boolean } | null {
  const style = parseStyle(el.getAttribute("style") ?? "");
  const fg = style.get("color");
  const bg = style.get("background-color") ?? style.get("background");
  if (!fg || !bg) return null;
  const ownText = Array.from(el.childNodes)
    .filter((n) => n.nodeType === 3)
    .map((n) => n.textContent ?? "")
    .join("")
    .trim();
  if (!ownText) return null;
  let background: Rgba;
  let foreground: Rgba;
  try {
    background = parseColor(bg);
    foreground = parseColor(fg);
  } catch {
    return null; // gradients, images, var(): not computable without rendering
  }
  if (background.alpha < 1) return null; // what shows through is unknown statically
  const ratio = contrastRatio(composite(foreground, background), background);
  return { ratio, large: isLargeText(style, el) };
}

function parseStyle(style: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const declaration of style.split(";")) {
    const i = declaration.indexOf(":");
    if (i > 0)
      map.set(
        declaration.slice(0, i).trim().toLowerCase(),
        declaration
          .slice(i + 1)
          .replace(/!important/i, "")
          .trim(),
      );
  }
  return map;
}

/** WCAG "large scale": at least 18 pt (24 px), or 14 pt (18.66 px) bold; only px/pt sizes are known. */
function isLargeText(style: Map<string, string>, el: DomElement): boolean {
  const size = /^([\d.]+)(px|pt)$/.exec(style.get("font-size") ?? "");
  const px = size ? Number(size[1]) * (size[2] === "pt" ? 4 / 3 : 1) : 16;
  const weight = style.get("font-weight") ?? "";
  const bold =
    weight === "bold" ||
    weight === "bolder" ||
    Number(weight) >= 700 ||
    /^(b|strong|h[1-6])$/.test(el.localName);
  return px >= 24 || (bold && px >= 18.66);
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export const RULES: readonly Rule[] = [
  {
    id: "image-alt",
    criterion: "1.1.1",
    criterion_name: "Non-text Content",
    level: "A",
    impact: "critical",
    description:
      "<img> without alt (unless role=presentation/none or aria-hidden), <input type=image>, <area href> and <svg role=img> without a text alternative.",
    check: (doc) => [
      ...all(doc, "img:not([alt])")
        .filter((el) => !isDecorative(el) && !ariaName(el) && !clean(el.getAttribute("title")))
        .map((element) => ({ element, message: "Image has no alt attribute." })),
      ...all(doc, "input[type=image i]")
        .filter((el) => !clean(el.getAttribute("alt")) && !ariaName(el) && !clean(el.getAttribute("title")))
        .map((element) => ({ element, message: "Image button has no text alternative." })),
      ...all(doc, "area[href]")
        .filter((el) => !clean(el.getAttribute("alt")) && !ariaName(el))
        .map((element) => ({ element, message: "Image-map area has no alt." })),
      ...all(doc, "svg[role=img i]")
        .filter((el) => !svgName(el))
        .map((element) => ({
          element,
          message: "<svg role=img> has no aria-label, aria-labelledby or <title>.",
        })),
    ],
  },
  {
    id: "label",
    criterion: "1.3.1",
    criterion_name: "Info and Relationships",
    level: "A",
    impact: "critical",
    description:
      "Form fields with no <label> (for= or wrapping), aria-label, aria-labelledby or title; a placeholder is not a label.",
    check: (doc) =>
      all(doc, LABELABLE)
        .filter((el) => !hasLabel(el) && !isDecorative(el))
        .map((element) => ({ element, message: "Form field has no label." })),
  },
  {
    id: "table-headers",
    criterion: "1.3.1",
    criterion_name: "Info and Relationships",
    level: "A",
    impact: "serious",
    description: "Data tables (two or more rows, not role=presentation) without any <th> header cell.",
    check: (doc) =>
      all(doc, "table")
        .filter(
          (t) => isDataTable(t) && t.querySelector("th, [role=columnheader], [role=rowheader]") === null,
        )
        .map((element) => ({ element, message: "Data table has no header cells (<th>)." })),
  },
  {
    id: "heading-order",
    criterion: "1.3.1",
    criterion_name: "Info and Relationships",
    level: "A",
    impact: "moderate",
    description:
      "A heading more than one level deeper than the heading before it (h2 then h4), so the outline skips a level.",
    check: (doc) => {
      const hits: Hit[] = [];
      let previous = 0;
      for (const h of all(doc, "h1, h2, h3, h4, h5, h6")) {
        const level = Number(h.localName.slice(1));
        if (previous > 0 && level > previous + 1) {
          hits.push({ element: h, message: `Heading level skipped: h${previous} followed by h${level}.` });
        }
        previous = level;
      }
      return hits;
    },
  },
  {
    id: "color-contrast",
    criterion: "1.4.3",
    criterion_name: "Contrast (Minimum)",
    level: "AA",
    impact: "serious",
    description:
      "Text whose colour and opaque background are both set in its own inline style, below 4.5:1 (3:1 for large text). Stylesheet colours need rendering: not checked.",
    check: (doc) =>
      all(doc, "[style]").flatMap((element) => {
        const c = inlineContrast(element);
        const needed = c?.large ? 3 : 4.5;
        return c && c.ratio < needed
          ? [{ element, message: `Contrast ${round2(c.ratio)}:1, below ${needed}:1.` }]
          : [];
      }),
  },
  {
    id: "color-contrast-enhanced",
    criterion: "1.4.6",
    criterion_name: "Contrast (Enhanced)",
    level: "AAA",
    impact: "moderate",
    description: "As color-contrast, against 7:1 (4.5:1 for large text); flagged only where 1.4.3 passes.",
    check: (doc) =>
      all(doc, "[style]").flatMap((element) => {
        const c = inlineContrast(element);
        if (!c) return [];
        const minimum = c.large ? 3 : 4.5;
        const needed = c.large ? 4.5 : 7;
        return c.ratio >= minimum && c.ratio < needed
          ? [{ element, message: `Contrast ${round2(c.ratio)}:1, below ${needed}:1.` }]
          : [];
      }),
  },
  {
    id: "meta-viewport",
    criterion: "1.4.4",
    criterion_name: "Resize Text",
    level: "AA",
    impact: "critical",
    description: "<meta name=viewport> with user-scalable=no or maximum-scale below 2: zoom is blocked.",
    check: (doc) =>
      all(doc, "meta[name=viewport i]").flatMap((element) => {
        const content = (element.getAttribute("content") ?? "").toLowerCase();
        const max = /maximum-scale\s*=\s*([\d.]+)/.exec(content);
        const blocked = /user-scalable\s*=\s*(no|0)\b/.test(content) || (max !== null && Number(max[1]) < 2);
        return blocked ? [{ element, message: "The viewport blocks zooming." }] : [];
      }),
  },
  {
    id: "meta-refresh",
    criterion: "2.2.1",
    criterion_name: "Timing Adjustable",
    level: "A",
    impact: "critical",
    description: "<meta http-equiv=refresh> with a delay above 0: the page reloads or moves on a timer.",
    check: (doc) =>
      all(doc, "meta[http-equiv=refresh i]").flatMap((element) => {
        const delay = Number.parseFloat(element.getAttribute("content") ?? "");
        return delay > 0 ? [{ element, message: `Timed refresh after ${delay} s.` }] : [];
      }),
  },
  {
    id: "bypass",
    criterion: "2.4.1",
    criterion_name: "Bypass Blocks",
    level: "A",
    impact: "serious",
    description:
      "No way to skip repeated content: no <main>/role=main landmark, no heading and no in-page skip link.",
    check: (doc) => {
      const landmark = doc.querySelector("main, [role=main]");
      const heading = doc.querySelector("h1, h2, h3, h4, h5, h6, [role=heading]");
      const skip = doc.querySelector('a[href^="#"]:not([href="#"])');
      return landmark || heading || skip || !doc.body
        ? []
        : [{ element: doc.body, message: "No landmark, heading or skip link to bypass blocks." }];
    },
  },
  {
    id: "document-title",
    criterion: "2.4.2",
    criterion_name: "Page Titled",
    level: "A",
    impact: "serious",
    description: "No <title>, or an empty one.",
    check: (doc) =>
      clean(doc.querySelector("title")?.textContent)
        ? []
        : [{ element: doc.querySelector("title") ?? doc.documentElement, message: "The page has no title." }],
  },
  {
    id: "link-name",
    criterion: "2.4.4",
    criterion_name: "Link Purpose (In Context)",
    level: "A",
    impact: "serious",
    description:
      "Links (<a href>) with no text: no content, no alt of an image inside, no aria-label(ledby), no title.",
    check: (doc) =>
      all(doc, "a[href]")
        .filter((a) => !isDecorative(a) && !visibleText(a) && !ariaName(a) && !clean(a.getAttribute("title")))
        .map((element) => ({ element, message: "Link has no accessible name." })),
  },
  {
    id: "empty-heading",
    criterion: "2.4.6",
    criterion_name: "Headings and Labels",
    level: "AA",
    impact: "minor",
    description: "Headings with no text.",
    check: (doc) =>
      all(doc, "h1, h2, h3, h4, h5, h6")
        .filter((h) => !visibleText(h) && !ariaName(h))
        .map((element) => ({ element, message: "Heading is empty." })),
  },
  {
    id: "html-has-lang",
    criterion: "3.1.1",
    criterion_name: "Language of Page",
    level: "A",
    impact: "serious",
    description: "<html> without a lang attribute, or with one that is not a valid BCP 47 tag.",
    check: (doc) => {
      const html = doc.documentElement;
      const lang = clean(html.getAttribute("lang") ?? html.getAttribute("xml:lang"));
      if (!lang) return [{ element: html, message: "<html> has no lang attribute." }];
      return validLang(lang)
        ? []
        : [{ element: html, message: `lang="${lang}" is not a valid language tag.` }];
    },
  },
  {
    id: "valid-lang",
    criterion: "3.1.2",
    criterion_name: "Language of Parts",
    level: "AA",
    impact: "serious",
    description: "lang attributes inside the page that are not valid BCP 47 tags.",
    check: (doc) =>
      all(doc, "body [lang]")
        .filter((el) => !validLang(clean(el.getAttribute("lang"))) && clean(el.getAttribute("lang")) !== "")
        .map((element) => ({
          element,
          message: `lang="${element.getAttribute("lang")}" is not a valid language tag.`,
        })),
  },
  {
    id: "duplicate-id",
    criterion: "4.1.1",
    criterion_name: "Parsing (obsolete in WCAG 2.2, kept for 2.1 audits)",
    level: "A",
    impact: "minor",
    description:
      "An id used by more than one element; serious when a label or ARIA reference points to it (the reference is then ambiguous). Reported once per id, at its second use.",
    check: (doc) => {
      const seen = new Map<string, number>();
      const hits: Hit[] = [];
      const referenced = new Set<string>();
      for (const el of all(doc, "label[for]")) referenced.add(el.getAttribute("for") ?? "");
      for (const el of all(doc, "[aria-labelledby], [aria-describedby], [aria-controls]")) {
        for (const attr of ["aria-labelledby", "aria-describedby", "aria-controls"]) {
          for (const id of clean(el.getAttribute(attr)).split(" ")) if (id) referenced.add(id);
        }
      }
      for (const el of all(doc, "[id]")) {
        const id = el.getAttribute("id") ?? "";
        if (!id) continue;
        const count = (seen.get(id) ?? 0) + 1;
        seen.set(id, count);
        if (count === 2) {
          const ref = referenced.has(id) ? " and is referenced by a label or ARIA attribute" : "";
          hits.push({ element: el, message: `id="${id}" is used more than once${ref}.` });
        }
      }
      return hits;
    },
  },
  {
    id: "button-name",
    criterion: "4.1.2",
    criterion_name: "Name, Role, Value",
    level: "A",
    impact: "critical",
    description:
      "Buttons (<button>, role=button, <input type=button>) with no text, aria-label(ledby) or title; submit and reset inputs have a default name.",
    check: (doc) =>
      all(doc, "button, [role=button], input[type=button i]")
        .filter((el) => {
          if (isDecorative(el)) return false;
          const value = el.localName === "input" ? clean(el.getAttribute("value")) : "";
          return !value && !visibleText(el) && !ariaName(el) && !clean(el.getAttribute("title"));
        })
        .map((element) => ({ element, message: "Button has no accessible name." })),
  },
  {
    id: "frame-title",
    criterion: "4.1.2",
    criterion_name: "Name, Role, Value",
    level: "A",
    impact: "serious",
    description: "<iframe> or <frame> without a title or ARIA name.",
    check: (doc) =>
      all(doc, "iframe, frame")
        .filter((el) => !isDecorative(el) && !clean(el.getAttribute("title")) && !ariaName(el))
        .map((element) => ({ element, message: "Frame has no title." })),
  },
];

/** What a static check cannot judge, reported so an empty findings list is not read as "accessible". */
export const NOT_CHECKED: readonly string[] = [
  "1.2.x captions and audio description (needs the media)",
  "1.4.3 contrast of colours from stylesheets, images or gradients (needs rendering)",
  "1.4.10 reflow and 1.4.12 text spacing (needs rendering)",
  "2.1.1 keyboard operability and 2.1.2 keyboard traps (needs interaction)",
  "2.4.3 focus order and 2.4.7 focus visible (needs rendering and interaction)",
  "content changed by scripts after load (no script is run)",
  "whether alt texts and link texts are meaningful (needs a person)",
];

/**
 * Well-formed BCP 47 with a 2-3 letter primary language subtag. The grammar also admits 5-8 letter
 * primary subtags, but none is registered, so `lang="english"` is a mistake, not a language.
 */
function validLang(tag: string): boolean {
  if (!/^[a-z]{2,3}(-|$)/i.test(tag)) return false;
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}
