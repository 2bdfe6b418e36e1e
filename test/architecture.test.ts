/**
 * The house rules a reader relies on, checked on the sources themselves (issue 43): no import loop between
 * the top-level folders of src/ (type-only imports count: a loop in types is still two folders that cannot
 * be read apart), no import cycle between any two files of src/ (issue 56), no function over 150 lines nor
 * class over 250,
 * a folder that has a face (`index.ts`) is entered only through it from outside, and no import runs back up
 * between the subfolders of reports/ (issue 64; the order is docs/architecture.md's, "The rooms of reports/"),
 * no merchant's folder imports another's, and the kit's channels/ import nothing of the kit around them.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(import.meta.dirname, "../src");
const MAX_FUNCTION_LINES = 150;
/**
 * A class is read as one thing: past this it is several (the report service was 537 lines of building,
 * answering and sealing before issue 64 parted them), however short each of its methods.
 */
const MAX_CLASS_LINES = 250;
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
  "chain/solana/devnet": ["index.ts"],
  // The kit's light doors: the configuration's section (every command reads it), and the buyer's receipt
  // check (`verify-receipt`), which needs none of the kit's server side.
  "merchant-kit": ["index.ts", "settings.ts", "payments/receipts-verify.ts"],
  // Within the kit, the payments and the host enter the channels through their face; the kit's configuration
  // reads the channels' section through its own light door (through the face, the scheme's and the SDK's
  // modules would load with every command's configuration: 0.6 CPU-s more).
  "merchant-kit/channels": ["index.ts", "settings.ts"],
  // x402 v1 beside v2: the host wires one front per route, the rest of the kit reads nothing of it.
  "merchant-kit/payments/v1": ["index.ts"],
  // The payments' gas sponsoring (the extensions a 402 declares, the 412's answer): entered through its face.
  "merchant-kit/payments/sponsoring": ["index.ts"],
  // The facilitator's gas sponsoring, likewise within the facilitator.
  "facilitator/sponsoring": ["index.ts"],
};

/**
 * Subfolders that import nothing of their folder outside themselves (the libraries under it, common/, chain/
 * and config/, they still import): what they need of the rest of it, its callers give them. A payment
 * channel's code is then read, tested and changed without the merchant around it (issue 64): the schedule is
 * given the wallets and the price conversion, the refund route what it needs of the payments.
 */
const SELF_CONTAINED: readonly string[] = ["merchant-kit/channels"];

/**
 * The subfolders of a folder from the bottom up: a file imports only from its own subfolder, one below it,
 * or the folder's own files (reports/model.ts and schema.ts, the shapes every room shares). Where two rooms
 * need each other, the lower one owns the interface (attest/attester.ts's `WeekSealer`, which the report
 * service in serve/ fills; week/anchors.ts, which the feed's links and the pages share).
 */
const LAYERS: Record<string, readonly string[]> = {
  reports: ["screens", "provenance", "week", "render", "attest", "serve", "publish"],
  // The kit's payments call its channels (their scheme, store and schedule) and never the reverse, so a
  // voucher's path reads top down from payments/ (paid-handler.ts, fronts.ts) into channels/.
  "merchant-kit": ["language", "fetch", "channels", "payments", "mcp"],
};

interface SourceFile {
  file: string;
  tree: ts.SourceFile;
  /** Resolved targets of its relative imports and re-exports, type-only ones included. */
  imports: string[];
  /**
   * Resolved targets of its relative dynamic `import("./x.ts")`s (a literal path): modules it loads only
   * when they are needed (the CLI's commands, the services a process starts). Edges of the file graph
   * (`fileCycles`), not of the folder rules: a face may be passed by a lazy load on purpose (cli/serve.ts
   * loads services/start.ts alone, not every service).
   */
  loads: string[];
}

