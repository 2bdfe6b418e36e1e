/**
 * The social-data API's archive at scale (`npm run bench:social [-- --tweets N] [-- --users N] [-- --server]`):
 * a synthetic X of N tweets (default 1,000,000) imported into PGlite (or, with `--server`, the PostgreSQL server of
 * DATABASE_URL, in a scratch schema), then pages timed against what a developer would write first over the
 * same tables: `ILIKE '%word%'` for search and `OFFSET` for later pages.
 *
 * 1. **Import**: tweets (and records) a second, through `importArchive`.
 * 2. **Pages**, each the median and p99 of `--runs` calls (default 60), the two sides interleaved so that
 *    load on the machine falls on both alike: a one-word search's first page; the 50th page of that search
 *    and of the most followed user's followers (keyset cursors against OFFSET 1,000 and 2,500); the most
 *    active user's first timeline page (both sides use the index: the control) and its 50th (against OFFSET
 *    980); a user search by the start of
 *    a name, on the search index against `LIKE '%term%'` over every user. Both sides build a page of
 *    tweets' `includes` (authors, referenced tweets, media) the archive's way: only the page's query differs.
 *
 * 3. **Throughput**: `--clients` callers at once (default 4), each asking for pages one after another for
 *    `--seconds` (default 5) per case: pages a second, and the p50 / p99 of a page under that load, for a
 *    search's first and 50th page and the most active user's first and 50th timeline page.
 *
 * 4. **Paid against unpaid**: `/tweets/user` over HTTP, its handler behind a plain route, then paid through
 *    the merchant kit on a devnet: what the payment adds to a call.
 *
 * One JSON line on stdout, a table on stderr.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Hono, type MiddlewareHandler } from "hono";
import pg from "pg";
import { startDevnet } from "../src/chain/devnet/index.ts";
import { type Database, openDatabase } from "../src/common/db/index.ts";
import { listen } from "../src/common/listen.ts";
import { inProcessClient } from "../src/facilitator/index.ts";
import type { HandlerContext } from "../src/merchant-kit/endpoint.ts";
import { type MerchantEnv, validateInput } from "../src/merchant-kit/input.ts";
import { socialEndpoints, socialMerchant } from "../src/merchants/social/catalogue.ts";
import type { SocialTweet } from "../src/merchants/social/model.ts";
import type { PageRequest, SocialProvider } from "../src/merchants/social/provider.ts";
import { includesOf } from "../src/merchants/social/providers/archive/includes.ts";
import {
  archiveProvider,
  archiveSetup,
  corpusSessionToken,
  generateCorpus,
  importArchive,
} from "../src/merchants/social/providers/archive/index.ts";
import { startMiner } from "../test/helpers/chain.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { devnetFacilitator } from "../test/helpers/facilitator.ts";
import { startMerchant, testConfig } from "../test/helpers/merchant.ts";
import { newMerchant, x402ClientOf } from "../test/helpers/x402.ts";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`bench:social: ${name} takes a positive integer\n`);
    process.exit(2);
  }
  return value;
};
const TWEETS = flag("--tweets", 1_000_000);
/** The corpus's users; default its own (a user per 25 tweets: 40,000 at 1M). */
const USERS = args.includes("--users") ? flag("--users", 1) : undefined;
const RUNS = flag("--runs", 60);
const CLIENTS = flag("--clients", 4);
const SECONDS = flag("--seconds", 5);
const SERVER = args.includes("--server");
const SEED = 402;
/** The page the "later page" cases ask for. */
const DEEP_PAGE = 50;
const log = (message: string) => process.stderr.write(`${message}\n`);

