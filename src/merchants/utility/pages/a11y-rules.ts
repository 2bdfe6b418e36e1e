/**
 * What `/api/a11y/check` asks of axe-core, beyond its own rules: the WCAG levels as axe's tags, the axe rules
 * that cannot work without a rendering engine (not run, reported as not checked), what no automated check
 * judges, and the one hand-written rule axe does not cover here.
 *
 * Of the 17 hand-written rules that came before axe, only inline-colour contrast is kept:
 * - 13 have an axe rule of the same id that covers at least as much (image-alt with input-image-alt,
 *   area-alt, svg-img-alt and role-img-alt; label; heading-order; meta-viewport; meta-refresh; bypass;
 *   document-title; link-name; empty-heading; html-has-lang with html-lang-valid; valid-lang; button-name
 *   with input-button-name and aria-command-name; frame-title), so two implementations would only disagree.
 * - table-headers flagged every table of two rows without `<th>`, layout tables included; axe's table rules
 *   (th-has-data-cells, td-headers-attr) flag only what is provably wrong, as a browser audit does.
 * - duplicate-id mapped to 4.1.1, obsolete in WCAG 2.2 (axe deprecated its rule too); the duplicate that
 *   still harms, an id a label or ARIA attribute points to, is axe's duplicate-id-aria.
 * - Contrast is kept because axe cannot judge it on jsdom (it needs the painted background: see
 *   `NOT_RUN`), while colours set on the element's own inline style, with an opaque background and text
 *   directly inside, are known from the markup alone. It runs as an axe rule of its own
 *   (`color-contrast-inline`, `color-contrast-enhanced-inline`), so its findings have axe's shape.
 */
import { composite, contrastRatio, parseColor, type Rgba } from "../data/contrast-engine.ts";
import type { DomElement } from "./dom.ts";

export type Level = "A" | "AA" | "AAA";
export type Impact = "minor" | "moderate" | "serious" | "critical";

export const LEVELS: readonly Level[] = ["A", "AA", "AAA"];

/** axe's tags of each level's success criteria (WCAG 2.0, 2.1 and 2.2). */
const LEVEL_TAGS: Record<Level, readonly string[]> = {
  A: ["wcag2a", "wcag21a", "wcag22a"],
  AA: ["wcag2aa", "wcag21aa", "wcag22aa"],
  AAA: ["wcag2aaa", "wcag21aaa", "wcag22aaa"],
};

/**
 * The tags axe runs for `level`: its criteria and those below, and axe's best practices, as a default axe
 * run includes them.
 */
export function tagsUpTo(level: Level): string[] {
  return [...LEVELS.slice(0, LEVELS.indexOf(level) + 1).flatMap((l) => LEVEL_TAGS[l]), "best-practice"];
}

/** A rule's WCAG level from its tags (`wcag21aa` is AA); null for a best practice. */
export function levelOf(tags: readonly string[]): Level | null {
  for (const level of [...LEVELS].reverse()) {
    if (LEVEL_TAGS[level].some((t) => tags.includes(t))) return level;
  }
  return null;
}

/** Success criteria from axe's tags: `wcag143` is 1.4.3, `wcag1412` is 1.4.12. */
export function criteriaOf(tags: readonly string[]): string[] {
  return tags.flatMap((t) => {
    const m = /^wcag(\d)(\d)(\d+)$/.exec(t);
    return m ? [`${m[1]}.${m[2]}.${m[3]}`] : [];
  });
}

/**
 * axe rules that need a rendering engine or resources jsdom lacks. jsdom gives every element a 0x0 box at
 * the origin, nothing scrolls and no media plays, so on jsdom these rules would pass or find nothing where a
 * browser finds problems (measured: bench/a11y.ts), or fail with an error. They are not run, and are listed
 * under `not_checked` with this reason.
 */
export const NOT_RUN: Readonly<Record<string, string>> = {
  "color-contrast":
    "needs the painted background behind the text (layout and painting, which jsdom lacks); only colours set in the element's own inline style are checked (color-contrast-inline)",
  "color-contrast-enhanced":
    "needs the painted background behind the text (layout and painting, which jsdom lacks); only colours set in the element's own inline style are checked (color-contrast-enhanced-inline)",
  "link-in-text-block": "telling a link from the text around it needs computed colours and painting",
  "target-size": "target sizes and spacing need layout",
  "scrollable-region-focusable": "which regions scroll needs layout",
  "avoid-inline-spacing": "which text is visible and wraps needs layout",
  "label-content-name-mismatch":
    "the visible label needs layout, and telling icon fonts from text needs painting them",
  "skip-link": "the rule checks skip links placed off screen, which needs layout",
  blink: "whether the element is on screen needs layout",
  marquee: "whether the element is on screen needs layout",
  "no-autoplay-audio": "needs the media's duration: media are not loaded",
  "frame-tested": "the frames' documents are not loaded",
  "frame-focusable-content": "the frames' documents are not loaded",
};

