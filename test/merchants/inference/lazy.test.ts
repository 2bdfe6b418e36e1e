/**
 * Every catalogue is imported by a process that serves any merchant (src/merchants/index.ts): the inference
 * catalogue must not load the tokenizer (140 MB of memory built) until a chat call needs it or its own host
 * warms it.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { MODULE_RECORDER } from "../../helpers/modules.ts";

const RECORDER = `${MODULE_RECORDER}
globalThis.loadedFiles = () => [...resolved, ...Object.keys(cache)];
`;

/**
 * Builds the merchant, notes whether the tokenizer is loaded, then warms it or makes a chat call and notes it
 * again: one process answers both, the first note being what building alone loads.
 */
const probe = (use: "call" | "warm") => `
const { MERCHANTS } = await import(${JSON.stringify(pathToFileURL(path.resolve("src/merchants/index.ts")).href)});
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.resolve("src/services/config.ts")).href)});
const config = loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } });
const merchant = MERCHANTS.inference({ payTo: "0x${"1".repeat(40)}", publicUrl: "http://127.0.0.1" }, config);
const tokenizer = () => globalThis.loadedFiles().some((f) => f.includes("js-tiktoken"));
const built = tokenizer();
if (${JSON.stringify(use)} === "warm") await merchant.warm();
if (${JSON.stringify(use)} === "call") {
  const e = merchant.endpoints[0];
  await e.handler(e.input.parse({ messages: [{ role: "user", content: "hi" }] }), {
    signal: new AbortController().signal,
    services: { config },
  });
}
console.log(JSON.stringify({ built, used: tokenizer() }));
`;

/** Whether the tokenizer is loaded once the merchant is built, and once it is then used as `use` says. */
function tokenizerLoaded(use: "call" | "warm"): { built: boolean; used: boolean } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-lazy-"));
  const recorder = path.join(dir, "recorder.mjs");
  fs.writeFileSync(recorder, RECORDER);
  const run = spawnSync(
    process.execPath,
    ["--import", pathToFileURL(recorder).href, "--import", "tsx", "--input-type=module", "-e", probe(use)],
    { encoding: "utf8", cwd: process.cwd() },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "null") as { built: boolean; used: boolean };
}

describe("the inference catalogue's engines", () => {
  it("load the tokenizer on the first chat call, or when the host warms them, not when the merchant is built", () => {
    // Two processes, not three: each first says what building the merchant alone loads.
    expect(tokenizerLoaded("call")).toEqual({ built: false, used: true });
    expect(tokenizerLoaded("warm")).toEqual({ built: false, used: true });
  }, 90_000);
});