async function open(): Promise<{ db: Database; cleanup: () => Promise<void> }> {
  if (SERVER) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("--server needs DATABASE_URL");
    const schema = `bench_social_${process.pid}`;
    const admin = async (sql: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(sql);
      await client.end();
    };
    await admin(`CREATE SCHEMA ${schema}`);
    const separator = url.includes("?") ? "&" : "?";
    const db = await openDatabase({
      pgliteDir: "",
      databaseUrl: `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    });
    return { db, cleanup: () => admin(`DROP SCHEMA ${schema} CASCADE`) };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-social-"));
  const db = await openDatabase({ pgliteDir: path.join(dir, "pglite"), databaseUrl: null });
  return { db, cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

interface Case {
  name: string;
  archive: () => Promise<number>;
  straightforward: () => Promise<number>;
}

/** Both sides of a case, interleaved; each call answers the number of items it found (checked equal). */
async function measure(c: Case) {
  const times = { archive: [] as number[], straightforward: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    for (const side of i % 2 === 0
      ? (["archive", "straightforward"] as const)
      : (["straightforward", "archive"] as const)) {
      const started = performance.now();
      const found = await c[side]();
      times[side].push(performance.now() - started);
      if (found === 0) throw new Error(`${c.name}: the ${side} side found nothing`);
    }
  }
  const p50 = (xs: number[]) => percentile(xs, 50);
  return {
    case: c.name,
    archive_p50_ms: round(p50(times.archive)),
    archive_p99_ms: round(percentile(times.archive, 99)),
    straightforward_p50_ms: round(p50(times.straightforward)),
    straightforward_p99_ms: round(percentile(times.straightforward, 99)),
    ratio: round(p50(times.straightforward) / p50(times.archive)),
  };
}
const round = (x: number) => Math.round(x * 100) / 100;

/**
 * `call` from `CLIENTS` callers at once, each asking again as soon as it has its page, for `SECONDS`:
 * pages a second over all of them, and a page's p50 and p99 under that load.
 */
async function pagesPerSecond(name: string, call: () => Promise<number>) {
  const ms: number[] = [];
  const started = performance.now();
  const end = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const at = performance.now();
        if ((await call()) === 0) throw new Error(`${name}: found nothing`);
        ms.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    case: name,
    clients: CLIENTS,
    pages: ms.length,
    pages_per_second: round(ms.length / seconds),
    p50_ms: round(percentile(ms, 50)),
    p99_ms: round(percentile(ms, 99)),
  };
}

/**
 * The provider's cursor of page `n` (1-based) of a paged call, the pages before it walked once; on a small
 * corpus with fewer pages, the last page's, and its number.
 */
async function cursorOf<P extends { next?: string }>(
  n: number,
  size: number,
  call: (page: PageRequest) => Promise<P | null>,
): Promise<{ page: number; cursor: string | undefined }> {
  let cursor: string | undefined;
  for (let i = 1; i < n; i++) {
    const page = await call({ size, ...(cursor !== undefined && { cursor }) });
    if (!page?.next) return { page: i, cursor };
    cursor = page.next;
  }
  return { page: n, cursor };
}

/**
 * `/tweets/user`'s first page over HTTP on 127.0.0.1, one call at a time: the route's own input check and
 * handler behind a plain Hono route (no x402), then through the merchant kit paid by `@x402/fetch` with
 * exact (402, EIP-3009 signature, verify, handler, settlement on a devnet, receipt). What payment adds.
 */
async function paidAgainstUnpaid(db: Database, username: string) {
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const devnet = await startDevnet({ port: 0, buyers: 1, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet, 5, "wall");
    closers.push(() => miner.stop());
    const ledger = await openTestDatabase("pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const setup = archiveSetup();
    const host = await startMerchant(
      (url) => socialMerchant({ payTo: newMerchant(), publicUrl: url }, setup),
      db,
      inProcessClient(facilitator),
      { rpcUrl: devnet.rpc },
    );
    closers.push(() => host.close());
    const route = socialEndpoints(setup).find((e) => e.path === "/tweets/user");
    if (!route) throw new Error("no /tweets/user route");
    const config = testConfig();
    const plain = new Hono<MerchantEnv>();
    const handle: MiddlewareHandler<MerchantEnv> = async (c) => {
      const ctx: HandlerContext = {
        payer: "0x0000000000000000000000000000000000000001",
        signal: c.req.raw.signal,
        services: { db, config },
        request: c.req.raw,
      };
      const answer = await route.handler(c.var.input, ctx);
      return answer instanceof Response ? answer : c.json(answer);
    };
    plain.on(
      "GET",
      route.path,
      ...([...validateInput(route, { db, config }), handle] as [MiddlewareHandler<MerchantEnv>]),
    );
    const unpaidServer = await listen(plain.fetch, "127.0.0.1", 0);
    closers.push(() => unpaidServer.close());
    const buyer = devnet.buyers[0];
    if (!buyer) throw new Error("no buyer");
    const pay = wrapFetchWithPayment(fetch, x402ClientOf(buyer));
    const query = `/tweets/user?username=${username}`;
    const serial = async (call: () => Promise<Response>, calls: number) => {
      const ms: number[] = [];
      for (let i = 0; i < calls; i++) {
        const at = performance.now();
        const response = await call();
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${response.status} ${body.slice(0, 300)}`);
        ms.push(performance.now() - at);
      }
      return ms;
    };
    // The first calls warm every path: not timed.
    await serial(() => fetch(`${unpaidServer.url}${query}`), 3);
    await serial(() => pay(`${host.url}${query}`), 2);
    const unpaid = percentile(await serial(() => fetch(`${unpaidServer.url}${query}`), RUNS), 50);
    const paid = percentile(await serial(() => pay(`${host.url}${query}`), RUNS), 50);
    return { unpaid_p50_ms: round(unpaid), paid_p50_ms: round(paid), added_p50_ms: round(paid - unpaid) };
  } finally {
    for (const close of closers.reverse()) await close();
  }
}

