/**
 * Reading a Prometheus exposition back in tests: the samples by name and labels, and their deltas between
 * two scrapes. Metrics are the process's (one registry, shared by every test file a worker runs), so a
 * test asserts what changed, under labels of its own.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";

/** Sample values by `name{label="value",...}`, labels sorted by name. */
export type Samples = Map<string, number>;

/** The samples of an exposition in Prometheus's text format (comments skipped). */
export function parseExposition(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name, labels = "", value] = match;
    const pairs = [...labels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(
      ([, key, raw]) => [key as string, labelValue(raw as string)] as const,
    );
    samples.set(keyOf(name as string, Object.fromEntries(pairs)), Number(value));
  }
  return samples;
}

/** The key of a sample: its name and its labels sorted by name. */
export function keyOf(name: string, labels: Record<string, string> = {}): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${JSON.stringify(labels[key])}`);
  return sorted.length > 0 ? `${name}{${sorted.join(",")}}` : name;
}

/** How much a sample moved from `before` to `after` (an absent sample counts as 0). */
export function delta(
  before: Samples,
  after: Samples,
  name: string,
  labels: Record<string, string> = {},
): number {
  const key = keyOf(name, labels);
  return (after.get(key) ?? 0) - (before.get(key) ?? 0);
}

/** Every sample of `name` whose labels include `labels`, by key. */
export function matching(samples: Samples, name: string, labels: Record<string, string> = {}): Samples {
  const out: Samples = new Map();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  for (const [key, value] of samples) {
    if (!(key === name || key.startsWith(`${name}{`))) continue;
    if (wanted.every((pair) => key.includes(pair))) out.set(key, value);
  }
  return out;
}

/** `GET url` with optional headers: the exposition, parsed, and its text. */
export async function scrape(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  if (response.status !== 200)
    throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  const text = await response.text();
  return { text, samples: parseExposition(text), contentType: response.headers.get("content-type") };
}

export const PROMTOOL = "/usr/bin/promtool";

/**
 * `promtool check metrics` on an exposition: its complaints ("" when none), or undefined when promtool is
 * not installed (Debian's `prometheus` package), which X402M_TEST_REQUIRE_PROMTOOL=1 (CI) makes a failure.
 */
export async function promtoolComplaints(text: string): Promise<string | undefined> {
  if (!fs.existsSync(PROMTOOL)) {
    if (process.env.X402M_TEST_REQUIRE_PROMTOOL === "1")
      throw new Error(`${PROMTOOL} is missing: install Debian's prometheus package`);
    return undefined;
  }
  const run = promisify(execFile)(PROMTOOL, ["check", "metrics"]);
  run.child.stdin?.end(text);
  try {
    const { stdout, stderr } = await run;
    return `${stdout}${stderr}`.trim();
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ""}${e.stderr ?? ""}`.trim() || e.message;
  }
}

function labelValue(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}
