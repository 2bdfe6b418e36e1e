/**
 * Every environment variable the program reads is in docs/operations.md's table and in .env.example, each
 * documented name is read somewhere, and the documented defaults of the plain settings are the configuration's.
 * A variable added to the configuration without its documentation fails here.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_FACILITATORS } from "../../src/merchant-kit/payments/settings.ts";
import { type Config, loadConfig } from "../../src/services/config.ts";

const GUIDE = fs.readFileSync("docs/operations.md", "utf8");
const EXAMPLE = fs.readFileSync(".env.example", "utf8");

/** Read by the program but not its own: the system's, passed on to the audio programs. */
const SYSTEM = new Set(["PATH"]);

/** A name as documented (`X402M_FACILITATOR_<n>_URL`: `<n>` is a number) as a pattern of the names it covers. */
const patternOf = (documented: string) => new RegExp(`^${documented.replace(/<n>/g, "\\d+")}$`);
const NAME = /[A-Z][A-Z0-9_]*(?:<n>[A-Z0-9_]*)*/.source;

/** The rows of the guide's "Environment variables" tables: name and its default cell. */
function guideRows(): Map<string, string> {
  const start = GUIDE.indexOf("\n## Environment variables\n");
  const end = GUIDE.indexOf("\n## ", start + 1);
  expect(start, "docs/operations.md has a section '## Environment variables'").toBeGreaterThan(0);
  const section = GUIDE.slice(start, end < 0 ? undefined : end);
  const rows = new Map<string, string>();
  for (const [, name, cell] of section.matchAll(new RegExp(`^\\| \`(${NAME})\` \\| (.*?) \\|`, "gm")))
    rows.set(name as string, cell as string);
  return rows;
}

/** The variables of .env.example (`# NAME=default`, commented or not) and their values, unquoted. */
function exampleRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const [, name, value] of EXAMPLE.matchAll(new RegExp(`^#? ?(${NAME})=(.*)$`, "gm")))
    rows.set(name as string, (value as string).replace(/^"(.*)"$/, "$1"));
  return rows;
}

/**
 * The names the configuration's loader reads: once with nothing set, once with every setting that makes it
 * read others (a provider's URL, a fallback facilitator...). The loader builds everything before validating
 * it, so values need not be valid past the facilitators, which are checked as they are read.
 */
function readByLoader(): Set<string> {
  const read = new Set<string>();
  const record = (env: Record<string, string>) => {
    const watched = new Proxy(env, {
      get(target, key) {
        if (typeof key === "string") read.add(key);
        return typeof key === "string" ? target[key] : undefined;
      },
    });
    try {
      loadConfig({ env: watched });
    } catch {
      // Refused: what it read until then is recorded all the same.
    }
  };
  record({});
  const everything: Record<string, string> = {
    X402M_LLM_URL: "http://127.0.0.1:1",
    X402M_SEARCH_BACKEND: "searxng",
    X402M_IMAGE_KEY: "k",
    X402M_VECTORIZER_ID: "i",
    X402M_INFERENCE_LLM_URL: "http://127.0.0.1:1",
    X402M_INFERENCE_AUDIO_URL: "http://127.0.0.1:1",
    X402M_FACILITATOR_URL: "http://127.0.0.1:1",
  };
  for (let n = 2; n <= MAX_FACILITATORS; n++) everything[`X402M_FACILITATOR_${n}_URL`] = "http://127.0.0.1:1";
  record(everything);
  return read;
}

