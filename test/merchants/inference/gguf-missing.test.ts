/**
 * The local GGUF engine on a host without node-llama-cpp (not in package.json: docs/inference.md). Whether
 * or not it is installed here, these tests meet its absence for real: the engine is given a package name
 * that no node_modules holds, so its `import()` throws Node's own ERR_MODULE_NOT_FOUND. A request is then a
 * 503 naming the command that installs it, in OpenAI's dialect; a paid call is not charged and not counted
 * against its payer (the engine did no work); the host's start says so once.
 */
import { execFile } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { wrapFetchWithPayment } from "@x402/fetch";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppError, UpstreamError } from "../../../src/common/errors.ts";
import { UNPAID_LIMIT } from "../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { routeEngine } from "../../../src/merchants/inference/catalogue.ts";
import { chatEndpoint } from "../../../src/merchants/inference/chat.ts";
import { type ChatEngine, type ChatRequest, collect } from "../../../src/merchants/inference/engine.ts";
import {
  GGUF_ENGINE_INSTALL,
  GgufEngineMissingError,
  ggufEngine,
  NODE_LLAMA_CPP_VERSION,
  warnIfNotInstalled,
} from "../../../src/merchants/inference/engines/gguf.ts";
import { TIERS } from "../../../src/merchants/inference/tiers.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { writeTinyGguf } from "../../helpers/gguf.ts";
import { type PaidShop, startPaidShop } from "../../helpers/paid.ts";
import { x402ClientOf } from "../../helpers/x402.ts";

const ROOT = path.resolve(import.meta.dirname, "../../..");

/** A package no node_modules holds: the engine's import of it fails as node-llama-cpp's does when absent. */
const ABSENT = "x402m-test-node-llama-cpp-absent";
const MISSING = `the local GGUF engine (node-llama-cpp) is not installed on this server; its operator installs it with: npm install --no-save node-llama-cpp@${NODE_LLAMA_CPP_VERSION}; nothing was charged`;

const dir = mkdtempSync(path.join(tmpdir(), "x402m-gguf-missing-"));
const modelPath = path.join(dir, "tiny.gguf");
writeTinyGguf(modelPath);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const request: ChatRequest = { model: "tiny", messages: [{ role: "user", content: "hi" }], maxTokens: 4 };

async function refusal(engine: ChatEngine): Promise<AppError> {
  const error = await collect(engine.chat(request)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GgufEngineMissingError);
  return error as AppError;
}

describe("the local GGUF engine without node-llama-cpp", () => {
  it("is a 503 engine_unavailable naming the command that installs it", async () => {
    expect(GGUF_ENGINE_INSTALL).toBe(`npm install --no-save node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`);
    const engine = ggufEngine({ modelPath, packageName: ABSENT });
    const e = await refusal(engine);
    expect(e).toMatchObject({ status: 503, code: "engine_unavailable", message: MISSING });
    // No file of the server's in it: the caller reads it as the log does.
    expect(e.publicMessage).toBeUndefined();
    expect((e.cause as NodeJS.ErrnoException).code).toBe("ERR_MODULE_NOT_FOUND");
    // Not a failure of the engine's work, which the kit would count against the payer: a refusal.
    expect(e).not.toBeInstanceOf(UpstreamError);
    // Still missing on the next request: it is looked for again, not remembered.
    expect((await refusal(engine)).message).toBe(MISSING);
  });

  it("names a package that is there but cannot be imported to the log only, and the command to the caller", async () => {
    // Installed, but a dependency of its own is missing: the same error code, another package's name.
    const broken = path.join(dir, "broken.mjs");
    writeFileSync(broken, `import "${ABSENT}-dependency";\nexport const getLlama = null;\n`);
    const e = await refusal(ggufEngine({ modelPath, packageName: pathToFileURL(broken).href }));
    expect(e).toMatchObject({ status: 503, code: "engine_unavailable" });
    expect(e.message).toContain(
      `cannot be loaded on this server (Cannot find package '${ABSENT}-dependency'`,
    );
    expect(e.message).toContain(GGUF_ENGINE_INSTALL);
    expect(e.publicMessage).toBe(
      `the local GGUF engine (node-llama-cpp) cannot be loaded on this server; its operator installs it with: ${GGUF_ENGINE_INSTALL}; nothing was charged`,
    );
  });
});

/**
 * The engine as the CLI runs it (src/cli/launch.mjs: esbuild, packages external), from a tree whose
 * node_modules holds every package of the project's but node-llama-cpp: what a default `npm install` gives.
 * The package's real name, and its real absence.
 */
const PROBE = `
import { writeFileSync } from "node:fs";
const m = await import("./bundle/gguf.mjs");
const out = { installed: m.ggufEngineInstalled() };
writeFileSync("tiny.gguf", "GGUF");
try {
  for await (const _ of m.ggufEngine({ modelPath: "tiny.gguf" }).chat({ model: "tiny", messages: [], maxTokens: 1 })) {}
} catch (error) {
  Object.assign(out, { status: error.status, code: error.code, message: error.message, cause: error.cause?.code });
}
out.warned = m.warnIfNotInstalled({ t3: { gguf: "tiny.gguf" } });
process.stdout.write(JSON.stringify(out));
`;

