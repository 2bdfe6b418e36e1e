/**
 * `social generate` and `social import` from the command line, on PGlite and (with DATABASE_URL) the
 * server: the same seed gives the same archive; a bad line stops the import with one line naming it and
 * nothing written; a good file loads, and loads again without change; a username another user holds
 * stops an import in one line, nothing of it written; `listings --only social,social-proxy`
 * prints both hosts' listings, the proxy's paid to its own wallet when it has one;
 * `serve --only social,social-proxy` then answers both hosts, each asking for its own wallet.
 * The commands that end on their own run in this process (runMain): a child process would open PGlite
 * anew, two CPU-seconds each.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { describe, expect, it, onTestFinished } from "vitest";
import { openDatabase } from "../../src/common/db/index.ts";
import { SOCIAL_SPEC_ORDER } from "../../src/merchants/social/catalogue.ts";
import { DATABASE_KINDS, isolatedDatabaseOptions, LEDGER_KIND } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";

const BIN = path.resolve("bin/x402-merchants");
const PAY_TO = "0x2222222222222222222222222222222222222222";
const PROXY_PAY_TO = "0x3333333333333333333333333333333333333333";

describe("social generate", () => {
  it("writes the same synthetic archive for the same seed, and refuses a bad size", async () => {
    const first = await runMain(["social", "generate", "--tweets", "150", "--seed", "4"]);
    const again = await runMain(["social", "generate", "--tweets", "150", "--seed", "4"]);
    expect(first.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    const kinds = first.stdout
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds.filter((k) => k === "tweet")).toHaveLength(150);
    expect(kinds).toEqual(expect.arrayContaining(["user", "follow", "list", "community", "article"]));

    const bad = await runMain(["social", "generate", "--tweets", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^x402-merchants: --tweets takes a whole number .+\n$/);
  });
});

describe.each(DATABASE_KINDS)("social import on %s", (kind) => {
  it("stops at a bad line before writing anything, loads a good file twice alike, refuses a clashing username whole", async () => {
    const options = await isolatedDatabaseOptions(kind);
    onTestFinished(options.cleanup);
    const env = { DATABASE_URL: options.databaseUrl ?? "" };
    const generated = await runMain(["social", "generate", "--tweets", "200", "--seed", "9"]);
    const good = path.join(options.dataDir, "x.jsonl");
    fs.writeFileSync(good, generated.stdout);
    const lines = generated.stdout.trim().split("\n");
    const bad = path.join(options.dataDir, "bad.jsonl");
    fs.writeFileSync(
      bad,
      [...lines.slice(0, 5), '{"kind":"tweet","id":"12x"}', ...lines.slice(5)].join("\n"),
    );

    const refused = await runMain(["social", "import", bad, "--data", options.dataDir], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^x402-merchants: .*line 6.*\n$/);
    expect(await tweetCount(options)).toBe(0);

    const loaded = await runMain(["social", "import", good, "--data", options.dataDir], env);
    expect(loaded.stderr).toBe("");
    expect(loaded.code).toBe(0);
    const summary = JSON.parse(loaded.stdout) as { imported: { tweet: number } };
    expect(summary.imported.tweet).toBe(200);
    const reloaded = await runMain(["social", "import", good, "--data", options.dataDir], env);
    expect(reloaded.code).toBe(0);
    expect(await tweetCount(options)).toBe(200);

    // A new tweet, then a new user taking an archived user's username: refused whole, in one line.
    const taken = (
      JSON.parse(lines.find((l) => l.includes('"kind":"user"')) as string) as { username: string }
    ).username;
    const clash = path.join(options.dataDir, "clash.jsonl");
    fs.writeFileSync(
      clash,
      [
        '{"kind":"tweet","id":"77","authorId":"78","text":"new","createdAt":"2026-01-01T00:00:00Z"}',
        `{"kind":"user","id":"78","name":"Other","username":"${taken.toUpperCase()}","createdAt":"2020-01-01"}`,
      ].join("\n"),
    );
    const conflict = await runMain(["social", "import", clash, "--data", options.dataDir], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toBe(
      `x402-merchants: two users have the username "${taken.toLowerCase()}" (X's usernames are unique whatever their case): nothing of this import was written\n`,
    );
    expect(await tweetCount(options)).toBe(200);

    const missing = await runMain(["social", "import", path.join(options.dataDir, "nope.jsonl")], env);
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

describe("listings --only social,social-proxy", () => {
  type Listing = { type: string; pay_to: string; resource: string; price_usd: number; description: string };
  const listed = (stdout: string) =>
    stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Listing);

  it("lists the 19 paths and the proxy's /pay/{agent_id}, paid to the proxy's own wallet when it has one", async () => {
    const hosts = {
      X402M_SOCIAL_PAY_TO: PAY_TO,
      X402M_SOCIAL_URL: "https://social.test",
      X402M_SOCIAL_PROXY_URL: "https://proxy.test/",
    };
    const own = await runMain(["listings", "--only", "social,social-proxy"], {
      ...hosts,
      X402M_SOCIAL_PROXY_PAY_TO: PROXY_PAY_TO,
    });
    const shared = await runMain(["listings", "--only", "social-proxy"], {
      ...hosts,
      X402M_SOCIAL_PROXY_PAY_TO: "",
    });
    expect(own.stderr).toBe("");
    expect(own.code).toBe(0);
    const listings = listed(own.stdout);
    const social = listings.filter((l) => l.resource.startsWith("https://social.test/"));
    expect(social.map((l) => l.resource.slice("https://social.test".length)).sort()).toEqual(
      [...SOCIAL_SPEC_ORDER].sort(),
    );
    expect(new Set(social.map((l) => l.pay_to))).toEqual(new Set([PAY_TO]));
    const lookup = social.find((l) => l.resource === "https://social.test/users/by/username");
    const proxied = listings.filter((l) => l.resource.startsWith("https://proxy.test/"));
    expect(proxied).toEqual([
      {
        ...lookup,
        type: "listing",
        pay_to: PROXY_PAY_TO,
        resource: "https://proxy.test/pay/{agent_id}",
        price_usd: 0.005,
      },
    ]);

    // Without a wallet of its own, the proxy is paid to the social-data API's.
    expect(shared.code).toBe(0);
    expect(listed(shared.stdout).map((l) => [l.resource, l.pay_to])).toEqual([
      ["https://proxy.test/pay/{agent_id}", PAY_TO],
    ]);
  }, 60_000);
});

describe("serve --only social,social-proxy", () => {
  it("serves the API and its paid proxy, each on its own port, asking for payment to its own wallet", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    // A schema of the server where the tests have one (CI), else PGlite: the store is the import cases' above,
    // and PGlite started in the child costs it a CPU-second or more.
    const state = await isolatedDatabaseOptions(LEDGER_KIND, "merchants");
    onTestFinished(state.cleanup);
    const dataDir = state.dataDir;
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--only", "social,social-proxy", "--data", dataDir],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          DATABASE_URL: state.databaseUrl ?? "",
          X402M_FACILITATOR_URL: facilitator.url,
          X402M_SOCIAL_PAY_TO: PAY_TO,
          X402M_SOCIAL_PROXY_PAY_TO: PROXY_PAY_TO,
          X402M_SOCIAL_PORT: "0",
          X402M_SOCIAL_PROXY_PORT: "0",
          X402M_METRICS_PORT: "0",
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
    // The hosts in the order named, then the operator's metrics.
    expect(Object.keys(urls)).toEqual(["social", "social-proxy", "metrics"]);
    const payee = async (url: string) => {
      const asked = await fetch(url);
      expect(asked.status).toBe(402);
      const required = decodePaymentRequiredHeader(asked.headers.get("payment-required") as string);
      return required.accepts[0]?.payTo.toLowerCase();
    };
    expect(await payee(`${urls.social}/users/by/username?username=jack`)).toBe(PAY_TO);
    expect(await payee(`${urls["social-proxy"]}/pay/jack`)).toBe(PROXY_PAY_TO);
    expect((await fetch(`${urls.social}/tweets/search`)).status).toBe(400);
  }, 60_000);
});
