/**
 * The readers of `bench/readers.ts`, in a process of their own so that the server's CPU is the server's:
 * `clients` readers, each on its own keep-alive connection, ask for `urls` round-robin (each starting at
 * its own place in the list) for `seconds`, and each request's time to the last byte of its answer is
 * kept by kind. With `revalidate`, a URL whose last answer carried an ETag is asked with `If-None-Match`,
 * as a browser, CDN or badge proxy revalidates.
 *
 * Takes its run as one JSON argument (`LoadRun`); prints one JSON line (`LoadResult`).
 */
import { Pool } from "undici";

export interface LoadRun {
  origin: string;
  urls: { kind: string; path: string }[];
  clients: number;
  seconds: number;
  revalidate: boolean;
  /** Ask for every URL once first, one at a time, uncounted. */
  warm: boolean;
}

export interface KindFigures {
  requests: number;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  kinds: Record<string, KindFigures>;
  statuses: Record<string, number>;
  /** A few answers that were neither 200 nor an expected 304, as `status path: body`. */
  unexpected: string[];
  /** URLs whose answers carried an ETag. */
  withEtag: number;
  cpuSeconds: number;
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number);

async function main(run: LoadRun): Promise<LoadResult> {
  const pool = new Pool(run.origin, {
    connections: run.clients,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 300_000,
    bodyTimeout: 300_000,
  });
  const etags = new Map<string, string>();
  const times = new Map<string, number[]>(run.urls.map((u) => [u.kind, []]));
  const statuses: Record<string, number> = {};
  const unexpected: string[] = [];

  const ask = async (path: string) => {
    const etag = run.revalidate ? etags.get(path) : undefined;
    const started = performance.now();
    const answer = await pool.request({
      path,
      method: "GET",
      headers: etag ? { "if-none-match": etag } : {},
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    const ms = performance.now() - started;
    const sent = answer.headers.etag;
    if (typeof sent === "string") etags.set(path, sent);
    return { status: answer.statusCode, body, ms, revalidated: etag !== undefined };
  };

  if (run.warm) for (const u of run.urls) await ask(u.path);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + run.seconds * 1000;
  let requests = 0;
  const reader = async (client: number) => {
    let i = Math.floor((client * run.urls.length) / run.clients);
    while (performance.now() < deadline) {
      const u = run.urls[i++ % run.urls.length] as LoadRun["urls"][number];
      const { status, body, ms, revalidated } = await ask(u.path);
      requests++;
      times.get(u.kind)?.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
      const expected = status === 200 || (status === 304 && revalidated);
      if (!expected && unexpected.length < 8)
        unexpected.push(`${status} ${u.path}: ${body.toString("utf8", 0, 200).replace(/\s+/g, " ")}`);
    }
  };
  await Promise.all(Array.from({ length: run.clients }, (_, c) => reader(c)));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await pool.close();

  const kinds: Record<string, KindFigures> = {};
  times.set("all", [...times.values()].flat());
  for (const [kind, list] of times) {
    const sorted = Float64Array.from(list).sort();
    kinds[kind] = {
      requests: sorted.length,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    };
  }
  return {
    requests,
    seconds,
    kinds,
    statuses,
    unexpected,
    withEtag: etags.size,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

const run = JSON.parse(process.argv[2] ?? "") as LoadRun;
process.stdout.write(`${JSON.stringify(await main(run))}\n`);
