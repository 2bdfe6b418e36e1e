/**
 * How the read-only commands (`report`, `leaderboard`, `simulate --check`) reach the reports. DuckDB lets
 * one process open the analytics database, and reading writes too (a window's reports are stored when
 * built), so a reader cannot simply open it beside another process. Instead:
 *
 * - the database is free: open it here;
 * - a report service holds it (`serve`, the demo; recorded in `<dataDir>/report-service.json`): ask it
 *   over HTTP, and print what the local path would print;
 * - another command holds it (a `report`, `index`): wait for it, up to `--wait` seconds, then say who
 *   holds it and what to do.
 */
import { type Analytics, openAnalytics } from "../analytics/duckdb.ts";
import { analyticsNotice } from "../analytics/notice.ts";
import { AnalyticsBusyError } from "../analytics/store-errors.ts";
import { storeChains } from "../chain/chains.ts";
import { AppError, UsageError } from "../common/errors.ts";
import { fetchWithin } from "../common/fetch-within.ts";
import { sleep } from "../common/sleep.ts";
import { timeoutSignal } from "../common/timeout-signal.ts";
import { DEFAULT_PUBLIC_URL } from "../config/ports.ts";
import { readServiceRecord, type ServiceRecord } from "../config/service-record.ts";
import {
  chainsWithData,
  type EvidenceDocument,
  type FlagFeedDocument,
  flagFeedDocument,
  flagsPath,
  type LeaderboardDocument,
  leaderboardDocument,
  leaderboardPath,
  type MerchantDocuments,
  type Report,
  type ReportAnswers,
  ReportService,
  type ReportWindow,
  reportRoutes,
  resolveWindow,
  type SealedWeeksDocument,
  type SearchDocument,
  searchPath,
  type WalletHistory,
  walletsRoot,
} from "../reports/index.ts";
import type { Config } from "../services/index.ts";
import { configFrom, parseWaitMs } from "./flag-values.ts";
import { DEFAULT_WAIT_SECONDS, type Flags } from "./flags.ts";

/** A report build on a large store takes seconds; a service that answers nothing for this long is stuck. */
const REQUEST_TIMEOUT_MS = 5 * 60_000;
const PROBE_TIMEOUT_MS = 2_000;
/** Two readers at once wait well under a second for each other: only a longer wait is worth a line. */
const NOTICE_AFTER_MS = 1_000;

/** The reports, read from the database in this process or from the report service that holds it. */
/** What the MCP tools answer (`ReportAnswers`), and what the CLI's readers read besides. */
export interface Reader extends ReportAnswers {
  /** The answers of another chain (by slug) than Base's, which the reader's own are. */
  onChain(chain: string): ReportAnswers;
  /**
   * Every merchant's report of the window ending at `endBlock` (default: the latest checkpoint), on `chain`
   * (a slug; default Base).
   */
  reports(endBlock?: number, chain?: string): Promise<{ window: ReportWindow; reports: Report[] }>;
  /** The end block of the latest window on `chain` (default Base). */
  latestBlock(chain?: string): Promise<number>;
  /** A GET of one of the report service's routes (path and query), answered as the service answers it. */
  route(pathAndQuery: string): Promise<Response>;
  /** Where the store is open here: every merchant's documents of a window, a batch at a time, and the pages' notice. */
  merchants?(
    endBlock: number,
    chain?: string,
  ): Promise<{
    notice: string | undefined;
    chains: readonly string[];
    batches: AsyncIterable<MerchantDocuments[]>;
  }>;
}

/** Runs `fn` with a reader of the configured data directory: see the top of this file. */
export async function withReader<T>(flags: Flags, fn: (reader: Reader) => Promise<T>): Promise<T> {
  const config = configFrom(flags);
  const waitMs = parseWaitMs(flags.wait, DEFAULT_WAIT_SECONDS);
  // Page and badge URLs are this command's, wherever the figures come from.
  const publicUrl = config.publicUrl ?? DEFAULT_PUBLIC_URL;
  const opened = await openOrFindService(config, waitMs);
  if ("service" in opened) return fn(remoteReader(opened.service, publicUrl));
  try {
    return await fn(localReader(opened.analytics, publicUrl));
  } finally {
    opened.analytics.close();
  }
}

