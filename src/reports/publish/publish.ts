/**
 * `x402-merchants publish DIR`: a week's whole public output as static files, so that any static host,
 * CDN or object store serves readers at any scale while the service stays the writer.
 *
 * Every file is what the report service answers at its URL: asked of its own routes (in this process or from
 * the running service), or, for each merchant's five files when the store is at hand, rendered by the
 * routes' own functions from documents read in one pass (merchant-files.ts; the test holds both ways to the
 * routes' bytes). The flag feed's pages are asked of the routes, whole and for each flagged merchant (its
 * page links its part); its rows are a dataset as NDJSON and Parquet beside the reports'. The site is built in a sibling directory and renamed into place once whole: a failure
 * leaves no partial site, and a site it replaces is served until the new one is complete.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import zlib from "node:zlib";
import { AppError } from "../../common/errors.ts";
import type { FeedAttestation } from "../attest/field.ts";
import type { FlagFeedDocument, FlagRecord, LeaderboardDocument, MerchantDocuments } from "../model.ts";
import { RANKING_PAGE_SIZE } from "../render/home-page.ts";
import { rankingPath } from "../render/page-parts.ts";
import { SCREENS_PATH } from "../screens/index.ts";
import { leaderboardPath } from "../serve/routes/leaderboard.ts";
import { flagsPath } from "../week/flags.ts";
import { fileOf, headersFile, redirectsFile, type SiteFile } from "./layout.ts";
import { merchantFiles } from "./merchant-files.ts";
import { ndjsonToParquet } from "./parquet.ts";

/** The report service's routes, however they are reached. */
export type SiteSource = (pathAndQuery: string) => Promise<Response>;

export interface PublishOptions {
  /** The chain whose week it publishes (its slug); default Base. */
  chain?: string;
  /** The window to publish, by its end block; default the latest. */
  endBlock?: number;
  /** The project's version, for the manifest. */
  version: string;
  /** The licence the reports and datasets are published under. */
  license: string;
  /** Requests in flight at once. */
  concurrency?: number;
  /**
   * Every merchant's documents of the window in batches, where the store is at hand: its five files are then
   * rendered from them (merchant-files.ts) instead of asked for one by one, at about 15 ms a request.
   */
  merchants?: (endBlock: number) => Promise<{
    notice: string | undefined;
    /** The chains the store holds data of, which the pages link (as the routes render them). */
    chains?: readonly string[];
    batches: AsyncIterable<MerchantDocuments[]>;
  }>;
}

/** A published file, as the manifest lists it. */
export interface ManifestFile {
  path: string;
  file: string;
  bytes: number;
  sha256: string;
  content_type: string;
}

export interface Manifest {
  generated_at: string;
  version: string;
  license: string;
  window: { start_block: number; end_block: number; [more: string]: unknown };
  merchants: number;
  /** In an attested week: the attestation, and the hash of `flags.ndjson` it states (docs/attestation.md). */
  attestation?: FeedAttestation;
  files: ManifestFile[];
}

const DATASETS = ["reports.ndjson", "reports.csv", "evidence.ndjson", "flags.ndjson"];

/** `flags.parquet`'s columns: declared, so that a week without flags still has the file, and `cluster` its type. */
const FLAG_COLUMNS = {
  chain: "VARCHAR",
  end_block: "BIGINT",
  wallet: "VARCHAR",
  cluster: "VARCHAR",
  merchant: "VARCHAR",
  merchant_name: "VARCHAR",
  kind: "VARCHAR",
  reason: "VARCHAR",
  tx: "BIGINT",
  usd: "DOUBLE",
  first_block: "BIGINT",
  last_block: "BIGINT",
  methodology_version: "VARCHAR",
  evidence: "VARCHAR",
} satisfies Record<keyof FlagRecord, string>;

