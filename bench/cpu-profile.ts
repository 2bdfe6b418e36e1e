/**
 * Where a process's CPU went, from a V8 CPU profile (`--cpu-prof`; `BENCH_CPU_PROF=DIR npm run bench:paid`
 * writes one per stack): `npx tsx bench/cpu-profile.ts FILE.cpuprofile [--from µs --to µs] [--top N]
 * [--focus TEXT]`.
 *
 * `--from` and `--to` keep the samples of a window on the machine's monotonic clock, the one the profile's
 * timestamps use (`bench:paid`'s JSON gives each stack's paid phase as `phaseUs`), so that a stack's start
 * and its other phases are left out. Prints the busy time (every sample but `(idle)`), then:
 *
 * - **by part**: each sample's own frame put in the part of the code it belongs to (a package under
 *   node_modules, the project's own directories, Node's internals, V8's `(garbage collector)` and
 *   `(program)`), as a share of the busy time;
 * - **self**: the functions with the most samples of their own;
 * - **total**: the functions with the most samples on their stack (themselves and what they call), each
 *   counted once per sample however often it recurses;
 * - with `--focus TEXT`: the same, within the samples whose stack holds a frame whose function or file
 *   contains TEXT, and the parts of those samples.
 */
import fs from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function parseArgs(argv: string[]) {
  const file = argv[0];
  if (!file)
    throw new Error(
      "usage: bench/cpu-profile.ts FILE.cpuprofile [--from µs --to µs] [--top N] [--focus TEXT]",
    );
  const options = { file, from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY, top: 25, focus: "" };
  for (let i = 1; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1] ?? ""];
    if (key === "--from") options.from = Number(value);
    else if (key === "--to") options.to = Number(value);
    else if (key === "--top") options.top = Number(value);
    else if (key === "--focus") options.focus = value;
    else throw new Error(`unknown flag ${key}`);
  }
  return options;
}

/** The part of the code a frame belongs to: a package, the project's directory, Node, V8. */
function partOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const src = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (src) {
    const parts = (src[2] ?? "").split("/");
    return `${src[1]}/${parts.length > 1 ? parts.slice(0, parts[0] === "merchant-kit" ? 2 : 1).join("/") : parts[0]}`;
  }
  return url;
}

function label(frame: ProfileNode["callFrame"]): string {
  const file = frame.url.replace(/^.*\/node_modules\//, "").replace(/^.*\/(src|bench|test)\//, "$1/");
  return `${frame.functionName || "(anonymous)"} ${file ? `${file}:${frame.lineNumber + 1}` : ""}`.trim();
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const profile = JSON.parse(fs.readFileSync(options.file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // Each sample's time is the delta to the next one (V8 writes the delta before each sample).
  const kept: { node: number; us: number }[] = [];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (t >= options.from && t <= options.to) kept.push({ node: profile.samples[i] as number, us });
  }
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node) stack.push(node);
    }
    return stack;
  };
  const busy = kept.filter((s) => byId.get(s.node)?.callFrame.functionName !== "(idle)");
  const report = (title: string, samples: typeof busy) => {
    const total = samples.reduce((a, s) => a + s.us, 0);
    const pct = (us: number) => `${((100 * us) / Math.max(1, total)).toFixed(1).padStart(5)}%`;
    const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
    const parts = new Map<string, number>();
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    for (const s of samples) {
      const stack = stackOf(s.node);
      const own = stack[0]?.callFrame;
      if (!own) continue;
      parts.set(partOf(own), (parts.get(partOf(own)) ?? 0) + s.us);
      self.set(label(own), (self.get(label(own)) ?? 0) + s.us);
      for (const name of new Set(stack.map((n) => label(n.callFrame))))
        inclusive.set(name, (inclusive.get(name) ?? 0) + s.us);
    }
    const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
    console.log(`\n== ${title}: ${ms(total)} busy in ${samples.length} samples`);
    console.log("-- by part (own frame)");
    for (const [name, us] of top(parts, options.top)) console.log(`${pct(us)} ${ms(us)}  ${name}`);
    console.log("-- self");
    for (const [name, us] of top(self, options.top)) console.log(`${pct(us)} ${ms(us)}  ${name}`);
    console.log("-- total (on the stack)");
    for (const [name, us] of top(inclusive, options.top)) console.log(`${pct(us)} ${ms(us)}  ${name}`);
    return total;
  };
  const windowUs = kept.reduce((a, s) => a + s.us, 0);
  console.log(
    `${options.file}: ${(windowUs / 1000).toFixed(0)} ms sampled in the window, ${(busy.reduce((a, s) => a + s.us, 0) / 1000).toFixed(0)} ms busy`,
  );
  const all = report("busy", busy);
  if (options.focus) {
    const needle = options.focus.toLowerCase();
    const within = busy.filter((s) =>
      stackOf(s.node).some((n) =>
        `${n.callFrame.functionName} ${n.callFrame.url}`.toLowerCase().includes(needle),
      ),
    );
    const focused = report(`with "${options.focus}" on the stack`, within);
    console.log(
      `\n"${options.focus}" on the stack: ${((100 * focused) / Math.max(1, all)).toFixed(1)}% of busy time`,
    );
  }
}

main();
