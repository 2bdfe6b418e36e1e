/**
 * The report service as a service of this process: the analytics database, the report pages and API on
 * `config.host`:`config.port`, and, when asked, an indexer for each chain followed, into the same database
 * (DuckDB lets one process write a database file, so the indexers run here rather than beside it).
 */

import { type Analytics, openAnalyticsWaiting } from "../analytics/duckdb.ts";
import { analyticsNotice } from "../analytics/notice.ts";
import { BASE_RECORD, storeChains } from "../chain/chains.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { log } from "../common/log.ts";
import { withMetrics } from "../common/metrics-server.ts";
import type { UnpaidLimit } from "../common/rate-limit.ts";
import { ConfigError } from "../config/config-error.ts";
import { reachableUrl, removeServiceRecord, writeServiceRecord } from "../config/service-record.ts";
import type { Follower, FollowerOptions } from "../indexer/index.ts";
import {
  Attester,
  type AttesterOptions,
  ReportService,
  reportReadiness,
  reportRoutes,
  type ServiceHealth,
} from "../reports/index.ts";
import type { Config } from "./config.ts";
import { listenWithUrlOn } from "./listen.ts";

/**
 * A `report` or `leaderboard` holds the database for about a second (src/cli/readers.ts): a service
 * starting meanwhile waits that out instead of failing; a process that holds it for good still fails it.
 */
const OPEN_WAIT_MS = 10_000;

/** The attester's options, but for what the service provides (its database and reports). */
export type AttestOptions = Omit<AttesterOptions, "reports" | "analytics">;

/** The follower's options, but for what the service provides (its database connection). */
export type FollowOptions = Omit<FollowerOptions, "analytics">;

/** The chains followed: one, or several (each its own chain, its own indexer on its own connection). */
export type Following = FollowOptions | readonly FollowOptions[];

export interface ReportsService {
  url: string;
  analytics: Analytics;
  reports: ReportService;
  /**
   * The indexers' run when any follows a chain: each waits out RPC outages, and this settles when all are
   * stopped, or when one fails for another reason.
   */
  indexing?: Promise<unknown>;
}

/**
 * Starts the report service and records it in the data directory, where the read-only commands find it
 * while it holds the database. Closing removes the record first (readers stop asking), then stops the
 * indexer (after the batch it is committing), then HTTP, then the database.
 */
export async function startReportService(
  config: Config,
  following: Following | undefined,
  lifecycle: Lifecycle,
  limit?: UnpaidLimit,
  attest?: AttestOptions,
): Promise<ReportsService> {
  const follow = followedChains(following);
  const analytics = await openAnalyticsWaiting(config, OPEN_WAIT_MS);
  lifecycle.add("analytics database", () => analytics.stop());
  // The notice and the readiness probe read on a connection of their own: on the report service's, they
  // would wait behind a build's statements (seconds on a large store).
  const probes = await analytics.fork();
  let reports: ReportService | undefined;
  /** Every chain's report service, Base's first. */
  let all: ReportService[] = [];
  /** The followers by chain slug, each once started. */
  const followers = new Map<string, Follower>();
  const server = await listenWithUrlOn(
    "reports",
    async (url) => {
      // One service a chain, on the one store: each reads its chain's rows and answers under its slug, and
      // builds on a connection of its own (Base's the store's), so that one chain's build never waits for
      // another's: three chains' weeks cost about one's (docs/benchmarks.md, bench:chains).
      const publicUrl = config.publicUrl ?? url;
      const services = await Promise.all(
        storeChains.list.map(
          async (chain, i) =>
            new ReportService(i === 0 ? analytics : await analytics.fork(), { publicUrl, chain }),
        ),
      );
      reports = services[0];
      all = services;
      const routes = reportRoutes(services, {
        notice: () => analyticsNotice(probes),
        health: () => health(follow, followers),
        limit,
        ready: reportReadiness(
          probes,
          follow.map((f) => ({ chain: followedSlug(f), follower: () => followers.get(followedSlug(f)) })),
        ),
      });
      return withMetrics(routes.fetch, config.metrics.token);
    },
    config.host,
    config.port,
  );
  lifecycle.addServer("reports http", server);
  for (const options of follow) {
    followers.set(followedSlug(options), await startIndexer(analytics, options, lifecycle));
  }
  const attesting = attest ?? configuredAttester(config, follow);
  if (attesting) await startAttester(analytics, all, attesting, lifecycle);
  writeServiceRecord(config.dataDir, {
    pid: process.pid,
    url: reachableUrl(server.url),
    public_url: config.publicUrl ?? server.url,
    started_at: new Date().toISOString(),
  });
  lifecycle.add("report service record", () => removeServiceRecord(config.dataDir, process.pid));
  const runs = [...followers.values()].map((f) => f.done);
  return {
    url: server.url,
    analytics,
    reports: reports as ReportService,
    // Settles when all have stopped, or as soon as one fails: an indexer that fails stops the service.
    indexing: runs.length === 0 ? undefined : Promise.all(runs),
  };
}

