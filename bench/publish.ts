/**
 * Publish benchmark (`npm run bench:publish [-- --payments N]`): how long `publish DIR` takes to write a
 * week's static site, in the same run on the same store, three ways: in bulk (the store free: every
 * merchant's documents read at once and its files rendered from them), per URL in process (one request to
 * the service's routes a file), and over HTTP from the running report service (the store held by `serve`,
 * where publish fetches every URL as a mirroring crawler such as `wget --mirror` would).
 *
 * A synthetic week (scripts/synthetic.ts; 1M payments and 5,000 merchants by default) is imported into a
 * fresh store in .bench/publish and its reports built first; neither is timed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_END_BLOCK, DEFAULT_END_TIME, writeSynthetic } from "../scripts/synthetic.ts";
import { Analytics } from "../src/analytics/duckdb.ts";
import { importNdjson } from "../src/analytics/import.ts";
import { listen } from "../src/common/listen.ts";
import {
  LICENSE_URL,
  type Manifest,
  publishSite,
  ReportService,
  reportRoutes,
  type SiteSource,
} from "../src/reports/index.ts";

const argv = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Number(argv[at + 1]);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} takes a positive integer`);
  return value;
};
const payments = flag("payments", 1_000_000);
const merchants = flag("merchants", Math.max(30, Math.round(payments / 200)));
const buyers = flag("buyers", Math.max(200, Math.round(payments / 20)));

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const work = path.join(root, ".bench", "publish");
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const line = (text = "") => process.stdout.write(`${text}\n`);

line(
  `x402-merchants publish benchmark: ${payments.toLocaleString("en-US")} payments, ${merchants} merchants`,
);
const file = path.join(work, "week.ndjson");
await writeSynthetic(file, {
  seed: 1,
  merchants,
  buyers,
  payments,
  endBlock: DEFAULT_END_BLOCK,
  endTime: DEFAULT_END_TIME,
});
const analytics = await Analytics.open({
  dataDir: path.join(work, "store"),
  memoryLimit: "1GB",
  threads: null,
});
await importNdjson(analytics, file);
fs.rmSync(file);
const service = new ReportService(analytics, { publicUrl: "https://reports.example" });
let t0 = performance.now();
await service.build();
line(`reports    built in ${((performance.now() - t0) / 1000).toFixed(2)} s (not counted)`);
const routes = reportRoutes(service);

const options = { version: "bench", license: LICENSE_URL };
async function timed(
  name: string,
  source: SiteSource,
  bulk = false,
): Promise<{ seconds: number; manifest: Manifest }> {
  const dir = path.join(work, name);
  t0 = performance.now();
  const manifest = await publishSite(source, dir, {
    ...options,
    ...(bulk && {
      merchants: async (end: number) => ({
        notice: undefined,
        batches: (await service.readMerchants(end)).batches,
      }),
    }),
  });
  const seconds = (performance.now() - t0) / 1000;
  const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
  line(
    `${name.padEnd(10)} ${manifest.files.length.toLocaleString("en-US")} files, ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(2)} s: ${Math.round(manifest.files.length / seconds).toLocaleString("en-US")} files/s`,
  );
  return { seconds, manifest };
}

const inProcess = async (p: string) => routes.request(p);
const bulk = await timed("bulk", inProcess, true);
const local = await timed("per-url", inProcess);
const server = await listen(routes.fetch, "127.0.0.1", 0);
const remote = await timed("over-http", (p) => fetch(`${server.url}${p}`));
await server.close();
analytics.close();

const sums = (m: Manifest) => m.files.map((f) => `${f.file} ${f.sha256}`).join("\n");
const same = sums(bulk.manifest) === sums(local.manifest) && sums(local.manifest) === sums(remote.manifest);
line(`same files ${same ? "yes" : "NO"}: the three ways wrote the same bytes`);
line(
  `ratios     per URL / bulk ${(local.seconds / bulk.seconds).toFixed(1)}, over HTTP / bulk ${(remote.seconds / bulk.seconds).toFixed(1)}`,
);
line(`machine    ${os.cpus()[0]?.model ?? "?"} x ${os.cpus().length}, Node ${process.version}`);
fs.rmSync(work, { recursive: true, force: true });
if (!same) process.exitCode = 1;