/** What no rule here judges, so that an empty findings list is not read as "accessible". */
export const NOT_CHECKED: readonly { criteria: string[]; reason: string }[] = [
  {
    criteria: ["1.2.1", "1.2.2", "1.2.3", "1.2.4", "1.2.5"],
    reason: "captions, transcripts and audio description need the media and a person",
  },
  {
    criteria: ["1.1.1", "2.4.4", "2.4.6"],
    reason: "whether text alternatives, link texts and headings are meaningful needs a person",
  },
  {
    criteria: ["1.3.4", "1.4.10", "1.4.12"],
    reason: "orientation, reflow and text spacing need rendering",
  },
  { criteria: ["1.4.11"], reason: "non-text contrast needs rendering" },
  { criteria: ["2.1.1", "2.1.2"], reason: "keyboard operability and keyboard traps need interaction" },
  {
    criteria: ["2.4.3", "2.4.7", "2.4.11"],
    reason: "focus order, visible focus and focus not obscured need rendering and interaction",
  },
  { criteria: [], reason: "content that scripts add or change after load: no page script is run" },
  {
    criteria: [],
    reason:
      "external stylesheets are not loaded: an element they hide is audited as visible, and colours they set are unknown",
  },
];

/** One hand-written check and its rule, in the shapes `axe.configure` takes. */
export interface CustomRule {
  check: {
    id: string;
    evaluate: (this: { data(d: unknown): void }, node: DomElement) => boolean | undefined;
    metadata: { impact: Impact; messages: { pass: string; fail: string; incomplete?: string } };
  };
  rule: {
    id: string;
    selector: string;
    matches: (node: DomElement) => boolean;
    tags: string[];
    impact: Impact;
    metadata: { description: string; help: string; helpUrl: string };
    any: string[];
  };
}

/** Minimum and enhanced contrast (1.4.3 and 1.4.6) where the element's own inline style sets both colours. */
export const CUSTOM_RULES: readonly CustomRule[] = [
  contrastRule({
    id: "color-contrast-inline",
    tags: ["cat.color", "wcag2aa", "wcag143"],
    impact: "serious",
    normal: 4.5,
    large: 3,
    help: "Text with inline colours must have a contrast of at least 4.5:1 (3:1 for large text)",
    helpUrl: "https://www.w3.org/WAI/WCAG22/Understanding/contrast-minimum.html",
  }),
  contrastRule({
    id: "color-contrast-enhanced-inline",
    tags: ["cat.color", "wcag2aaa", "wcag146"],
    impact: "moderate",
    normal: 7,
    large: 4.5,
    help: "Text with inline colours must have a contrast of at least 7:1 (4.5:1 for large text)",
    helpUrl: "https://www.w3.org/WAI/WCAG22/Understanding/contrast-enhanced.html",
  }),
];

function contrastRule(spec: {
  id: string;
  tags: string[];
  impact: Impact;
  normal: number;
  large: number;
  help: string;
  helpUrl: string;
}): CustomRule {
  const checkId = `${spec.id}-ratio`;
  return {
    check: {
      id: checkId,
      evaluate(node) {
        const c = inlineContrast(node);
        if (!c) return undefined;
        const needed = c.large ? spec.large : spec.normal;
        this.data({ ratio: Math.round(c.ratio * 100) / 100, needed });
        return c.ratio >= needed;
      },
      metadata: {
        impact: spec.impact,
        messages: {
          pass: "Inline colours have sufficient contrast",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: axe-core fills `${data.x}` in from `this.data`.
          fail: "Contrast ${data.ratio}:1, below ${data.needed}:1",
        },
      },
    },
    rule: {
      id: spec.id,
      selector: "[style]",
      // Only what the markup decides: elsewhere the rule is inapplicable, not passed.
      matches: (node) => inlineContrast(node) !== null,
      tags: spec.tags,
      impact: spec.impact,
      metadata: {
        description:
          "Text whose colour and opaque background are both set in its own inline style; colours from stylesheets need rendering",
        help: spec.help,
        helpUrl: spec.helpUrl,
      },
      any: [checkId],
    },
  };
}

/** Both colours on the same element's inline style and text directly inside; null when not judgeable. */
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
