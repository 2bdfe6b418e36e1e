/**
 * docs/architecture.md is where the README sends a newcomer: its table of rooms names every top-level folder of
 * src/ and no other, and its table of the rooms of reports/ names each subfolder there and places it in the order
 * the architecture test holds the imports to (`LAYERS` in test/architecture.test.ts), so that a room added or
 * renamed without the document fails here rather than leaving the map stale.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DOCUMENT = fs.readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");

/** The folders directly under `dir`, by name, sorted. */
const foldersOf = (dir: string) =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

/** The text under the `## heading` of the document, up to the next. */
function section(heading: string): string {
  const start = DOCUMENT.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no section "${heading}"`);
  const end = DOCUMENT.indexOf("\n## ", start + 1);
  return DOCUMENT.slice(start, end < 0 ? undefined : end);
}

describe("docs/architecture.md", () => {
  it("names every top-level room of src/ in its table of rooms, and none that is gone", () => {
    const named = [...section("The rooms").matchAll(/^\| `src\/([a-z-]+)\/` \|/gm)].map((m) => m[1]);
    expect(named.sort()).toEqual(foldersOf("src"));
  });

  it("names every room of reports/, in the order no import runs back up", () => {
    const rows = [...section("The rooms of reports/").matchAll(/^\| (\d+) \| `([a-z-]+)\/` \|/gm)];
    expect(rows.map((m) => m[2]).sort()).toEqual(foldersOf("src/reports"));
    expect(rows.map((m) => Number(m[1]))).toEqual(rows.map((_, i) => i + 1));
    const test = fs.readFileSync(path.join(ROOT, "test/architecture.test.ts"), "utf8");
    const order = /const LAYERS[^{]*\{\s*reports: \[([^\]]*)\]/.exec(test)?.[1]?.match(/[a-z-]+/g);
    expect(rows.map((m) => m[2])).toEqual(order);
  });
});