async function openOrFindService(
  config: Config,
  waitMs: number,
): Promise<{ analytics: Analytics } | { service: ServiceRecord }> {
  const started = Date.now();
  const deadline = started + waitMs;
  let pause = 50;
  let told = false;
  for (;;) {
    let busy: AnalyticsBusyError;
    try {
      return { analytics: await openAnalytics(config) };
    } catch (error) {
      if (!(error instanceof AnalyticsBusyError)) throw error;
      busy = error;
    }
    // Only the holder's own record counts: a record left by a crash may name a reused PID.
    const service = readServiceRecord(config.dataDir);
    const serving = service?.pid === busy.holder.pid ? service : undefined;
    if (serving && (await answers(serving))) return { service: serving };
    const left = deadline - Date.now();
    if (left <= 0) throw held(config, busy, waitMs, serving);
    if (!told && Date.now() - started >= NOTICE_AFTER_MS) {
      process.stderr.write(
        `x402-merchants: the analytics database is in use by PID ${busy.holder.pid} (${busy.holder.program}); waiting up to ${waitMs / 1000} s for it (--wait)\n`,
      );
      told = true;
    }
    await sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, 500);
  }
}

/** Whether a recorded service answers: it may be stopping, or its PID may be another program's now. */
async function answers(service: ServiceRecord): Promise<boolean> {
  try {
    const response = await fetchWithin(`${service.url}/healthz`, { signal: timeoutSignal(PROBE_TIMEOUT_MS) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function held(config: Config, busy: AnalyticsBusyError, waitMs: number, service?: ServiceRecord): AppError {
  const { pid, program } = busy.holder;
  const what = `the analytics database in ${config.dataDir} is still in use by PID ${pid} (${program}) after ${waitMs / 1000} s`;
  return new AnalyticsBusyError(
    service
      ? `${what}, and its report service at ${service.url} does not answer: it may be starting or stopping; --wait SECONDS waits longer`
      : `${what}: stop that process, or run \`x402-merchants serve\` on this data directory instead (with --rpc it indexes too), and report and leaderboard will ask it; --wait SECONDS waits longer`,
    busy.holder,
  );
}

/** A chain's answers from its report service in this process, its documents naming `publicUrl`. */
function localAnswers(service: ReportService, publicUrl: string): ReportAnswers {
  return {
    report: async (address, endBlock) => (await service.report(address, endBlock)).report,
    evidence: (address, endBlock) => service.evidence(address, endBlock),
    leaderboard: async (endBlock, page) =>
      leaderboardDocument(await service.leaderboard(endBlock, { page }), publicUrl),
    search: (query, endBlock) => service.search(query, endBlock),
    flags: async (endBlock, page, merchant) =>
      flagFeedDocument(await service.flags(endBlock, { page, merchant }), publicUrl),
    wallet: (address) => service.wallet(address),
    weeks: () => service.weeks(),
  };
}

function localReader(analytics: Analytics, publicUrl: string): Reader {
  // Every chain's routes, as `serve` answers them; the whole-window reads (publish) are Base's.
  const services = storeChains.list.map((chain) => new ReportService(analytics, { publicUrl, chain }));
  const service = services[0] as ReportService;
  const serviceOf = (chain: string): ReportService => {
    const found = services.find((s) => s.chain.slug === chain);
    if (!found) throw new UsageError(`no chain "${chain}": ${services.map((s) => s.chain.slug).join(", ")}`);
    return found;
  };
  const routes = reportRoutes(services, { notice: () => analyticsNotice(analytics), unlogged: true });
  return {
    route: async (pathAndQuery) => routes.request(pathAndQuery),
    merchants: async (endBlock, chain = "base") => ({
      notice: await analyticsNotice(analytics),
      chains: await chainsWithData(service),
      batches: (await (services.find((s) => s.chain.slug === chain) ?? service).readMerchants(endBlock))
        .batches,
    }),
    ...localAnswers(service, publicUrl),
    onChain: (chain) => localAnswers(serviceOf(chain), publicUrl),
    reports: (endBlock, chain = "base") => serviceOf(chain).reports(endBlock),
    latestBlock: async (chain = "base") =>
      chain === "base"
        ? (await resolveWindow(analytics)).end_block
        : (await serviceOf(chain).build()).end_block,
  };
}

function remoteReader(service: ServiceRecord, publicUrl: string): Reader {
  const get = async (path: string): Promise<string> => {
    const response = await reach(service, path);
    const text = await response.text();
    if (!response.ok) throw serviceError(service, response.status, text);
    return text;
  };
  // What the service answers names its own public URL; the local path would name this command's.
  const json = async <T>(path: string) =>
    rebase(JSON.parse(await get(path)), service.public_url, publicUrl) as T;
  const end = (endBlock?: number) => (endBlock === undefined ? "" : `?end_block=${endBlock}`);
  const leaderboard = (endBlock?: number, page = 1) =>
    json<LeaderboardDocument>(`${leaderboardPath(page)}${end(endBlock)}`);
  // Each chain's paths are Base's with its slug; the routes answer an unknown one with a 404.
  const answersOn = (chain: string): ReportAnswers => {
    const slug = encodeURIComponent(chain);
    // Encoded: an address from an agent (x402-merchants mcp) may be any text, a "/" or "?" in it too.
    const merchant = (address: string) => `/v1/reports/${slug}/${encodeURIComponent(address)}`;
    return {
      report: (address, endBlock) => json<Report>(`${merchant(address)}${end(endBlock)}`),
      evidence: (address, endBlock) =>
        json<EvidenceDocument>(`${merchant(address)}/evidence${end(endBlock)}`),
      leaderboard: (endBlock, page = 1) =>
        json<LeaderboardDocument>(`${leaderboardPath(page, slug)}${end(endBlock)}`),
      search: (query, endBlock) =>
        json<SearchDocument>(
          `${searchPath(slug)}?${new URLSearchParams({ q: query, ...(endBlock === undefined ? {} : { end_block: String(endBlock) }) })}`,
        ),
      flags: (endBlock, page = 1, merchant) =>
        json<FlagFeedDocument>(
          `${flagsPath(page, merchant === undefined ? null : encodeURIComponent(merchant), slug)}${end(endBlock)}`,
        ),
      wallet: (address) => json<WalletHistory>(`${walletsRoot(slug)}/${encodeURIComponent(address)}`),
      weeks: () => json<SealedWeeksDocument>(`/v1/weeks/${slug}`),
    };
  };
  return {
    // Answered as the service answers it: its pages and documents name the service's own public URL.
    route: (pathAndQuery) => reach(service, pathAndQuery),
    ...answersOn("base"),
    onChain: answersOn,
    reports: async (endBlock, chain = "base") => {
      const text = await get(`/v1/datasets/${encodeURIComponent(chain)}/reports.ndjson${end(endBlock)}`);
      const reports = text
        .split("\n")
        .filter(Boolean)
        .map((line) => rebase(JSON.parse(line), service.public_url, publicUrl) as Report);
      // Asked only when no report names the window: started anyway, it was a request nobody awaited, whose
      // failure (the service stopping meanwhile) was an unhandled rejection.
      const board = () => (chain === "base" ? leaderboard(endBlock) : answersOn(chain).leaderboard(endBlock));
      const window = reports[0]?.window ?? (await board()).window;
      return { window, reports };
    },
    latestBlock: async (chain = "base") =>
      (await (chain === "base" ? leaderboard() : answersOn(chain).leaderboard())).window.end_block,
  };
}

/** A GET of the service; a service that does not answer is a 503 naming it. */
async function reach(service: ServiceRecord, path: string): Promise<Response> {
  try {
    return await fetchWithin(`${service.url}${path}`, { signal: timeoutSignal(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    throw new AppError(
      503,
      "report_service_unreachable",
      `the analytics database is in use by the report service at ${service.url} (PID ${service.pid}), which did not answer: ${(error as Error).message}`,
    );
  }
}

/**
 * The service's JSON error as this command's: a 400 is the caller's mistake (exit 2), as it is on the
 * local path; the rest keep their message, which is the one the local path prints.
 */
function serviceError(service: ServiceRecord, status: number, text: string): AppError {
  let body: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    // Not one of the service's errors (a proxy's page?): said below.
  }
  const message = body?.error?.message;
  const code = typeof body?.error?.code === "string" ? body.error.code : "report_service_failed";
  if (typeof message !== "string") {
    return new AppError(
      502,
      "report_service_failed",
      `the report service at ${service.url} answered ${status}`,
    );
  }
  if (status === 400) return new UsageError(message, code);
  if (status >= 500) {
    return new AppError(502, code, `the report service at ${service.url} failed: ${message}`);
  }
  return new AppError(status as 404, code, message);
}

/** Every string in `value` with the URL base `from` replaced by `to`. */
function rebase(value: unknown, from: string, to: string): unknown {
  if (from === to) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return v.split(`${from}/`).join(`${to}/`);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value);
}
