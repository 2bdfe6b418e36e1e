/**
 * `social generate` and `social import` from the command line, on PGlite and (with DATABASE_URL) the
 * server: the same seed gives the same archive; a bad line stops the import with one line naming it and
 * nothing written; a good file loads, and loads again without change; `serve --only social,social-proxy`
 * then answers both hosts.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { describe, expect, it, onTestFinished } from "vitest";
import { openDatabase } from "../../src/common/db/index.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions } from "../helpers/db.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { runCli } from "../helpers/process.ts";

const BIN = path.resolve("bin/x402-merchants");
const PAY_TO = "0x2222222222222222222222222222222222222222";

describe("social generate", () => {
  it("writes the same synthetic archive for the same seed, and refuses a bad size", async () => {
    const first = await runCli(["social", "generate", "--tweets", "150", "--seed", "4"]);
    const again = await runCli(["social", "generate", "--tweets", "150", "--seed", "4"]);
    expect(first.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    const kinds = first.stdout
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds.filter((k) => k === "tweet")).toHaveLength(150);
    expect(kinds).toEqual(expect.arrayContaining(["user", "follow", "list", "community", "article"]));

    const bad = await runCli(["social", "generate", "--tweets", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^x402-merchants: --tweets takes a whole number .+\n$/);
  });
});

describe.each(DATABASE_KINDS)("social import on %s", (kind) => {
  it("stops at a bad line before writing anything, then loads a good file, twice alike", async () => {
    const options = await isolatedDatabaseOptions(kind);
    onTestFinished(options.cleanup);
    const env = { DATABASE_URL: options.databaseUrl ?? "" };
    const generated = await runCli(["social", "generate", "--tweets", "200", "--seed", "9"]);
    const good = path.join(options.dataDir, "x.jsonl");
    fs.writeFileSync(good, generated.stdout);
    const lines = generated.stdout.trim().split("\n");
    const bad = path.join(options.dataDir, "bad.jsonl");
    fs.writeFileSync(
      bad,
      [...lines.slice(0, 5), '{"kind":"tweet","id":"12x"}', ...lines.slice(5)].join("\n"),
    );

    const refused = await runCli(["social", "import", bad, "--data", options.dataDir], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^x402-merchants: .*line 6.*\n$/);
    expect(await tweetCount(options)).toBe(0);

    const loaded = await runCli(["social", "import", good, "--data", options.dataDir], env);
    expect(loaded.stderr).toBe("");
    expect(loaded.code).toBe(0);
    const summary = JSON.parse(loaded.stdout) as { imported: { tweet: number } };
    expect(summary.imported.tweet).toBe(200);
    const reloaded = await runCli(["social", "import", good, "--data", options.dataDir], env);
    expect(reloaded.code).toBe(0);
    expect(await tweetCount(options)).toBe(200);

    const missing = await runCli(["social", "import", path.join(options.dataDir, "nope.jsonl")], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no file/);
  }, 120_000);
});

/** Tweets in the archive of `options`' store; 0 when its tables were never made. */
async function tweetCount(options: Awaited<ReturnType<typeof isolatedDatabaseOptions>>): Promise<number> {
  const db = await openDatabase(options);
  try {
    const made = await db.query<{ t: string | null }>(
      "SELECT to_regclass('social_archive_tweets')::text AS t",
    );
    if (!made.rows[0]?.t) return 0;
    const { rows } = await db.query<{ n: bigint }>("SELECT count(*) AS n FROM social_archive_tweets");
    return Number(rows[0]?.n ?? 0);
  } finally {
    await db.close();
  }
}

describe("serve --only social,social-proxy", () => {
  it("serves the API and its paid proxy, each on its own port, asking for payment", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const { dataDir, cleanup } = await isolatedDatabaseOptions("pglite");
    onTestFinished(cleanup);
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--only", "social,social-proxy", "--data", dataDir],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          DATABASE_URL: "",
          X402M_FACILITATOR_URL: facilitator.url,
          X402M_SOCIAL_PAY_TO: PAY_TO,
          X402M_SOCIAL_PORT: "0",
          X402M_SOCIAL_PROXY_PORT: "0",
        },
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => {
        err += chunk.toString();
      });
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)));
    });
    const urls = JSON.parse(line) as { social: string; "social-proxy": string };
    expect(Object.keys(urls).sort()).toEqual(["social", "social-proxy"]);
    expect((await fetch(`${urls.social}/users/by/username?username=jack`)).status).toBe(402);
    const proxied = await fetch(`${urls["social-proxy"]}/pay/jack`);
    expect(proxied.status).toBe(402);
    // The proxy is paid to the social-data API's wallet unless it has its own.
    const asked = decodePaymentRequiredHeader(proxied.headers.get("payment-required") as string);
    expect(asked.accepts[0]?.payTo.toLowerCase()).toBe(PAY_TO);
    expect((await fetch(`${urls.social}/tweets/search`)).status).toBe(400);
  }, 60_000);
});