/** Writes the site into `dir` (which must not exist, or be empty) and returns its manifest. */
export async function publishSite(
  source: SiteSource,
  dir: string,
  options: PublishOptions,
): Promise<Manifest> {
  const target = path.resolve(dir);
  const building = `${target}.publishing-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  fs.mkdirSync(building, { recursive: true });
  try {
    const manifest = await build(source, building, options);
    swapIn(building, target);
    return manifest;
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    throw error;
  }
}

async function build(source: SiteSource, root: string, options: PublishOptions): Promise<Manifest> {
  const chain = options.chain ?? "base";
  // One window throughout, even if the indexer moves on while the site is written.
  const board = JSON.parse(await text(source, leaderboardPath(1, chain), options.endBlock)) as Pick<
    LeaderboardDocument,
    "page" | "totals"
  > & { window: Manifest["window"] };
  const end = board.window.end_block;
  const written: ManifestFile[] = [];
  const write = (file: SiteFile, bytes: Uint8Array) => {
    const at = path.join(root, ...file.file.split("/"));
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.writeFileSync(at, bytes);
    written.push({
      path: file.path,
      file: file.file,
      bytes: bytes.byteLength,
      sha256: crypto.createHash("sha256").update(bytes).digest("hex"),
      content_type: file.contentType,
    });
  };
  // Written as it arrives, hashed on the way: a dataset of a large week is gigabytes.
  const writeStream = async (file: SiteFile, body: Readable, through?: Transform) => {
    const at = path.join(root, ...file.file.split("/"));
    fs.mkdirSync(path.dirname(at), { recursive: true });
    const hash = crypto.createHash("sha256");
    let bytes = 0;
    const count = new Transform({
      transform(chunk: Buffer, _, done) {
        hash.update(chunk);
        bytes += chunk.byteLength;
        done(null, chunk);
      },
    });
    await (through
      ? pipeline(body, through, count, fs.createWriteStream(at))
      : pipeline(body, count, fs.createWriteStream(at)));
    written.push({
      path: file.path,
      file: file.file,
      bytes,
      sha256: hash.digest("hex"),
      content_type: file.contentType,
    });
  };
  const publish = async (urlPath: string): Promise<void> => {
    const response = await source(withEnd(urlPath, end));
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      throw new AppError(
        502,
        "publish_failed",
        `the report service answered ${urlPath} with ${response.status}`,
      );
    }
    const contentType = response.headers.get("content-type") ?? "application/octet-stream";
    const file = { path: urlPath, file: fileOf(urlPath, contentType), contentType };
    await writeStream(file, Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
  };
  // The merchants whose pages link their part of the flag feed.
  const flagged: string[] = [];

  const datasets = `/v1/datasets/${chain}`;
  const ndjson = path.join(root, "v1", "datasets", chain, "reports.ndjson");
  await publish(`${datasets}/reports.ndjson`);
  const paths = [
    rankingPath(1, chain),
    SCREENS_PATH,
    leaderboardPath(1, chain),
    ...pagesAfterFirst(board.page.pages).map((n) => leaderboardPath(n, chain)),
    ...pagesAfterFirst(Math.ceil(board.totals.merchants / RANKING_PAGE_SIZE)).map((n) =>
      rankingPath(n, chain),
    ),
    "/v1/schema/report.json",
    ...DATASETS.filter((d) => d !== "reports.ndjson").map((d) => `${datasets}/${d}`),
  ];
  if (options.merchants) {
    const { notice, chains, batches } = await options.merchants(end);
    const encoder = new TextEncoder();
    for await (const batch of batches) {
      for (const m of batch) {
        if ((m.details.wallets ?? 0) > 0) flagged.push(m.report.address);
        for (const f of merchantFiles(m, notice, chains))
          write({ ...f, file: fileOf(f.path, f.contentType) }, encoder.encode(f.body));
      }
    }
  } else {
    for await (const line of readline.createInterface({ input: fs.createReadStream(ndjson) })) {
      if (line === "") continue;
      const { address: a, flags } = JSON.parse(line) as { address: string; flags: object };
      if (Object.keys(flags).length > 0) flagged.push(a);
      paths.push(
        `/v1/reports/${chain}/${a}`,
        `/v1/reports/${chain}/${a}/evidence`,
        `/reports/${chain}/${a}`,
        `/reports/${chain}/${a}/evidence`,
        `/badges/${chain}/${a}.svg`,
      );
    }
  }
  await inPool(paths, options.concurrency ?? 4, publish);
  const pages = { source, end, write, publish };
  const feed = await publishPages(pages, (n) => flagsPath(n, null, chain));
  await inPool(flagged, options.concurrency ?? 4, (m) => publishPages(pages, (n) => flagsPath(n, m, chain)));

  // The open dataset in two more forms: gzipped NDJSON for any tool, Parquet for analysts' tools.
  await writeStream(
    {
      path: `${datasets}/reports.ndjson.gz`,
      file: `${datasets.slice(1)}/reports.ndjson.gz`,
      contentType: "application/gzip",
    },
    fs.createReadStream(ndjson),
    zlib.createGzip({ level: 9 }),
  );
  if (board.totals.merchants > 0) written.push(await parquetOf(root, chain, "reports"));
  written.push(await parquetOf(root, chain, "flags", FLAG_COLUMNS));

  const sites = written.map((f) => ({ path: f.path, file: f.file, contentType: f.content_type }));
  const hostFiles: [string, string][] = [
    ["_headers", headersFile(options.license)],
    ["_redirects", redirectsFile(sites)],
  ];
  for (const [name, body] of hostFiles) fs.writeFileSync(path.join(root, name), body);

  written.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const manifest: Manifest = {
    generated_at: new Date().toISOString(),
    version: options.version,
    license: options.license,
    window: board.window,
    merchants: board.totals.merchants,
    // An attested week's: every report in the site carries its proof; this says what the feed hashes to.
    ...(feed.attestation ? { attestation: feed.attestation } : {}),
    files: written,
  };
  fs.writeFileSync(path.join(root, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.writeFileSync(path.join(root, "SHA256SUMS"), written.map((f) => `${f.sha256}  ${f.file}\n`).join(""));
  return manifest;
}

/**
 * A JSON document in pages (the flag feed, whole or one merchant's) from the source: page 1, which says how
 * many there are, then the rest.
 */
async function publishPages(
  site: {
    source: SiteSource;
    end: number;
    write: (file: SiteFile, bytes: Uint8Array) => void;
    publish: (urlPath: string) => Promise<void>;
  },
  pathOf: (n: number) => string,
): Promise<Pick<FlagFeedDocument, "attestation">> {
  const first = pathOf(1);
  const response = await site.source(withEnd(first, site.end));
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) {
    throw new AppError(502, "publish_failed", `the report service answered ${first} with ${response.status}`);
  }
  const contentType = response.headers.get("content-type") ?? "application/json";
  site.write({ path: first, file: fileOf(first, contentType), contentType }, bytes);
  const document = JSON.parse(new TextDecoder().decode(bytes)) as Pick<
    FlagFeedDocument,
    "page" | "attestation"
  >;
  await inPool(pagesAfterFirst(document.page.pages).map(pathOf), 1, site.publish);
  return document;
}

/** The dataset `name`.ndjson of the site at `root` as Parquet beside it (parquet.ts), as the manifest lists it. */
async function parquetOf(
  root: string,
  chain: string,
  name: string,
  columns?: Record<string, string>,
): Promise<ManifestFile> {
  const dir = path.join(root, "v1", "datasets", chain);
  const parquet = path.join(dir, `${name}.parquet`);
  await ndjsonToParquet(path.join(dir, `${name}.ndjson`), parquet, columns);
  const hash = crypto.createHash("sha256");
  await pipeline(fs.createReadStream(parquet), hash);
  return {
    path: `/v1/datasets/${chain}/${name}.parquet`,
    file: `v1/datasets/${chain}/${name}.parquet`,
    bytes: fs.statSync(parquet).size,
    sha256: hash.digest("hex"),
    content_type: "application/vnd.apache.parquet",
  };
}

/** Puts the finished site at `target`, replacing what is there only now that the new one is whole. */
function swapIn(building: string, target: string): void {
  if (!fs.existsSync(target)) {
    fs.renameSync(building, target);
    return;
  }
  const old = `${target}.replaced-${process.pid}`;
  fs.rmSync(old, { recursive: true, force: true });
  fs.renameSync(target, old);
  fs.renameSync(building, target);
  fs.rmSync(old, { recursive: true, force: true });
}

async function text(source: SiteSource, urlPath: string, endBlock?: number): Promise<string> {
  const response = await source(endBlock === undefined ? urlPath : withEnd(urlPath, endBlock));
  const body = await response.text();
  if (response.status !== 200) {
    let message = `the report service answered ${urlPath} with ${response.status}`;
    try {
      message = (JSON.parse(body) as { error: { message: string } }).error.message;
    } catch {
      // Not the service's JSON error: the status says it.
    }
    throw new AppError(response.status === 404 ? 404 : 502, "publish_failed", message);
  }
  return body;
}

const withEnd = (urlPath: string, end: number) => `${urlPath}?end_block=${end}`;

/** Pages 2 to `pages`: page 1 of the leaderboard and of the ranking is at the bare path. */
const pagesAfterFirst = (pages: number) => Array.from({ length: Math.max(0, pages - 1) }, (_, i) => i + 2);

/**
 * Runs `work` on every item, `limit` at a time. The first failure stops the rest from starting, and is
 * thrown once every worker has stopped: none may still be writing when the caller removes the directory.
 */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      await work(item).catch((error: unknown) => {
        failure ??= { error };
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}
