/**
 * `publish DIR` for real: the CLI writes a store's week as a static site; a static host that follows only
 * the site's own `_redirects` and `_headers` (as Netlify and Cloudflare Pages do) then answers every URL a
 * reader can reach from the home page, and every URL of the manifest, with the bytes and content type the
 * report service answers on the same store.
 *
 * The week's own `publish` is a child process, as a user runs it, and so is the `serve` the publish beside it
 * asks; what else the file runs ends on its own and runs in this process (runMain: the same `main`, what it
 * prints caught): the import that makes the store, the refusals, the publish beside the service (the service
 * is still another process, whose lock it meets as a child would) and `--replace`. A child each cost 2-3 CPU-s
 * more, loading the CLI and DuckDB anew.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { DuckDBInstance } from "@duckdb/node-api";
import type { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Analytics, openAnalytics } from "../../../src/analytics/duckdb.ts";
import { analyticsNotice } from "../../../src/analytics/notice.ts";
import { type Manifest, publishSite } from "../../../src/reports/publish/publish.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { addr, checkpoint, END, ndjsonFile, payment, repeat } from "../../helpers/data.ts";
import { runMain } from "../../helpers/in-process.ts";
import { runCli, startCli } from "../../helpers/process.ts";
import { staticHost } from "./static-host.ts";

const PUBLIC = "https://reports.test";
const m1 = addr("publish-m1");
const m2 = addr("publish-m2");
const m3 = addr("publish-m3");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-publish-"));
const data = path.join(tmp, "data");
const site = path.join(tmp, "site");
let manifest: Manifest;

/**
 * Runs `fn` with the report service on the store, in this process; closed after, since the CLI runs of
 * the tests need the store (DuckDB lets one process open it).
 */
async function withLive<T>(fn: (live: Hono) => Promise<T>): Promise<T> {
  const analytics: Analytics = await openAnalytics(loadConfig({ flags: { data } }));
  try {
    const service = new ReportService(analytics, { publicUrl: PUBLIC });
    return await fn(reportRoutes(service, { notice: () => analyticsNotice(analytics) }));
  } finally {
    analytics.close();
  }
}

/** A content type's media type, which a static host and the service must agree on (parameters may differ). */
const mediaType = (contentType: string | null) => (contentType ?? "").split(";")[0]?.trim().toLowerCase();

