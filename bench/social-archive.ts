/**
 * The archive provider at scale, by hand (not a test): imports a synthetic corpus, then times search and
 * timeline pages. `npx tsx bench/social-archive.ts [tweets=100000] [pglite|postgres]`; postgres needs
 * DATABASE_URL and uses a scratch schema it drops.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { type Database, openDatabase } from "../src/common/db/index.ts";
import type { PageRequest } from "../src/merchants/social/provider.ts";
import { corpusSessionToken } from "../src/merchants/social/providers/archive/corpus.ts";
import {
  archiveProvider,
  generateCorpus,
  importArchive,
} from "../src/merchants/social/providers/archive/index.ts";

const tweets = Number(process.argv[2] ?? 100_000);
const kind = process.argv[3] ?? "pglite";
const SEED = 402;

async function open(): Promise<{ db: Database; cleanup: () => Promise<void> }> {
  if (kind === "postgres") {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("postgres needs DATABASE_URL");
    const schema = `bench_archive_${process.pid}`;
    const admin = async (sql: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(sql);
      await c.end();
    };
    await admin(`CREATE SCHEMA ${schema}`);
    const db = await openDatabase({
      pgliteDir: "",
      databaseUrl: `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    });
    return { db, cleanup: () => admin(`DROP SCHEMA ${schema} CASCADE`) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-archive-bench-"));
  const db = await openDatabase({ pgliteDir: path.join(dir, "pglite"), databaseUrl: null });
  return { db, cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

async function timed(name: string, runs: number, call: (i: number) => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await call(i);
    ms.push(performance.now() - t);
  }
  console.log(`${name.padEnd(34)} p50 ${pct(ms, 50).toFixed(1)} ms   p99 ${pct(ms, 99).toFixed(1)} ms`);
}

const { db, cleanup } = await open();
try {
  const started = performance.now();
  const counts = await importArchive(db, generateCorpus({ tweets, seed: SEED }), { batchSize: 5000 });
  const secs = (performance.now() - started) / 1000;
  const records = Object.values(counts).reduce((a, b) => a + b, 0);
  console.log(
    `${kind}: imported ${counts.tweet} tweets (${records} records) in ${secs.toFixed(1)} s: ` +
      `${Math.round(counts.tweet / secs)} tweets/s, ${Math.round(records / secs)} records/s`,
  );
  await db.exec("ANALYZE");

  const p = archiveProvider(db);
  const signal = AbortSignal.timeout(600_000);
  const page: PageRequest = { size: 20 };
  const usernames: string[] = [];
  for (const r of generateCorpus({ tweets: 0, users: Math.max(20, Math.round(tweets / 25)), seed: SEED })) {
    if (r.kind === "user") usernames.push(r.username);
    if (usernames.length >= 200) break;
  }
  const words = ["payments", "agent", "wallet", "settlement", "latency", "honest", "receipt", "bazaar"];
  await timed("search 1 word", 100, (i) =>
    p.searchTweets({ words: [words[i % words.length] as string] }, page, signal),
  );
  await timed("search 2 words + minLikes", 100, (i) =>
    p.searchTweets(
      { words: [words[i % 8] as string, words[(i + 3) % 8] as string], minLikes: 5 },
      page,
      signal,
    ),
  );
  await timed("search rare phrase", 50, () => p.searchTweets({ phrase: "honest ledger" }, page, signal));
  await timed("search hashtag + since/until", 100, () =>
    p.searchTweets({ hashtags: ["x402"], since: "2026-03-01", until: "2026-04-01" }, page, signal),
  );
  await timed("search from:user", 100, (i) =>
    p.searchTweets({ from: usernames[i % 200] as string }, page, signal),
  );
  await timed("userTweets page 1", 200, (i) => p.userTweets(usernames[i % 200] as string, page, signal));
  let cursor: string | undefined;
  await timed("userTweets pages 1..100 (top user)", 100, async () => {
    const got = await p.userTweets(usernames[0] as string, { size: 20, ...(cursor && { cursor }) }, signal);
    cursor = got?.next;
  });
  await timed("mentions", 50, () => p.mentions({ authToken: corpusSessionToken(SEED) }, page, signal));
  await timed("searchUsers", 50, (i) =>
    p.searchUsers(["builder", "ada", "vault", "agent"][i % 4] as string, page, signal),
  );
} finally {
  await db.close();
  await cleanup();
}
