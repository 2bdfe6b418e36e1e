/** Draft.js to Markdown, block type by block type, as X stores an article's body. */
import { describe, expect, it } from "vitest";
import { articleMarkdown } from "../../../src/merchants/social/article-markdown.ts";
import type { DraftBlock, DraftContentState } from "../../../src/merchants/social/model.ts";

let n = 0;
const block = (type: string, text: string, extra: Partial<DraftBlock> = {}): DraftBlock => ({
  key: `k${n++}`,
  type,
  text,
  inlineStyleRanges: [],
  entityRanges: [],
  ...extra,
});
const md = (blocks: DraftBlock[], entityMap: DraftContentState["entityMap"] = {}) =>
  articleMarkdown({ blocks, entityMap });

describe("an article's Draft.js body as Markdown", () => {
  it("writes headings, paragraphs and quotes, a blank line between blocks", () => {
    expect(
      md([
        block("header-one", "Title"),
        block("header-two", "Part"),
        block("unstyled", "Text."),
        block("blockquote", "Said."),
      ]),
    ).toBe("# Title\n\n## Part\n\nText.\n\n> Said.\n");
  });

  it("writes bold, italic, both, code and struck text, whitespace outside the markers", () => {
    const styles = [
      { offset: 0, length: 5, style: "BOLD" },
      { offset: 5, length: 7, style: "ITALIC" },
      { offset: 13, length: 4, style: "BOLD" },
      { offset: 13, length: 4, style: "ITALIC" },
      { offset: 18, length: 4, style: "CODE" },
      { offset: 23, length: 4, style: "STRIKETHROUGH" },
    ];
    expect(md([block("unstyled", "bold italic! both code gone", { inlineStyleRanges: styles })])).toBe(
      "**bold** _italic!_ **_both_** `code` ~~gone~~\n",
    );
    expect(
      md([block("unstyled", "a bold b", { inlineStyleRanges: [{ offset: 1, length: 6, style: "BOLD" }] })]),
    ).toBe("a **bold** b\n");
  });

  it("writes links over styled text, and images, dividers and tweets from atomic blocks", () => {
    const entityMap = {
      "0": { type: "LINK", data: { url: "https://example.com/a b" } },
      "1": { type: "MEDIA", data: { url: "https://pbs.twimg.com/media/x.jpg", caption: "A [chart]" } },
      "2": { type: "DIVIDER", data: {} },
      "3": { type: "TWEET", data: { tweetId: "1790000000000001001" } },
    };
    expect(
      md(
        [
          block("unstyled", "See the docs now", {
            entityRanges: [{ offset: 4, length: 8, key: 0 }],
            inlineStyleRanges: [{ offset: 8, length: 4, style: "BOLD" }],
          }),
          block("atomic", " ", { entityRanges: [{ offset: 0, length: 1, key: 1 }] }),
          block("atomic", " ", { entityRanges: [{ offset: 0, length: 1, key: "2" }] }),
          block("atomic", " ", { entityRanges: [{ offset: 0, length: 1, key: 3 }] }),
        ],
        entityMap,
      ),
    ).toBe(
      "See [the **docs**](https://example.com/a%20b) now\n\n![A \\[chart\\]](https://pbs.twimg.com/media/x.jpg)\n\n---\n\nhttps://x.com/i/status/1790000000000001001\n",
    );
  });

  it("keeps list items together, nests by depth and numbers ordered ones per depth", () => {
    expect(
      md([
        block("unstyled", "Steps:"),
        block("ordered-list-item", "one"),
        block("ordered-list-item", "two"),
        block("ordered-list-item", "two a", { depth: 1 }),
        block("ordered-list-item", "two b", { depth: 1 }),
        block("ordered-list-item", "three"),
        block("unordered-list-item", "dot"),
        block("unordered-list-item", "inner", { depth: 1 }),
        block("unstyled", "After."),
        block("ordered-list-item", "again"),
      ]),
    ).toBe(
      "Steps:\n\n1. one\n2. two\n   1. two a\n   2. two b\n3. three\n- dot\n  - inner\n\nAfter.\n\n1. again\n",
    );
  });

  it("fences code blocks, one fence for consecutive lines, its text not escaped", () => {
    expect(
      md([block("code-block", "const a = 1 * 2;"), block("code-block", "a_b"), block("unstyled", "Done.")]),
    ).toBe("```\nconst a = 1 * 2;\na_b\n```\n\nDone.\n");
  });

  it("escapes what Markdown would read as syntax", () => {
    expect(md([block("unstyled", "# not a heading, *not bold* and [not a link]")])).toBe(
      "\\# not a heading, \\*not bold\\* and \\[not a link\\]\n",
    );
    expect(md([block("unstyled", "1. not a list")])).toBe("1\\. not a list\n");
  });
});
