import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { onFirstUse } from "../../../src/merchants/utility/lazy.ts";
import { MODULE_RECORDER } from "../../helpers/modules.ts";

const ROOT = path.resolve(import.meta.dirname, "../../..");

/**
 * In a fresh process (tsx, as the CLI runs): the node_modules files loaded by building the utility
 * merchant, then those loaded by one call of each lazy engine. ESM files are seen by a resolve hook, the
 * CommonJS ones in the require cache.
 */
const PROBE = `${MODULE_RECORDER}
const settle = () => new Promise((r) => setTimeout(r, 200));
const loaded = () => [...resolved, ...Object.keys(cache)].filter((f) => f.includes("/node_modules/"));

const { utilityMerchant } = await import("./src/merchants/utility/catalogue.ts");
const merchant = utilityMerchant({ payTo: "0x1111111111111111111111111111111111111111", publicUrl: "http://127.0.0.1:1" });
await settle();
const atStart = loaded();

const byPath = Object.fromEntries(merchant.endpoints.map((e) => [e.path, e]));
const ctx = { payer: "0x1111111111111111111111111111111111111111", signal: new AbortController().signal, request: new Request("http://127.0.0.1:1/"), services: {} };
await byPath["/api/calc"].handler({ expr: "sqrt(2)" }, ctx);
(await import("./src/merchants/utility/pages/dom.ts")).parseHtml("<p>x</p>", "http://127.0.0.1:1/");
const render = await import("./src/merchants/utility/vectorize/render.ts");
const drawing = { width: 2, height: 2, shapes: [] };
render.toPng(render.toSvg(drawing));
await render.toPdf(drawing);
render.toDxf(drawing);
(await import("./src/merchants/utility/lookup/domain-name.ts")).parseDomain("example.com");
await settle();
// Exit only once the pipe has taken it all: a large write to a pipe can still be queued.
process.stdout.write(JSON.stringify({ atStart, afterUse: loaded() }), () => process.exit(0));
`;

/** Packages an idle host need not hold: each is loaded by the first call that uses it. */
const LAZY_PACKAGES = [
  "mathjs",
  "jsdom",
  "@mozilla/readability",
  "turndown",
  "pdfkit",
  "@resvg/resvg-js",
  "@tarikjabiri/dxf",
  "sharp",
  "tldts",
];
/** The ones the probe's calls use (sharp needs an image, readability and turndown a page). */
const USED_BY_PROBE = ["mathjs", "jsdom", "pdfkit", "@resvg/resvg-js", "@tarikjabiri/dxf", "tldts"];

const holds = (files: string[], pkg: string) => files.some((f) => f.includes(`/node_modules/${pkg}/`));

describe("onFirstUse", () => {
  it("loads once, on the first call, and loads again after a load that threw", () => {
    let loads = 0;
    const value = onFirstUse(() => ({ n: ++loads }));
    expect(loads).toBe(0);
    expect(value()).toBe(value());
    expect(loads).toBe(1);

    let attempts = 0;
    const flaky = onFirstUse(() => {
      attempts++;
      if (attempts === 1) throw new Error("not yet");
      return "loaded";
    });
    expect(() => flaky()).toThrow("not yet");
    expect(flaky()).toBe("loaded");
    expect(flaky()).toBe("loaded");
    expect(attempts).toBe(2);
  });
});

describe("the utility merchant's large packages", () => {
  it("are not loaded by building the merchant, and are by the first call that needs them", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx/esm", "--input-type=module", "-e", PROBE],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    const { atStart, afterUse } = JSON.parse(stdout) as { atStart: string[]; afterUse: string[] };
    // The probe sees packages at all: zod builds every schema of the catalogue.
    expect(holds(atStart, "zod")).toBe(true);
    expect(LAZY_PACKAGES.filter((pkg) => holds(atStart, pkg))).toEqual([]);
    expect(USED_BY_PROBE.filter((pkg) => !holds(afterUse, pkg))).toEqual([]);
  }, 180_000);
});
