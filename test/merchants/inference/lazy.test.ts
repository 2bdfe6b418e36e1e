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

const probe = (use: "none" | "call" | "warm") => `
const { MERCHANTS } = await import(${JSON.stringify(pathToFileURL(path.resolve("src/merchants/index.ts")).href)});
const { loadConfig } = await import(${JSON.stringify(pathToFileURL(path.resolve("src/services/config.ts")).href)});
const config = loadConfig({ env: { X402M_INFERENCE_ENGINE: "offline" } });
const merchant = MERCHANTS.inference({ payTo: "0x${"1".repeat(40)}", publicUrl: "http://127.0.0.1" }, config);
if (${JSON.stringify(use)} === "warm") await merchant.warm();
if (${JSON.stringify(use)} === "call") {
  const e = merchant.endpoints[0];
  await e.handler(e.input.parse({ messages: [{ role: "user", content: "hi" }] }), {
    signal: new AbortController().signal,
    services: { config },
  });
}
console.log(JSON.stringify(globalThis.loadedFiles().some((f) => f.includes("js-tiktoken"))));
`;

function tokenizerLoaded(use: "none" | "call" | "warm"): boolean {
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
  return JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "null") as boolean;
}

describe("the inference catalogue's engines", () => {
  it("load the tokenizer on the first chat call, or when the host warms them, not when the merchant is built", () => {
    expect(tokenizerLoaded("none")).toBe(false);
    expect(tokenizerLoaded("call")).toBe(true);
    expect(tokenizerLoaded("warm")).toBe(true);
  }, 90_000);
});
