/**
 * The house rules a reader relies on, checked on the sources themselves (issue 43): no import loop between
 * the top-level folders of src/ (type-only imports count: a loop in types is still two folders that cannot
 * be read apart), no function over 150 lines, and a folder that has a face (`index.ts`) is entered only
 * through it from outside.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../src");
const MAX_FUNCTION_LINES = 150;
/**
 * Folders entered from elsewhere in src/ only through their face. Two have a second, light one: every
 * command reads its configuration, and going through `services/index.ts` (every service) or
 * `merchants/index.ts` (every catalogue) for it cost 2.2 CPU-s a command instead of 0.3; the `social`
 * command's archive tools likewise enter through the archive's own face.
 */
const FACES: Record<string, readonly string[]> = {
  facilitator: ["index.ts"],
  services: ["index.ts", "config.ts"],
  indexer: ["index.ts"],
  reports: ["index.ts"],
  merchants: ["index.ts", "settings.ts", "social/providers/archive/index.ts"],
  "chain/devnet": ["index.ts"],
};

interface SourceFile {
  file: string;
  tree: ts.SourceFile;
  /** Resolved targets of its relative imports and re-exports. */
  imports: string[];
}

function sources(): SourceFile[] {
  const files: SourceFile[] = [];
  for (const entry of fs.readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.m?ts$/.test(entry.name) || entry.name.endsWith(".d.mts")) continue;
    const file = path.join(entry.parentPath, entry.name);
    const tree = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const imports: string[] = [];
    for (const statement of tree.statements) {
      if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
      const specifier = statement.moduleSpecifier;
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith(".")) {
        imports.push(path.resolve(path.dirname(file), specifier.text));
      }
    }
    files.push({ file, tree, imports });
  }
  return files;
}

const topFolder = (file: string) => path.relative(SRC, file).split(path.sep)[0] as string;
const relative = (file: string) => path.relative(SRC, file);

/** Top-level folders that reach each other, as "a -> b (file -> file)" lines of the first path found. */
function folderLoops(files: SourceFile[]): string[] {
  const edges = new Map<string, Map<string, string>>();
  for (const { file, imports } of files) {
    for (const target of imports) {
      const [from, to] = [topFolder(file), topFolder(target)];
      if (from === to || !target.startsWith(SRC)) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${relative(file)} -> ${relative(target)}`);
      edges.set(from, out);
    }
  }
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
    if (from === to) return true;
    if (seen.has(from)) return false;
    seen.add(from);
    return [...(edges.get(from)?.keys() ?? [])].some((next) => reaches(next, to, seen));
  };
  const loops: string[] = [];
  for (const [from, out] of edges) {
    for (const [to, example] of out) if (reaches(to, from)) loops.push(`${from} -> ${to} (${example})`);
  }
  return loops.sort();
}

function longFunctions(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const { file, tree } of files) {
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const first = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line;
        const last = tree.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > MAX_FUNCTION_LINES)
          found.push(`${relative(file)}:${first + 1} (${last - first + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(tree);
  }
  return found;
}

function faceBypasses(files: SourceFile[]): string[] {
  const bypasses: string[] = [];
  for (const [face, entries] of Object.entries(FACES)) {
    const folder = path.join(SRC, face);
    const ways = entries.map((entry) => path.join(folder, entry));
    for (const { file, imports } of files) {
      if (file.startsWith(folder + path.sep)) continue;
      for (const target of imports) {
        if (target.startsWith(folder + path.sep) && !ways.includes(target))
          bypasses.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
  }
  return bypasses;
}

describe("the sources' shape", () => {
  const files = sources();

  it("has no import loop between the top-level folders of src/", () => {
    expect(folderLoops(files)).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(longFunctions(files)).toEqual([]);
  });

  it("enters a folder that has a face only through it", () => {
    expect(faceBypasses(files)).toEqual([]);
  });

  it("finds what it checks (a loop, a long function and a bypass are seen when present)", () => {
    const made = (file: string, text: string): SourceFile => {
      const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const imports = tree.statements.flatMap((s) =>
        ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier)
          ? [path.resolve(path.dirname(file), s.moduleSpecifier.text)]
          : [],
      );
      return { file, tree, imports };
    };
    const a = made(path.join(SRC, "facilitator/x.ts"), 'import type { B } from "../indexer/y.ts";');
    const b = made(path.join(SRC, "indexer/y.ts"), 'import { A } from "../facilitator/x.ts";');
    const long = made(
      path.join(SRC, "common/z.ts"),
      `function f() {\n${"  g();\n".repeat(MAX_FUNCTION_LINES)}}\n`,
    );
    expect(folderLoops([a, b])).toHaveLength(2);
    expect(longFunctions([long])).toEqual([`common/z.ts:1 (${MAX_FUNCTION_LINES + 2} lines)`]);
    expect(faceBypasses([b])).toEqual(["indexer/y.ts -> facilitator/x.ts"]);
  });
});