/** Names read literally anywhere in the program: `env.NAME`, `env["NAME"]`, and the launcher's `${NAME:-...}`. */
function readInSources(): Set<string> {
  const read = new Set<string>();
  const files = fs
    .readdirSync("src", { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .map((f) => path.join("src", f));
  for (const file of [...files, "bin/x402-merchants"]) {
    const text = fs.readFileSync(file, "utf8");
    for (const [, dotted, indexed] of text.matchAll(
      /\benv(?:\.([A-Z][A-Z0-9_]*)|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])/g,
    ))
      read.add((dotted ?? indexed) as string);
    if (file.startsWith("bin/"))
      for (const [, name] of text.matchAll(/\$\{([A-Z][A-Z0-9_]*):?-/g)) read.add(name as string);
  }
  return read;
}

const read = [...new Set([...readByLoader(), ...readInSources()])].filter((n) => !SYSTEM.has(n)).sort();

describe("the environment variables' documentation", () => {
  it("finds the variables the program reads (the check below would pass on nothing)", () => {
    expect(read).toContain("X402M_DATA");
    expect(read).toContain("X402M_INFERENCE_TIER_15_MODEL");
    expect(read).toContain(`X402M_FACILITATOR_${MAX_FACILITATORS}_AUTH`);
    expect(read).toContain("X402M_CLI_FROM_SOURCES");
    expect(read).toContain("MALLOC_ARENA_MAX");
    expect(read.length).toBeGreaterThan(100);
  });

  it.each([
    ["docs/operations.md", guideRows],
    [".env.example", exampleRows],
  ])("%s lists every variable the program reads, and only those", (_file, rows) => {
    const documented = [...rows().keys()];
    const undocumented = read.filter((name) => !documented.some((d) => patternOf(d).test(name)));
    expect(undocumented, "read by the program, not documented").toEqual([]);
    const unread = documented.filter((d) => !read.some((name) => patternOf(d).test(name)));
    expect(unread, "documented, read nowhere").toEqual([]);
  });

  it("gives the configuration's defaults", () => {
    const config: Config = loadConfig({ env: {} });
    const merchantPort = (host: keyof Config["merchants"]) => String(config.merchants[host]?.port);
    const defaults: Record<string, string> = {
      PORT: String(config.port),
      X402M_HOST: config.host,
      X402M_DUCKDB_MEMORY: config.duckdbMemory,
      X402M_FACILITATOR_PORT: String(config.ports.facilitator),
      X402M_FACILITATOR_GROUP_SETTLEMENTS: config.facilitatorGroupSettlements ? "on" : "off",
      X402M_FACILITATOR_POLL_MS: String(config.facilitatorPollMs),
      X402M_DEVNET_PORT: String(config.ports.devnet),
      X402M_SHOPS_PORT: String(config.ports.shops),
      X402M_METRICS_PORT: String(config.metrics.port),
      X402M_METRICS_HOST: config.metrics.host,
      X402M_UNPAID_RPS: String(config.unpaidLimit.perSecond),
      X402M_UNPAID_BURST: String(config.unpaidLimit.burst),
      X402M_UNPAID_CLIENTS: String(config.unpaidLimit.clients),
      X402M_UNPAID_LOOPBACK: config.unpaidLimit.loopback,
      X402M_FORWARDED_HEADER: config.unpaidLimit.forwardedHeader,
      X402M_UTILITY_PORT: merchantPort("utility"),
      X402M_UTILITY_ALIAS_PORT: merchantPort("utility-alias"),
      X402M_INFERENCE_PORT: merchantPort("inference"),
      X402M_SOCIAL_PORT: merchantPort("social"),
      X402M_SOCIAL_PROXY_PORT: merchantPort("social-proxy"),
      X402M_NETWORK: config.payments.network,
      X402M_ASSET: config.payments.asset.address,
      X402M_ASSET_NAME: config.payments.asset.name,
      X402M_ASSET_VERSION: config.payments.asset.version,
      X402M_ASSET_DECIMALS: String(config.payments.asset.decimals),
      X402M_RPC_URL: config.payments.rpcUrl,
      X402M_FACILITATOR_URL: config.payments.facilitatorUrl,
      X402M_INFERENCE_SPEECH_MODEL: config.inference.audio.speechModel,
      X402M_INFERENCE_TRANSCRIPTION_MODEL: config.inference.audio.transcriptionModel,
      X402M_SOCIAL_PROVIDER: config.social.provider,
      X402M_SOCIAL_CACHE_SECONDS: String(config.social.cacheSeconds),
    };
    const guide = guideRows();
    const example = exampleRows();
    for (const [name, value] of Object.entries(defaults)) {
      expect(guide.get(name)?.match(/^`([^`]*)`/)?.[1], `docs/operations.md, ${name}`).toBe(value);
      expect(example.get(name), `.env.example, ${name}`).toBe(value);
    }
    // The data directory, relative to the working directory.
    expect(path.resolve(guide.get("X402M_DATA")?.match(/^`([^`]*)`/)?.[1] ?? "")).toBe(config.dataDir);
    expect(path.resolve(example.get("X402M_DATA") ?? "")).toBe(config.dataDir);
  });
});
