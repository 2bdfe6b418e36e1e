import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { MODULE_RECORDER } from "../helpers/modules.ts";
import { newMerchant } from "../helpers/x402.ts";

const BIN = path.resolve("bin/x402-merchants");

/**
 * Preloaded into the command: records every file the process loads (ESM through a resolve hook,
 * CommonJS from the require cache) and writes the list to `SERVE_MODULES_OUT` as the process exits.
 */
const RECORDER = `${MODULE_RECORDER}
import fs from "node:fs";
process.on("exit", () => {
  fs.writeFileSync(process.env.SERVE_MODULES_OUT, JSON.stringify([...resolved, ...Object.keys(cache)]));
});
`;

/**
 * The command runs from the bundle of its sources (src/cli/launch.mjs), where the project's modules are
 * chunks rather than files, or from the sources themselves: the packages are files either way.
 */
describe.each([
  ["the bundle", {}],
  ["the sources", { X402M_CLI_FROM_SOURCES: "1" }],
])("serve --only utility, from %s", (from, launch) => {
  it("loads neither the facilitator nor the utility API's large packages until a call needs them", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    // The merchants' cluster only: serve never starts the facilitator, whose copy would cost a quarter CPU-s.
    const { dataDir, cleanup } = await isolatedDatabaseOptions("pglite", "merchants");
    onTestFinished(cleanup);
    const recorder = path.join(dataDir, "recorder.mjs");
    fs.writeFileSync(recorder, RECORDER);
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "x402m-modules-")), "loaded.json");
    const child = spawn(
      process.execPath,
      ["--import", recorder, BIN, "serve", "--only", "utility", "--data", dataDir],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          DATABASE_URL: "",
          X402M_FACILITATOR_URL: facilitator.url,
          X402M_UTILITY_PAY_TO: newMerchant(),
          X402M_UTILITY_PORT: "0",
          X402M_METRICS_PORT: "0",
          SERVE_MODULES_OUT: out,
          ...launch,
        },
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const line = await new Promise<string>((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("\n")) resolve(stdout.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
    const { utility } = JSON.parse(line) as { utility: string };
    // The 402 of calc: its input is checked, the payment asked for, no engine run.
    expect((await fetch(`${utility}/api/calc?expr=1%2B1`)).status).toBe(402);
    child.kill("SIGTERM");
    expect(await exit).toBe(0);

    const loaded = JSON.parse(fs.readFileSync(out, "utf8")) as string[];
    const has = (part: string) => loaded.some((file) => file.includes(part));
    // What serving the utility API does load: the recorder sees it.
    if (from === "the sources") {
      expect(has("/src/merchants/utility/catalogue.ts")).toBe(true);
      expect(has("/src/merchant-kit/app.ts")).toBe(true);
    } else {
      expect(has("/node_modules/.cache/x402-merchants/")).toBe(true);
      expect(has("/src/merchant-kit/app.ts")).toBe(false);
    }
    expect(has("/node_modules/@electric-sql/pglite/")).toBe(true);
    expect(has("/node_modules/hono/")).toBe(true);
    const unneeded = [
      "/src/facilitator/",
      "/src/services/facilitator.ts",
      "/node_modules/@x402/core/dist/esm/facilitator/",
      "/node_modules/@x402/evm/dist/esm/exact/facilitator/",
      "/node_modules/mathjs/",
      "/node_modules/jsdom/",
      "/node_modules/pdfkit/",
      "/node_modules/sharp/",
      "/node_modules/@resvg/resvg-js/",
      "/node_modules/tldts/",
    ];
    expect(unneeded.filter(has)).toEqual([]);
  }, 180_000);
});