/** The relative dynamic imports of `tree`, resolved from `file`. */
function loadsOf(file: string, tree: ts.SourceFile): string[] {
  const loads: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteralLike(specifier) && specifier.text.startsWith("."))
        loads.push(path.resolve(path.dirname(file), specifier.text));
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return loads;
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
    files.push({ file, tree, imports, loads: loadsOf(file, tree) });
  }
  return files;
}

/**
 * Each merchant is one room (docs/architecture.md): what two share lives in the kit (the language upstreams
 * both sell, merchant-kit/language/), so that one merchant can be read, changed or left out of a process alone.
 */
function crossMerchantImports(files: SourceFile[]): string[] {
  const merchantOf = (file: string) => {
    const [top, name, ...rest] = relative(file).split(path.sep);
    return top === "merchants" && rest.length > 0 ? name : undefined;
  };
  return files.flatMap(({ file, imports }) => {
    const from = merchantOf(file);
    if (!from) return [];
    return imports
      .filter((target) => {
        const to = merchantOf(target);
        return to !== undefined && to !== from;
      })
      .map((target) => `${relative(file)} -> ${relative(target)}`);
  });
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

/**
 * Every import cycle between files, as "a.ts -> b.ts -> a.ts" lines. An edge is any import or re-export
 * (`import type` and `export type ... from` too: a cycle in types is still two files that cannot be read,
 * tested or moved apart) and any dynamic `import()` of a literal path (a module loaded lazily is still
 * one its loader cannot be read without: the CLI's command table and the commands that imported it back).
 * No edge is exempt. The cycles are the strongly connected components of that graph (Tarjan's algorithm);
 * each component is named by shortest cycles through it until every edge inside it is on one, so every
 * import that holds a cycle together is shown, and each line is a path that exists.
 */
function fileCycles(files: SourceFile[]): string[] {
  const known = new Set(files.map(({ file }) => file));
  const graph = new Map<string, string[]>();
  for (const { file, imports, loads } of files) {
    graph.set(file, [...new Set([...imports, ...loads])].filter((target) => known.has(target)).sort());
  }
  const cycles: string[] = [];
  for (const component of components(graph)) {
    const inside = new Set(component);
    const covered = new Set<string>();
    for (const from of component) {
      for (const to of graph.get(from) ?? []) {
        if (!inside.has(to) || covered.has(`${from}>${to}`)) continue;
        const cycle = [from, ...shortestPath(graph, to, from, inside)];
        for (let i = 1; i < cycle.length; i++) covered.add(`${cycle[i - 1]}>${cycle[i]}`);
        cycles.push(cycle.map(relative).join(" -> "));
      }
    }
  }
  return cycles.sort();
}

/** The strongly connected components of `graph` (Tarjan), each sorted by name. */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) visit(next);
      if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** The files from `from` to `to` (both included) by the fewest imports, staying `inside` a component. */