beforeAll(async () => {
  const records = [
    { type: "merchant", address: m1, name: "shop.example", claimed: true },
    ...[1, 2, 3, 4, 5].map((i) => payment({ payer: addr(`p-buyer${i}`), payTo: m1, amount: 1_250_000 * i })),
    ...[1, 2, 3].map((i) => payment({ payer: addr(`p-buyer${i}`), payTo: m2, amount: 700_000 })),
    // A farm, so that m2 is flagged and its evidence names a wallet.
    ...repeat(12, { payer: addr("p-farm"), payTo: m2, amount: 100 }, END - 5_000, END - 100),
    payment({ payer: addr("p-one"), payTo: m3, amount: 10_000 }),
    checkpoint(),
  ];
  expect((await runMain(["import", ndjsonFile(records), "--data", data])).code).toBe(0);
  const run = await runCli(["publish", site, "--data", data, "--public-url", PUBLIC]);
  expect(run.stderr).toMatch(
    /^x402-merchants: published Base's window ending at block 40000000 to .*: 3 merchants, \d+ files/,
  );
  expect(run.code).toBe(0);
  manifest = JSON.parse(fs.readFileSync(path.join(site, "manifest.json"), "utf8")) as Manifest;
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The same-site URLs a page links to (href and src), as paths with their query strings. */
function linksOf(html: string): string[] {
  return [...html.matchAll(/\b(?:href|src)="([^"#]*)/g)]
    .map((m) => (m[1] ?? "").replaceAll("&amp;", "&"))
    .map((u) => (u.startsWith(`${PUBLIC}/`) ? u.slice(PUBLIC.length) : u))
    .filter((u) => u.startsWith("/"));
}

describe("publish DIR", () => {
  it("serves, from static files, every URL a reader reaches from the home page as the service answers it", async () => {
    const host = staticHost(site);
    const seen = await withLive(async (live) => {
      const seen = new Set<string>();
      const queue = ["/"];
      while (queue.length > 0) {
        const url = queue.shift() as string;
        if (seen.has(url)) continue;
        seen.add(url);
        const [expected, got] = [await live.request(url), host(url)];
        expect(expected.status, url).toBe(200);
        expect(got.status, url).toBe(200);
        expect(mediaType(got.contentType), url).toBe(mediaType(expected.headers.get("content-type")));
        const body = Buffer.from(await expected.arrayBuffer());
        expect(got.body.equals(body), `${url}: the published file differs from the service's answer`).toBe(
          true,
        );
        if (got.contentType.startsWith("text/html")) queue.push(...linksOf(body.toString("utf8")));
      }
      return seen;
    });
    // Every merchant's page and badge was reached by links alone, and the flagged one's evidence (some
    // links carry the window's end block, which a static host ignores: its one week is that window).
    const reached = new Set([...seen].map((url) => url.split("?")[0]));
    for (const m of [m1, m2, m3]) {
      for (const url of [`/reports/base/${m}`, `/badges/base/${m}.svg`, `/v1/reports/base/${m}`])
        expect(reached, url).toContain(url);
    }
    expect(reached).toContain(`/reports/base/${m2}/evidence`);
    expect(reached).toContain(`/v1/reports/base/${m2}/evidence`);
    expect(reached).toContain("/v1/datasets/base/reports.csv");
    // The flag feed, whole and the flagged merchant's part its page links, and its dataset.
    for (const url of ["/v1/flags/base", `/v1/flags/base/merchants/${m2}`, "/v1/datasets/base/flags.ndjson"])
      expect(reached, url).toContain(url);
  });

  it("answers every file of the manifest as the service does, and its checksums hold", async () => {
    const host = staticHost(site);
    const served = manifest.files.filter((f) => !/\.(gz|parquet)$/.test(f.file));
    // Each merchant's five files; the home page, screens, leaderboard, schema and four datasets; the flag
    // feed and the flagged merchant's part of it.
    expect(served.length).toBe(3 * 5 + 8 + 2);
    await withLive(async (live) => {
      for (const f of served) {
        const expected = await live.request(f.path);
        const got = host(f.path);
        expect(f.content_type, f.path).toBe(expected.headers.get("content-type"));
        expect(mediaType(got.contentType), f.path).toBe(mediaType(f.content_type));
        expect(got.body.equals(Buffer.from(await expected.arrayBuffer())), f.path).toBe(true);
      }
    });
    // What a host would not guess is said in _headers: the datasets' types and licence, CORS on the API.
    expect(host("/v1/datasets/base/reports.ndjson").headers).toMatchObject({
      "content-type": "application/x-ndjson; charset=utf-8",
      link: '<https://creativecommons.org/licenses/by/4.0/>; rel="license"',
      "access-control-allow-origin": "*",
    });
    const sums = fs.readFileSync(path.join(site, "SHA256SUMS"), "utf8").trim().split("\n");
    expect(sums).toHaveLength(manifest.files.length);
    for (const f of manifest.files) {
      const bytes = fs.readFileSync(path.join(site, f.file));
      expect(bytes.length).toBe(f.bytes);
      expect(crypto.createHash("sha256").update(bytes).digest("hex")).toBe(f.sha256);
      expect(sums).toContain(`${f.sha256}  ${f.file}`);
    }
    expect(manifest).toMatchObject({ version: "0.1.0", merchants: 3, window: { end_block: END } });
    expect(manifest.license).toBe("https://creativecommons.org/licenses/by/4.0/");
  });

  it("holds the open dataset as gzipped NDJSON and as Parquet, the same records as reports.ndjson", async () => {
    const dir = path.join(site, "v1", "datasets", "base");
    const ndjson = fs.readFileSync(path.join(dir, "reports.ndjson"));
    expect(zlib.gunzipSync(fs.readFileSync(path.join(dir, "reports.ndjson.gz"))).equals(ndjson)).toBe(true);
    const records = ndjson
      .toString("utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { address: string; real_usd: number; tx: number });
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT address, real_usd, tx, flags.tiny_repeat.tx AS tiny FROM '${path.join(dir, "reports.parquet")}' ORDER BY address`,
      );
      const rows = reader.getRowObjectsJson() as {
        address: string;
        real_usd: number;
        tx: string;
        tiny: string | null;
      }[];
      const sorted = [...records].sort((a, b) => (a.address < b.address ? -1 : 1));
      expect(rows.map((r) => [r.address, r.real_usd, Number(r.tx)])).toEqual(
        sorted.map((r) => [r.address, r.real_usd, r.tx]),
      );
      expect(rows.find((r) => r.address === m2)?.tiny).toBe("12");
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe("the flag feed in the published week", () => {
  it("holds flags.ndjson and flags.parquet, the same rows, with their checksums in the manifest", async () => {
    const dir = path.join(site, "v1", "datasets", "base");
    const lines = fs
      .readFileSync(path.join(dir, "flags.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { wallet: string; merchant: string; kind: string; tx: number });
    expect(lines.map((l) => [l.wallet, l.merchant, l.kind, l.tx])).toEqual([
      [addr("p-farm"), m2, "tiny_repeat", 12],
    ]);
    for (const name of ["flags.ndjson", "flags.parquet"]) {
      const listed = manifest.files.find((f) => f.file === `v1/datasets/base/${name}`);
      const bytes = fs.readFileSync(path.join(dir, name));
      expect(listed?.sha256, name).toBe(crypto.createHash("sha256").update(bytes).digest("hex"));
    }
    expect(manifest.files.find((f) => f.file.endsWith("flags.parquet"))?.content_type).toBe(
      "application/vnd.apache.parquet",
    );
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT wallet, merchant, kind, tx, cluster FROM '${path.join(dir, "flags.parquet")}'`,
      );
      expect(reader.getRowObjectsJson()).toEqual([
        { wallet: addr("p-farm"), merchant: m2, kind: "tiny_repeat", tx: "12", cluster: null },
      ]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe("publish beside a running service", () => {
  it("asks the service that holds the store, and writes the same site", async () => {
    const serve = startCli(["serve", "--port", "0", "--data", data, "--public-url", PUBLIC]);
    await serve.line;
    const beside = path.join(tmp, "beside");
    const run = await runMain(["publish", beside, "--data", data, "--public-url", PUBLIC]);
    expect(run.code, run.stderr).toBe(0);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    const again = JSON.parse(fs.readFileSync(path.join(beside, "manifest.json"), "utf8")) as Manifest;
    // The same files to the byte, through the service as from the store itself.
    expect(again.files.map((f) => [f.file, f.sha256])).toEqual(manifest.files.map((f) => [f.file, f.sha256]));
  }, 60_000);
});

describe("publish refuses, and leaves nothing half-written", () => {
  const leftovers = () => fs.readdirSync(tmp).filter((f) => /\.(publishing|replaced)-/.test(f));

  it("a usage mistake exits 2 in one line, and the site stays as it was", async () => {
    const before = fs.readFileSync(path.join(site, "manifest.json"), "utf8");
    for (const [args, message] of [
      [["publish", site], /is not empty: --replace/],
      [["publish"], /publish takes exactly one DIR/],
      [["publish", path.join(tmp, "x"), "--end-block", "abc"], /--end-block must be a block number/],
      [["publish", path.join(site, "manifest.json")], /exists and is not a directory/],
    ] as const) {
      const run = await runMain([...args, "--data", data]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
    }
    // A week the store does not have: exit 1, and no directory at all.
    const missing = path.join(tmp, "missing");
    const run = await runMain(["publish", missing, "--end-block", String(END + 1), "--data", data]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(fs.existsSync(missing)).toBe(false);
    expect(fs.readFileSync(path.join(site, "manifest.json"), "utf8")).toBe(before);
    expect(leftovers()).toEqual([]);
  });

  it("a request that fails half way through leaves no directory behind", async () => {
    const target = path.join(tmp, "half");
    await withLive(async (live) => {
      let asked = 0;
      const failing = async (url: string) =>
        ++asked === 12 ? new Response("boom", { status: 500 }) : live.request(url);
      await expect(
        publishSite(failing, target, { version: "test", license: "https://example.org/l" }),
      ).rejects.toThrow(/answered .* with 500/);
      expect(asked).toBeGreaterThanOrEqual(12);
    });
    expect(fs.existsSync(target)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it("--replace swaps the old site for the new one whole", async () => {
    const other = path.join(tmp, "other");
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, "stale.html"), "old");
    const run = await runMain(["publish", other, "--replace", "--data", data, "--public-url", PUBLIC]);
    expect(run.code, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(other, "stale.html"))).toBe(false);
    const again = JSON.parse(fs.readFileSync(path.join(other, "manifest.json"), "utf8")) as Manifest;
    expect(again.files.map((f) => [f.file, f.sha256])).toEqual(manifest.files.map((f) => [f.file, f.sha256]));
    expect(leftovers()).toEqual([]);
  });
});