const { db, cleanup } = await open();
try {
  const started = performance.now();
  const counts = await importArchive(
    db,
    generateCorpus({ tweets: TWEETS, seed: SEED, ...(USERS && { users: USERS }) }),
    { batchSize: 5000 },
  );
  const importSeconds = (performance.now() - started) / 1000;
  const records = Object.values(counts).reduce((a, b) => a + b, 0);
  await db.exec("ANALYZE");
  log(`imported ${counts.tweet} tweets (${records} records) in ${importSeconds.toFixed(1)} s`);

  const provider: SocialProvider = archiveProvider(db);
  const signal = () => AbortSignal.timeout(120_000);
  const first = async <T>(sql: string, params: unknown[]) => (await db.query<T>(sql, params)).rows[0] as T;
  const busiest = await first<{ id: string; username: string }>(
    `SELECT u.id::text AS id, u.username FROM social_archive_users u
     JOIN social_archive_tweets t ON t.author_id = u.id GROUP BY u.id, u.username ORDER BY count(*) DESC LIMIT 1`,
    [],
  );
  const popular = await first<{ id: string }>(
    `SELECT followed_id::text AS id FROM social_archive_follows GROUP BY followed_id ORDER BY count(*) DESC LIMIT 1`,
    [],
  );
  const word = "payments";
  const prefix = busiest.username.slice(0, 4);
  const searchPage = (page: PageRequest) => provider.searchTweets({ words: [word] }, page, signal());
  const followersPage = (page: PageRequest) => provider.followers(popular.id, page, signal());
  const deepSearch = await cursorOf(DEEP_PAGE, 20, searchPage);
  const deepFollowers = await cursorOf(DEEP_PAGE, 50, followersPage);
  const timelinePage = (page: PageRequest) => provider.userTweets(busiest.username, page, signal());
  const deepTimeline = await cursorOf(DEEP_PAGE, 20, timelinePage);
  const pageAt = (cursor: string | undefined) => ({ size: 20, ...(cursor && { cursor }) });
  const rows = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rowCount;
  // A page of tweets with its includes, built as the archive builds them: only the page's query differs.
  const tweetRows = async (sql: string, params: unknown[]) => {
    const tweets = (await db.query<{ doc: SocialTweet }>(sql, params)).rows.map((r) => r.doc);
    await includesOf(db, tweets);
    return tweets.length;
  };

  const cases: Case[] = [
    {
      name: `search "${word}", page 1`,
      archive: async () => (await searchPage({ size: 20 })).tweets.length,
      straightforward: () =>
        tweetRows(
          `SELECT doc FROM social_archive_tweets WHERE text ILIKE $1 ORDER BY created_at DESC, id DESC LIMIT 20`,
          [`%${word}%`],
        ),
    },
    {
      name: `search "${word}", page ${deepSearch.page}`,
      archive: async () =>
        (await searchPage({ size: 20, ...(deepSearch.cursor && { cursor: deepSearch.cursor }) })).tweets
          .length,
      straightforward: () =>
        tweetRows(
          `SELECT doc FROM social_archive_tweets WHERE text ILIKE $1 ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET $2`,
          [`%${word}%`, (deepSearch.page - 1) * 20],
        ),
    },
    {
      name: `followers of the most followed, page ${deepFollowers.page}`,
      archive: async () =>
        (await followersPage({ size: 50, ...(deepFollowers.cursor && { cursor: deepFollowers.cursor }) }))
          ?.users.length ?? 0,
      straightforward: () =>
        rows(
          `SELECT u.doc FROM social_archive_follows f JOIN social_archive_users u ON u.id = f.follower_id
           WHERE f.followed_id = $1 ORDER BY f.seq DESC LIMIT 50 OFFSET $2`,
          [popular.id, (deepFollowers.page - 1) * 50],
        ),
    },
    {
      // Against the scan the archive did before its search index (tables.ts, version 2).
      name: `users matching "${prefix}", page 1`,
      archive: async () => (await provider.searchUsers(prefix, { size: 20 }, signal())).users.length,
      straightforward: () =>
        rows(
          `SELECT doc FROM social_archive_users
           WHERE lower(username) LIKE $1 OR lower(name) LIKE $1 OR lower(description) LIKE $1
           ORDER BY lower(username) = $2 DESC, lower(username) LIKE $3 DESC, followers_count DESC, id LIMIT 20`,
          [`%${prefix}%`, prefix, `${prefix}%`],
        ),
    },
    {
      name: "most active user's timeline, page 1",
      archive: async () =>
        (await provider.userTweets(busiest.username, { size: 20 }, signal()))?.tweets.length ?? 0,
      straightforward: () =>
        tweetRows(
          `SELECT doc FROM social_archive_tweets WHERE author_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20`,
          [busiest.id],
        ),
    },
  ];
  cases.push({
    name: `most active user's timeline, page ${deepTimeline.page}`,
    archive: async () => (await timelinePage(pageAt(deepTimeline.cursor)))?.tweets.length ?? 0,
    straightforward: () =>
      tweetRows(
        `SELECT doc FROM social_archive_tweets WHERE author_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET $2`,
        [busiest.id, (deepTimeline.page - 1) * 20],
      ),
  });
  const results = [];
  for (const c of cases) results.push(await measure(c));

  const loaded: Record<string, () => Promise<number>> = {
    [`search "${word}", page 1`]: async () => (await searchPage(pageAt(undefined))).tweets.length,
    [`search "${word}", page ${deepSearch.page}`]: async () =>
      (await searchPage(pageAt(deepSearch.cursor))).tweets.length,
    "most active user's timeline, page 1": async () =>
      (await timelinePage(pageAt(undefined)))?.tweets.length ?? 0,
    [`most active user's timeline, page ${deepTimeline.page}`]: async () =>
      (await timelinePage(pageAt(deepTimeline.cursor)))?.tweets.length ?? 0,
  };
  const throughput = [];
  for (const [name, call] of Object.entries(loaded)) throughput.push(await pagesPerSecond(name, call));
  // The archive alone where nothing simpler answers the same (the caller's mentions through its session),
  // and its known slow spot: a phrase of common words.
  const alone: Record<string, () => Promise<unknown>> = {
    'search phrase "honest ledger", page 1': () =>
      provider.searchTweets({ phrase: "honest ledger" }, { size: 20 }, signal()),
    "search hashtag #x402 in March, page 1": () =>
      provider.searchTweets(
        { hashtags: ["x402"], since: "2026-03-01", until: "2026-04-01" },
        { size: 20 },
        signal(),
      ),
    "the first user's mentions, page 1": () =>
      provider.mentions({ authToken: corpusSessionToken(SEED) }, { size: 20 }, signal()),
  };
  const archiveOnly = [];
  for (const [name, call] of Object.entries(alone)) {
    const ms: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const at = performance.now();
      await call();
      ms.push(performance.now() - at);
    }
    archiveOnly.push({ case: name, p50_ms: round(percentile(ms, 50)), p99_ms: round(percentile(ms, 99)) });
  }

  const http = await paidAgainstUnpaid(db, busiest.username);

  log("");
  log(
    `bench:social: ${counts.tweet} tweets on ${SERVER ? "the PostgreSQL server" : "PGlite"}, ${os.cpus().length} cores`,
  );
  log(
    `  import: ${Math.round(counts.tweet / importSeconds)} tweets/s (${Math.round(records / importSeconds)} records/s)`,
  );
  log("  case                                      archive p50 / p99     straightforward p50 / p99   ratio");
  for (const r of results)
    log(
      `  ${r.case.padEnd(40)}  ${`${r.archive_p50_ms} / ${r.archive_p99_ms} ms`.padEnd(20)}  ${`${r.straightforward_p50_ms} / ${r.straightforward_p99_ms} ms`.padEnd(26)}  ${r.ratio}x`,
    );
  for (const r of archiveOnly) log(`  ${r.case.padEnd(40)}  ${r.p50_ms} / ${r.p99_ms} ms`);
  log(`  ${CLIENTS} clients at once, ${SECONDS} s each      pages/s   p50 / p99`);
  for (const r of throughput)
    log(`  ${r.case.padEnd(40)}  ${String(r.pages_per_second).padEnd(8)}  ${r.p50_ms} / ${r.p99_ms} ms`);
  log(
    `  /tweets/user over HTTP: unpaid ${http.unpaid_p50_ms} ms, paid ${http.paid_p50_ms} ms p50 (the payment adds ${http.added_p50_ms} ms)`,
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: "social",
      store: SERVER ? "postgres" : "pglite",
      tweets: counts.tweet,
      records,
      import_seconds: round(importSeconds),
      import_tweets_per_second: Math.round(counts.tweet / importSeconds),
      runs: RUNS,
      cases: results,
      archive_only: archiveOnly,
      throughput,
      http,
    })}\n`,
  );
} finally {
  await db.close();
  await cleanup();
}
