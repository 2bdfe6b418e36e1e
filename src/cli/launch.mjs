// How `bin/x402-merchants` loads the command line: from one bundle of its TypeScript sources, built by
// esbuild on first use and kept until any source changes, else from the sources through tsx.
//
// Why: tsx's loader hooks run on a thread of their own in Node 20 and see every module a command imports;
// a command then spends 1-2.5 s of CPU before it starts (`listings`: 2.6-3.0 CPU-s through tsx, 1.1 from the
// bundle; docs/benchmarks-log.md, "CI time"). Plain JavaScript, so that nothing needs tsx to load it.
//
// The sources stay what runs: the bundle is keyed by every file under src/ (path, size, modification time),
// tsconfig.json and package.json, Node's version and this file's format, and rebuilt when any of them
// moves. Packages stay outside the bundle, loaded from node_modules as always. Each module's own
// `import.meta.url` (and `dirname`, `filename`) is written into the bundle as its source's, so what a
// module finds next to itself (a worker script, docs/screens.md) is where it was. No esbuild, a tree that
// cannot be written, or X402M_CLI_FROM_SOURCES=1: the sources through tsx, as before.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Bump when the build's options change: older bundles are then never used. */
const FORMAT = 1;
/** Bundles not used for this long are deleted when a new one is built. */
const KEEP_UNUSED_MS = 7 * 24 * 3_600_000;

/** The command line's `main`. */
export async function loadMain() {
  const bundle =
    process.env.X402M_CLI_FROM_SOURCES === "1"
      ? undefined
      : await cliBundle({ root: ROOT }).catch(() => undefined);
  if (bundle) return (await import(pathToFileURL(bundle.file).href)).main;
  const { register } = await import("tsx/esm/api");
  register();
  return (await import("./main.ts")).main;
}

/**
 * The bundle of `root`'s src/cli/main.ts for its sources as they are now: the path of its entry, and
 * whether this call built it. Rejects when the sources do not build, leaving nothing behind.
 */
export async function cliBundle({ root }) {
  const src = path.join(root, "src");
  const cache = path.join(root, "node_modules", ".cache", "x402-merchants");
  const dir = path.join(cache, `cli-${fingerprint(root)}`);
  const file = path.join(dir, "main.mjs");
  if (fs.existsSync(file)) {
    // Marks it used, for the pruning below; a tree that cannot be written keeps the bundle it has.
    const now = new Date();
    try {
      fs.utimesSync(dir, now, now);
    } catch {}
    return { file, built: false };
  }
  const { build } = await import("esbuild");
  // Built aside and renamed into place: a process never sees half a bundle, and of two building at once
  // the second keeps the first one's.
  const scratch = `${dir}.${process.pid}.tmp`;
  try {
    await build({
      entryPoints: [path.join(src, "cli", "main.ts")],
      outdir: scratch,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      // Each command's modules in chunks of their own, loaded when it runs (src/cli/main.ts imports them on
      // demand), with the packages they import: one file would import every package at start.
      splitting: true,
      chunkNames: "chunks/[name]-[hash]",
      format: "esm",
      platform: "node",
      target: `node${process.versions.node.split(".")[0]}`,
      packages: "external",
      // Class and function names as written: errors and logs show them.
      keepNames: true,
      logLevel: "silent",
      plugins: [ownUrls(src)],
    });
    fs.renameSync(scratch, dir);
  } catch (error) {
    fs.rmSync(scratch, { recursive: true, force: true });
    if (!fs.existsSync(file)) throw error;
  }
  prune(cache, dir);
  return { file, built: true };
}

/** What the bundle is built from, as one short hash. */
function fingerprint(root) {
  const hash = crypto.createHash("sha256").update(`${FORMAT}\0${process.version}\0`);
  const add = (file) => {
    const stat = fs.statSync(file);
    hash.update(`${path.relative(root, file)}\0${stat.size}\0${stat.mtimeMs}\0`);
  };
  const walk = (dir) => {
    const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else add(file);
    }
  };
  walk(path.join(root, "src"));
  add(path.join(root, "tsconfig.json"));
  add(path.join(root, "package.json"));
  return hash.digest("hex").slice(0, 16);
}

/** Each source module's `import.meta` paths written in as its own, wherever the bundle lies. */
function ownUrls(src) {
  return {
    name: "own-urls",
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (!args.path.startsWith(src + path.sep)) return undefined;
        const text = await fs.promises.readFile(args.path, "utf8");
        if (!text.includes("import.meta")) return undefined;
        const contents = text
          .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)))
          .replaceAll("import.meta.filename", JSON.stringify(args.path));
        return { contents, loader: args.path.endsWith("ts") ? "ts" : "js" };
      });
    },
  };
}

/** Deletes the bundles of older sources that nothing has used for a week. */
function prune(cache, current) {
  try {
    for (const name of fs.readdirSync(cache)) {
      const dir = path.join(cache, name);
      if (dir === current || !name.startsWith("cli-")) continue;
      if (Date.now() - fs.statSync(dir).mtimeMs > KEEP_UNUSED_MS)
        fs.rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // Another process pruned at the same time: nothing to do.
  }
}
