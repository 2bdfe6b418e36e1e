import type { DomDocument, DomElement, DomNode } from "./dom.ts";

/**
 * Small DOM helpers the audits share: where an element is (a CSS selector a developer can paste into
 * devtools), what it looks like (a short HTML snippet), and its accessible name as far as static HTML
 * tells (a subset of accname 1.2: aria-labelledby, aria-label, then the element's own sources).
 */

/** Longest snippet returned; enough to recognise an element, short enough for a report of hundreds. */
export const SNIPPET_MAX = 200;

/** Collapses runs of whitespace and trims. */
export function clean(text: string | null | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}

/** The element's opening tag and the start of its content, cut at `SNIPPET_MAX` characters. */
export function snippetOf(el: DomElement): string {
  return clip(clean(el.outerHTML));
}

/** `text` cut to at most `max` characters, an ellipsis marking the cut. */
export function clip(text: string, max = SNIPPET_MAX): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A selector that matches this element: `#id` when the id is unique, else the nearest uniquely-id'd
 * ancestor (or `html`) followed by `tag:nth-of-type(n)` steps.
 */
export function selectorOf(el: DomElement): string {
  const ids = idCounts(el.ownerDocument);
  const steps: string[] = [];
  let node: DomElement | null = el;
  while (node) {
    const id = node.getAttribute("id");
    if (id && isIdent(id) && ids.get(id) === 1) {
      steps.unshift(`#${id}`);
      break;
    }
    const parent: DomElement | null = node.parentElement;
    if (!parent) {
      steps.unshift(node.localName);
      break;
    }
    steps.unshift(stepsUnder(parent).get(node) ?? node.localName);
    node = parent;
  }
  return steps.join(" > ");
}

/*
 * Both caches make a page's selectors linear in its size. Asked of each element, `parent.children` (jsdom
 * looks every index up as a possible named item, O(children)) and `querySelectorAll("#id")` made an audit of
 * 66,000 images on one parent cubic: minutes of CPU (issue 69). Weak: they go with the page.
 */
const idsOf = new WeakMap<DomDocument, Map<string, number>>();
const stepsOf = new WeakMap<DomElement, Map<DomElement, string>>();

/** How many elements of the document carry each id. */
function idCounts(doc: DomDocument): Map<string, number> {
  let counts = idsOf.get(doc);
  if (!counts) {
    counts = new Map();
    for (const el of Array.from(doc.querySelectorAll("[id]"))) {
      const id = el.getAttribute("id") ?? "";
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    idsOf.set(doc, counts);
  }
  return counts;
}

/** Each child's step under `parent`: its tag, with `:nth-of-type(n)` when siblings share it. */
function stepsUnder(parent: DomElement): Map<DomElement, string> {
  let steps = stepsOf.get(parent);
  if (steps) return steps;
  const seen = new Map<string, number>();
  const order: [DomElement, string, number][] = [];
  for (let c = parent.firstElementChild; c; c = c.nextElementSibling) {
    const n = (seen.get(c.localName) ?? 0) + 1;
    seen.set(c.localName, n);
    order.push([c, c.localName, n]);
  }
  steps = new Map();
  for (const [c, tag, n] of order) steps.set(c, (seen.get(tag) ?? 0) > 1 ? `${tag}:nth-of-type(${n})` : tag);
  stepsOf.set(parent, steps);
  return steps;
}

function isIdent(id: string): boolean {
  return /^[A-Za-z_][\w-]*$/.test(id);
}

/** Text a user perceives, skipping `aria-hidden` subtrees, scripts and styles; images count by their alt. */
export function visibleText(el: DomElement): string {
  const parts: string[] = [];
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) {
      parts.push(node.textContent ?? "");
      return;
    }
    if (node.nodeType !== 1) return;
    const e = node as DomElement;
    if (e.getAttribute("aria-hidden") === "true" || e.hasAttribute("hidden")) return;
    if (["script", "style", "template", "noscript"].includes(e.localName)) return;
    if (e.localName === "img" || (e.localName === "input" && e.getAttribute("type") === "image")) {
      parts.push(` ${e.getAttribute("alt") ?? ""} `);
      return;
    }
    if (e.localName === "svg") {
      parts.push(` ${svgName(e)} `);
      return;
    }
    for (const child of Array.from(e.childNodes)) walk(child);
  };
  walk(el);
  return clean(parts.join(""));
}

/** The text of the elements `aria-labelledby` points to ("" when none exists or all are empty). */
export function labelledByText(el: DomElement): string {
  const ids = clean(el.getAttribute("aria-labelledby")).split(" ").filter(Boolean);
  return clean(
    ids
      .map((id) => el.ownerDocument.getElementById(id))
      .map((target) => (target ? visibleText(target) : ""))
      .join(" "),
  );
}

/** Name from ARIA attributes only: aria-labelledby first, then aria-label. */
export function ariaName(el: DomElement): string {
  return labelledByText(el) || clean(el.getAttribute("aria-label"));
}

/** An `<svg>`'s name: ARIA, then its `<title>` child. */
export function svgName(svg: DomElement): string {
  const title = Array.from(svg.children).find((c) => c.localName === "title");
  return ariaName(svg) || clean(title?.textContent);
}

/** Marked as presentational or hidden from assistive technology: needs no text alternative. */
export function isDecorative(el: DomElement): boolean {
  const role = clean(el.getAttribute("role")).toLowerCase();
  return role === "presentation" || role === "none" || el.getAttribute("aria-hidden") === "true";
}