/** The chains to follow as a list, each named once: two indexers of one chain would write its rows twice. */
function followedChains(following: Following | undefined): readonly FollowOptions[] {
  const list = following === undefined ? [] : "rpc" in following ? [following as FollowOptions] : following;
  const slugs = list.map(followedSlug);
  const twice = slugs.find((slug, i) => slugs.indexOf(slug) !== i);
  if (twice !== undefined) throw new ConfigError(`the chain ${twice} is followed twice: give it one RPC`);
  return list;
}

const followedSlug = (options: FollowOptions): string => (options.chain ?? BASE_RECORD).slug;

/**
 * The report service's health: `ok` without an indexer; with one, `degraded` while it lags (the RPC
 * fails, or it is behind), with how far (`indexer`); with several, `degraded` while any lags, each under its
 * chain (`indexers`). Reports are served either way, from what is stored.
 */
function health(follow: readonly FollowOptions[], followers: ReadonlyMap<string, Follower>): ServiceHealth {
  if (follow.length === 0) return { status: "ok" };
  const list = [...followers.values()];
  // Not all started yet: the service is up, its data not yet followed.
  const degraded = list.length < follow.length || list.some((f) => f.degraded());
  const status = degraded ? "degraded" : "ok";
  if (follow.length === 1) return { status, ...(list[0] ? { indexer: list[0].health() } : {}) };
  return { status, indexers: Object.fromEntries([...followers].map(([slug, f]) => [slug, f.health()])) };
}

/** The indexer following the chain on its own connection to the database; closing stops it first. */
async function startIndexer(
  analytics: Analytics,
  options: FollowOptions,
  lifecycle: Lifecycle,
): Promise<Follower> {
  // Loaded on demand: the indexer's RPC code is only for a chain to follow.
  const { startFollower } = await import("../indexer/index.ts");
  const connection = await analytics.fork();
  const follower = startFollower({ ...options, analytics: connection });
  lifecycle.add("indexer", async () => {
    await follower.stop();
    connection.close();
  });
  return follower;
}

/**
 * The attester the configuration asks for: none without X402M_ATTEST_KEY (so none on mainnet until the
 * operator gives it a key of its own); the chain it attests on is X402M_ATTEST_RPC, else Base's RPC when Base is
 * followed.
 */
function configuredAttester(config: Config, follow: readonly FollowOptions[]): AttestOptions | undefined {
  const { key, rpc, maxCostWei, fromBlock } = config.attest;
  if (!key) return undefined;
  // Attestations are made on Base: the chain followed otherwise is not where they go.
  const chain = rpc ?? follow.find((f) => followedSlug(f) === BASE_RECORD.slug)?.rpc.url;
  if (!chain) {
    throw new ConfigError(
      "X402M_ATTEST_KEY is set but there is no chain to attest on: set X402M_ATTEST_RPC, or follow Base (serve --rpc URL)",
    );
  }
  return { key, rpc: chain, maxCostWei, ...(fromBlock === null ? {} : { from: fromBlock }) };
}

/**
 * The weekly attester (src/reports/attest/attester.ts), of every chain's weeks; stopped before the database
 * closes.
 */
async function startAttester(
  analytics: Analytics,
  reports: readonly ReportService[],
  options: AttestOptions,
  lifecycle: Lifecycle,
): Promise<void> {
  const attester = new Attester({ ...options, reports, analytics });
  attester.start();
  log("info", "attesting each closed week on chain", { attester: attester.address });
  lifecycle.add("attester", () => attester.stop());
}