describe("the engine bundled as the CLI bundles it, in a tree without node-llama-cpp", () => {
  it("builds, leaves the package to run time, and answers 503 naming the command", async () => {
    const tree = path.join(dir, "tree");
    mkdirSync(path.join(tree, "node_modules"), { recursive: true });
    for (const name of readdirSync(path.join(ROOT, "node_modules"))) {
      if (name.startsWith(".") || name === "node-llama-cpp" || name === "@node-llama-cpp") continue;
      symlinkSync(path.join(ROOT, "node_modules", name), path.join(tree, "node_modules", name));
    }
    await build({
      entryPoints: [path.join(ROOT, "src/merchants/inference/engines/gguf.ts")],
      outdir: path.join(tree, "bundle"),
      outExtension: { ".js": ".mjs" },
      bundle: true,
      format: "esm",
      platform: "node",
      packages: "external",
      logLevel: "silent",
    });
    expect(readFileSync(path.join(tree, "bundle/gguf.mjs"), "utf8")).not.toMatch(/from "node-llama-cpp"/);
    writeFileSync(path.join(tree, "probe.mjs"), PROBE);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["probe.mjs"], { cwd: tree });
    expect(JSON.parse(stdout)).toEqual({
      installed: false,
      status: 503,
      code: "engine_unavailable",
      message: MISSING,
      cause: "ERR_MODULE_NOT_FOUND",
      warned: true,
    });
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain(GGUF_ENGINE_INSTALL);
  });
});

describe("the command that installs node-llama-cpp", () => {
  it("is the one CI runs, and the one docs/inference.md gives", async () => {
    const ci = readFileSync(path.join(ROOT, ".ci/run"), "utf8");
    // The line of .ci/run that reads the version from the engine's source, run as CI runs it.
    const line = ci.split("\n").find((l) => l.startsWith("llama=$("));
    expect(line).toBeDefined();
    const { stdout } = await promisify(execFile)("bash", ["-c", `${line}; printf %s "$llama"`], {
      cwd: ROOT,
    });
    expect(stdout).toBe(NODE_LLAMA_CPP_VERSION);
    expect(ci).toContain('npm install --no-save --no-audit --no-fund "node-llama-cpp@$llama"');
    expect(ci).toContain("export X402M_TEST_REQUIRE_GGUF=1");
    expect(readFileSync(path.join(ROOT, "docs/inference.md"), "utf8")).toContain(GGUF_ENGINE_INSTALL);
  });
});

describe("the inference host's start without node-llama-cpp", () => {
  const routes = { default: { gguf: null }, t3: { gguf: modelPath }, t7: { gguf: modelPath } };

  /** The lines `warnIfNotInstalled` writes, as the logger is handed them. */
  function warned(routes: Parameters<typeof warnIfNotInstalled>[0], packageName: string) {
    const lines: unknown[][] = [];
    const result = warnIfNotInstalled(routes, packageName, (...line) => {
      lines.push(line);
    });
    return { result, lines };
  }

  it("logs one warning naming the command and the routes, when a route names a GGUF file", () => {
    expect(warned(routes, ABSENT)).toEqual({
      result: true,
      lines: [
        [
          "warn",
          `the local GGUF engine is not installed: its routes answer 503 until the operator runs ${GGUF_ENGINE_INSTALL}`,
          { routes: ["t3", "t7"] },
        ],
      ],
    });
  });

  it("says nothing when no route names a GGUF file, or when the package is there", () => {
    expect(warned({ default: { gguf: null } }, ABSENT)).toEqual({ result: false, lines: [] });
    // zod: a package this project does install, found as node-llama-cpp would be.
    expect(warned(routes, "zod")).toEqual({ result: false, lines: [] });
  });
});

/** Tier 3 (exact and /upto) on the tiny model, its engine importing the absent package; paid on the devnet. */
describe("a paid route on the local GGUF engine without node-llama-cpp", () => {
  const t3 = TIERS[2] as (typeof TIERS)[number];
  let shop: PaidShop;

  beforeAll(async () => {
    const { inference } = loadConfig({ env: { X402M_INFERENCE_TIER_3_GGUF: modelPath } });
    const unused: ChatEngine = {
      name: "offline (unused)",
      chat: () => {
        throw new Error("tier 3 is not on the offline engine");
      },
    };
    const served = routeEngine(t3, inference, unused, (file) =>
      ggufEngine({ modelPath: file, packageName: ABSENT }),
    );
    expect(served.kind).toBe("gguf");
    shop = await startPaidShop([chatEndpoint(t3, served), chatEndpoint(t3, served, true)]);
  }, 120_000);
  afterAll(() => shop?.close());

  const chat = (extra: Record<string, unknown> = {}) => ({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: "Hello" }], max_tokens: 8, ...extra }),
  });
  const openAiRefusal = {
    error: { message: MISSING, type: "server_error", param: null, code: "engine_unavailable" },
  };

  it("answers 503 in OpenAI's shape, naming the command, charges nothing and holds nothing against the payer", async () => {
    const buyer = shop.buyer(0);
    const before = await shop.balanceOf(buyer.address);
    const pay = shop.buyerFetch(0);
    // One more than the unpaid calls a wallet may leave in an hour: none of these is one.
    for (let i = 0; i <= UNPAID_LIMIT; i++) {
      const answer = await pay(`${shop.url}/v1/chat/completions/_t/t3`, chat());
      expect(answer.status).toBe(503);
      expect(answer.headers.get("payment-response")).toBeNull();
      expect(await answer.json()).toEqual(openAiRefusal);
    }
    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(buyer.address)).toBe(before);
  });

  it("answers the same to a metered, streamed call, before any event", async () => {
    const buyer = shop.buyer(0);
    const before = await shop.balanceOf(buyer.address);
    const answer = await wrapFetchWithPayment(fetch, x402ClientOf(buyer))(
      `${shop.url}/v1/chat/completions/_t/t3/upto`,
      chat({ stream: true }),
    );
    expect(answer.status).toBe(503);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual(openAiRefusal);
    expect(await shop.pending()).toBe(0);
    expect(await shop.balanceOf(buyer.address)).toBe(before);
  });
});
