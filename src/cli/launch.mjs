// How `bin/x402-merchants` loads the command line: from one bundle of its TypeScript sources, built by
// esbuild on first use and kept until any source changes, else from the sources through tsx. A job process's
// worker (src/merchants/utility/job-process.ts) is loaded the same way, from a bundle of its own
// (`sourceBundle`).
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

/**
 * The job processes' workers (src/merchants/utility/job-process.ts), bundled with the command line's: the
 * services run where the tree is read-only to them, so what `bin/x402-merchants --help` builds at install
 * time (docs/operations.md) is all they get. A worker missing here is bundled on its first start instead.
 */
const JOB_WORKERS = [
  "src/merchants/utility/pages/page-worker.ts",
  "src/merchants/utility/pages/a11y-worker.ts",
  "src/merchants/utility/data/convert-worker.ts",
];

/** The command line's `main`. */
export async function loadMain() {
  const bundle =
    process.env.X402M_CLI_FROM_SOURCES === "1"
      ? undefined
      : await cliBundle({ root: ROOT }).catch(() => undefined);
  if (bundle) {
    // The same sources' worker bundles, about 0.1 CPU-s each, built once per change of the sources; three
    // looks at the disk otherwise. Whichever process built the command line's, the first command makes them.
    const key = path.basename(path.dirname(bundle.file)).slice("cli-".length);
    const missing = JOB_WORKERS.map((entry) => path.join(ROOT, entry)).filter(
      (entry) =>
        !fs.existsSync(
          bundleFile(
            path.join(ROOT, "node_modules", ".cache", "x402-merchants"),
            entryName(ROOT, entry),
            key,
            entry,
          ),
        ),
    );
    await Promise.all(missing.map((entry) => sourceBundle({ root: ROOT, entry }).catch(() => undefined)));
  }
  if (bundle) return (await import(pathToFileURL(bundle.file).href)).main;
  const { register } = await import("tsx/esm/api");
  register();
  return (await import("./main.ts")).main;
}

/**
 * The bundle of `root`'s src/cli/main.ts for its sources as they are now: the path of its entry, and
 * whether this call built it. Rejects when the sources do not build, leaving nothing behind.
 */
export function cliBundle({ root }) {
  return sourceBundle({ root, entry: path.join(root, "src", "cli", "main.ts"), name: "cli" });
}

/**
 * The bundle of `entry` (a module under `root`'s src/) for the sources as they are now, as `cliBundle`'s:
 * a job process's worker (src/merchants/utility/job-process.ts) loads one so. `name`, the cache directory's
 * prefix, is by default the entry's path under src/ ("merchants-utility-data-convert-worker"); each keeps its
 * own bundles and prunes only its own.
 */
export async function sourceBundle({ root, entry: given, name = entryName(root, path.resolve(given)) }) {
  const entry = path.resolve(given);
  const src = path.join(root, "src");
  if (!entry.startsWith(src + path.sep)) throw new Error(`${entry} is not under ${src}`);
  const cache = path.join(root, "node_modules", ".cache", "x402-merchants");
  const file = bundleFile(cache, name, fingerprint(root), entry);
  const dir = path.dirname(file);
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
      entryPoints: [entry],
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
  prune(cache, name, dir);
  return { file, built: true };
}

/** Where `entry`'s bundle for the sources of fingerprint `key` lies. */
function bundleFile(cache, name, key, entry) {
  return path.join(cache, `${name}-${key}`, `${path.basename(entry).replace(/\.[cm]?[jt]s$/, "")}.mjs`);
}

/** src/merchants/utility/data/convert-worker.ts: "merchants-utility-data-convert-worker". */
function entryName(root, entry) {
  return path
    .relative(path.join(root, "src"), entry)
    .replace(/\.[cm]?[jt]s$/, "")
    .split(path.sep)
    .join("-");
}

/** What the bundle is built from, as one short hash. */
function fingerprint(root) {
  // The root too: the bundle holds its sources' absolute paths (`ownUrls`), and two checkouts may share one
  // node_modules (a git worktree's, linked to another's).
  const hash = crypto.createHash("sha256").update(`${FORMAT}\0${process.version}\0${path.resolve(root)}\0`);
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

/**
 * Written so, not whole, since this file is bundled too (job-process.ts imports it): its own strings would
 * otherwise be taken for what they name.
 */
const META = ["import", "meta"].join(".");

/** Each source module's `import.meta` paths written in as its own, wherever the bundle lies. */
function ownUrls(src) {
  return {
    name: "own-urls",
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (!args.path.startsWith(src + path.sep)) return undefined;
        const text = await fs.promises.readFile(args.path, "utf8");
        if (!text.includes(META)) return undefined;
        const contents = text
          .replaceAll(`${META}.url`, JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll(`${META}.dirname`, JSON.stringify(path.dirname(args.path)))
          .replaceAll(`${META}.filename`, JSON.stringify(args.path));
        return { contents, loader: args.path.endsWith("ts") ? "ts" : "js" };
      });
    },
  };
}

/** Deletes the bundles of `name`'s older sources that nothing has used for a week. */
function prune(cache, name, current) {
  // Its own only ("cli-" must not take another entry's whose name starts so), and scratch left by a killed build.
  const own = new RegExp(`^${name.replace(/[^\w]/g, "\\$&")}-[0-9a-f]{16}(\\.\\d+\\.tmp)?$`);
  try {
    for (const entry of fs.readdirSync(cache)) {
      const dir = path.join(cache, entry);
      if (dir === current || !own.test(entry)) continue;
      if (Date.now() - fs.statSync(dir).mtimeMs > KEEP_UNUSED_MS)
        fs.rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // Another process pruned at the same time: nothing to do.
  }
}