function shortestPath(
  graph: ReadonlyMap<string, readonly string[]>,
  from: string,
  to: string,
  inside: ReadonlySet<string>,
): string[] {
  const previous = new Map<string, string | undefined>([[from, undefined]]);
  for (const queue = [from]; queue.length > 0 && !previous.has(to); ) {
    const node = queue.shift() as string;
    for (const next of graph.get(node) ?? []) {
      if (!inside.has(next) || previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  const route: string[] = [];
  for (let node: string | undefined = to; node !== undefined; node = previous.get(node)) route.unshift(node);
  return route;
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

function longClasses(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const { file, tree } of files) {
    const visit = (node: ts.Node) => {
      if (ts.isClassLike(node)) {
        const first = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line;
        const last = tree.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > MAX_CLASS_LINES)
          found.push(`${relative(file)}:${first + 1} (${last - first + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(tree);
  }
  return found;
}

/**
 * Files that pass on another file's names (`export ... from`) without being a face (an `index.ts`): a shim left
 * where a name moved out, which lets callers keep the old door (issue 64, item 2).
 */
function reExports(files: SourceFile[]): string[] {
  const found: string[] = [];
  for (const { file, tree } of files) {
    if (path.basename(file) === "index.ts") continue;
    for (const s of tree.statements) {
      if (ts.isExportDeclaration(s) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier))
        found.push(`${relative(file)} passes on ${s.moduleSpecifier.text}`);
    }
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

/** Imports from a `SELF_CONTAINED` subfolder into the rest of its folder, as "file -> file" lines. */
function importsOutOfSelf(files: SourceFile[], rooms: readonly string[] = SELF_CONTAINED): string[] {
  const found: string[] = [];
  for (const room of rooms) {
    const inside = path.join(SRC, room) + path.sep;
    const around = path.join(SRC, path.dirname(room)) + path.sep;
    for (const { file, imports } of files) {
      if (!file.startsWith(inside)) continue;
      for (const target of imports) {
        if (target.startsWith(around) && !target.startsWith(inside))
          found.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
  }
  return found.sort();
}

/**
 * Imports that run back up `LAYERS`, as "file -> file" lines, and subfolders the order does not place (a new
 * room is placed before the rule can see its imports).
 */
function upwardImports(files: SourceFile[], layers: Record<string, readonly string[]> = LAYERS): string[] {
  const found: string[] = [];
  for (const [folder, order] of Object.entries(layers)) {
    const root = path.join(SRC, folder);
    const roomOf = (file: string) => {
      const parts = path.relative(root, file).split(path.sep);
      return parts.length > 1 && !parts[0]?.startsWith("..") ? parts[0] : undefined;
    };
    const rooms = new Set<string>();
    for (const { file, imports } of files) {
      const from = roomOf(file);
      if (from === undefined) continue;
      rooms.add(from);
      for (const target of imports) {
        const to = roomOf(target);
        if (to === undefined || to === from) continue;
        if (order.indexOf(to) > order.indexOf(from)) found.push(`${relative(file)} -> ${relative(target)}`);
      }
    }
    for (const room of rooms) if (!order.includes(room)) found.push(`${folder}/${room}/ is in no layer`);
  }
  return found.sort();
}

describe("the sources' shape", () => {
  const files = sources();

  it("has no import loop between the top-level folders of src/", () => {
    expect(folderLoops(files)).toEqual([]);
  });

  it("has no import cycle between files of src/", () => {
    expect(fileCycles(files)).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(longFunctions(files)).toEqual([]);
  });

  it(`has no class over ${MAX_CLASS_LINES} lines`, () => {
    expect(longClasses(files)).toEqual([]);
  });

  it("enters a folder that has a face only through it", () => {
    expect(faceBypasses(files)).toEqual([]);
  });

  it("has no import back up between the subfolders of reports/", () => {
    expect(upwardImports(files)).toEqual([]);
  });

  it("has no import from a self-contained subfolder into the rest of its folder", () => {
    expect(importsOutOfSelf(files)).toEqual([]);
  });

  it("has no import from one merchant's folder into another's", () => {
    expect(crossMerchantImports(files)).toEqual([]);
  });

  it("passes names on only from a face: a name is imported from the file that owns it", () => {
    expect(reExports(files)).toEqual([]);
  });

  it("finds what it checks (a folder loop, a file cycle, a long function or class, a bypass, an import up and one out of a self-contained subfolder are seen when present)", () => {
    const made = (file: string, text: string): SourceFile => {
      const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const imports = tree.statements.flatMap((s) =>
        (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
        s.moduleSpecifier &&
        ts.isStringLiteral(s.moduleSpecifier)
          ? [path.resolve(path.dirname(file), s.moduleSpecifier.text)]
          : [],
      );
      return { file, tree, imports, loads: loadsOf(file, tree) };
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
    // The kit's channels: entered past their face from payments/, and importing the merchant from inside.
    const past = made(
      path.join(SRC, "merchant-kit/payments/p.ts"),
      'import { ChannelStore } from "../channels/storage.ts";\nimport { openChannels } from "../channels/index.ts";',
    );
    expect(faceBypasses([past])).toEqual(["merchant-kit/payments/p.ts -> merchant-kit/channels/storage.ts"]);
    const out = made(
      path.join(SRC, "merchant-kit/channels/o.ts"),
      'import type { Merchant } from "../endpoint.ts";\nimport { x } from "../payments/x.ts";\nimport { s } from "./storage.ts";\nimport { log } from "../../common/log.ts";',
    );
    expect(importsOutOfSelf([out])).toEqual([
      "merchant-kit/channels/o.ts -> merchant-kit/endpoint.ts",
      "merchant-kit/channels/o.ts -> merchant-kit/payments/x.ts",
    ]);
    const big = made(
      path.join(SRC, "common/k.ts"),
      `export class K {\n${"  a = 1;\n".repeat(MAX_CLASS_LINES)}}\n`,
    );
    expect(longClasses([big])).toEqual([`common/k.ts:1 (${MAX_CLASS_LINES + 2} lines)`]);
    const shim = made(path.join(SRC, "common/s.ts"), 'export { t } from "./t.ts";\nexport const u = 1;');
    const face = made(path.join(SRC, "common/index.ts"), 'export { t } from "./t.ts";');
    expect(reExports([shim, face])).toEqual(["common/s.ts passes on ./t.ts"]);
    const across = made(path.join(SRC, "merchants/inference/m.ts"), 'import { n } from "../utility/n.ts";');
    expect(crossMerchantImports([across])).toEqual(["merchants/inference/m.ts -> merchants/utility/n.ts"]);
    const up = made(path.join(SRC, "reports/week/u.ts"), 'import { page } from "../render/v.ts";');
    const down = made(path.join(SRC, "reports/render/v.ts"), 'import { u } from "../week/u.ts";');
    const stray = made(path.join(SRC, "reports/elsewhere/w.ts"), 'import type { R } from "../model.ts";');
    expect(upwardImports([up, down, stray])).toEqual([
      "reports/elsewhere/ is in no layer",
      "reports/week/u.ts -> reports/render/v.ts",
    ]);
    // Files: a cycle in types, a re-export closing a longer one, a lazy load closing a third; a file that
    // only imports from a cycle is not in it, nor is a dynamic import of a computed path.
    const types = [
      made(
        path.join(SRC, "demo/a.ts"),
        'import type { B } from "./b.ts";\nconst c = await import(["./c", "ts"].join("."));',
      ),
      made(path.join(SRC, "demo/b.ts"), 'import { A } from "./a.ts";'),
      made(path.join(SRC, "demo/c.ts"), 'import { A } from "./a.ts";'),
    ];
    expect(fileCycles(types)).toEqual(["demo/a.ts -> demo/b.ts -> demo/a.ts"]);
    const longer = [
      made(path.join(SRC, "cli/p.ts"), 'import { q } from "./q.ts";'),
      made(path.join(SRC, "cli/q.ts"), 'import { r } from "./r.ts";'),
      made(path.join(SRC, "cli/r.ts"), 'export type { P } from "./p.ts";'),
      made(path.join(SRC, "cli/s.ts"), 'import { p } from "./p.ts";'),
      made(path.join(SRC, "cli/t.ts"), 'const { s } = await import("./s.ts");'),
    ];
    expect(fileCycles(longer)).toEqual(["cli/p.ts -> cli/q.ts -> cli/r.ts -> cli/p.ts"]);
    const lazy = [
      made(path.join(SRC, "cli/table.ts"), 'const run = async () => (await import("./command.ts")).run();'),
      made(path.join(SRC, "cli/command.ts"), 'import type { Flags } from "./table.ts";'),
    ];
    expect(fileCycles(lazy)).toEqual(["cli/command.ts -> cli/table.ts -> cli/command.ts"]);
  });
});
