/**
 * The composition root: the one place that starts the program's servers from the configuration, for
 * `serve`, `devnet`, `facilitator` and the demo alike. Everything started is registered with one
 * `Lifecycle`, which closes it in reverse order: the report service and its indexer, then the merchant
 * hosts, then the facilitator they settle through, then the operator's metrics listener (started first, so
 * that a port it cannot have stops the start before anything else runs).
 */

import type { FacilitatorClient } from "@x402/core/server";
import { privateKeyToAccount } from "viem/accounts";
import type { Analytics } from "../analytics/duckdb.ts";
import type { Database } from "../common/db/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { setLogLevel } from "../common/log.ts";
import { unpaidLimitOf } from "../common/rate-limit.ts";
import type { MerchantHost } from "../config/ports.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import type { ReportService } from "../reports/index.ts";
import type { Config } from "./config.ts";
import type { FacilitatorServiceOptions } from "./facilitator.ts";
import { type ExtraHost, startMerchantHosts } from "./merchants.ts";
import { startMetricsListener } from "./metrics.ts";
import type { AttestOptions, Following } from "./reports.ts";

export interface ServicesOptions {
  config: Config;
  lifecycle: Lifecycle;
  /** A facilitator in this process; the merchant hosts then settle through it (devnet, demo). */
  facilitator?: FacilitatorServiceOptions;
  /** Merchant hosts to serve, by configuration name (each needs its wallet). */
  merchants?: readonly MerchantHost[];
  /** Hosts beyond the configured merchants (the demo's shops), served with the same merchant kit. */
  hosts?: readonly ExtraHost[];
  /**
   * The report service, and the chains its indexers follow (one each): options, or a function of the URLs of
   * what was started before it (the demo's indexer reads the Bazaar of the facilitator started here).
   */
  reports?: {
    follow?: Following | ((urls: Record<string, string>) => Following);
    /** The weekly attester, instead of the configured one (the demo's, on its devnet). */
    attest?: AttestOptions;
  };
  /** A banner over every merchant host's pages (the demo's: its money is not real). */
  notice?: string;
}

export interface Services {
  /**
   * Each started service's base URL, by name ("reports", "facilitator", "utility", ...), and `metrics`:
   * the operator's `/metrics` URL, unless X402M_METRICS_PORT is off.
   */
  urls: Record<string, string>;
  merchants: Partial<Record<MerchantHost, Merchant>>;
  /** The merchants' state, when merchant hosts were started. */
  db?: Database;
  analytics?: Analytics;
  reports?: ReportService;
  /** The facilitator started here: open or not, its allow-list's size, its live keys. */
  facilitatorAccess?: { open: boolean; payees: number; keys: number };
  /** Rejects when a part fails on its own (an indexer failing for a reason other than an RPC outage). */
  failed: Promise<never>;
}

export async function startServices(options: ServicesOptions): Promise<Services> {
  const { config, lifecycle } = options;
  // X402M_LOG_LEVEL, once the configuration is read; unset, the logger's own default (info) or what the
  // command chose before.
  if (config.logLevel) setLogLevel(config.logLevel);
  const urls: Record<string, string> = {};
  const metrics = await startMetricsListener(config, lifecycle);
  // One limit for every host here: they share the process's cores.
  const limit = unpaidLimitOf(config.unpaidLimit);
  // The merchants' facilitator: the configured ones (null: in order, with failover), or the one started
  // here, which they call in process (no HTTP hop: about a fifth less CPU per paid request,
  // docs/benchmarks-log.md) while it serves everyone else over HTTP.
  let facilitator: FacilitatorClient | null = null;
  let serveHere: ((merchants: readonly Merchant[]) => void) | undefined;
  let facilitatorAccess: Services["facilitatorAccess"];
  // Merchants read payers' balances from the chain their payments settle on: the in-process
  // facilitator's, when there is one.
  const merchantConfig = options.facilitator
    ? { ...config, payments: { ...config.payments, rpcUrl: options.facilitator.rpc } }
    : config;
  if (options.facilitator) {
    // Loaded here: the facilitator's SDK and signer are about 25 MB that `serve` never uses.
    const [{ startFacilitatorService }, { inProcessClient }] = await Promise.all([
      import("./facilitator.ts"),
      import("../facilitator/client.ts"),
    ]);
    // The merchants it serves here are on its allow-list without saying so: the configured ones now, the
    // extra hosts' (the demo's shops) once they are built.
    const payees = (options.merchants ?? []).flatMap((name) => {
      const host = merchantConfig.merchants[name];
      // Its Solana wallet too, for the facilitator's Solana (issue 86).
      return [host?.payTo, host?.solanaPayTo].filter((a): a is NonNullable<typeof a> => !!a);
    });
    const started = await startFacilitatorService(
      config,
      { ...options.facilitator, payees: [...(options.facilitator.payees ?? []), ...payees] },
      lifecycle,
      limit,
    );
    // Its deposit rule relays only into channels someone it knows can claim: a merchant with an authorizer
    // key of its own names that key in its channels, so the key is registered for its wallet. The configured
    // hosts' now, before they are built: each asks this facilitator what it would settle as it is built
    // (payments/fronts.ts), and a key registered after that answer would leave its channels out.
    for (const name of options.merchants ?? []) {
      const host = merchantConfig.merchants[name];
      if (host?.payTo && host.channelAuthorizerKey)
        started.facilitator.channelAuthorizers.register(host.payTo, [
          privateKeyToAccount(host.channelAuthorizerKey as `0x${string}`).address,
        ]);
    }
    serveHere = (served) => {
      started.facilitator.gate.allow(
        served.flatMap((merchant) => [
          merchant.payTo,
          ...(merchant.solanaPayTo ? [merchant.solanaPayTo] : []),
        ]),
      );
      for (const { payTo, channelAuthorizer } of served) {
        if (channelAuthorizer)
          started.facilitator.channelAuthorizers.register(payTo, [channelAuthorizer.address]);
      }
    };
    facilitatorAccess = started.access;
    urls.facilitator = started.url;
    facilitator = inProcessClient(started.facilitator);
  }
  let merchants: Services["merchants"] = {};
  let served: Merchant[] = [];
  let db: Database | undefined;
  if ((options.merchants?.length ?? 0) > 0 || (options.hosts?.length ?? 0) > 0) {
    const hosts = await startMerchantHosts(
      merchantConfig,
      options.merchants ?? [],
      facilitator,
      lifecycle,
      options.hosts,
      options.notice,
      limit,
    );
    Object.assign(urls, hosts.urls);
    merchants = hosts.merchants;
    served = hosts.served;
    db = hosts.db;
    serveHere?.(served);
  }
  let failed = new Promise<never>(() => undefined);
  let analytics: Analytics | undefined;
  let reports: ReportService | undefined;
  if (options.reports) {
    // Loaded here, like the facilitator: a merchant host alone needs neither DuckDB nor the reports.
    const [{ startReportService }, { upsertListings }, { listingsOf }] = await Promise.all([
      import("./reports.ts"),
      import("../analytics/listings.ts"),
      import("../merchant-kit/listings.ts"),
    ]);
    const { follow, attest } = options.reports;
    const started = await startReportService(
      config,
      typeof follow === "function" ? follow(urls) : follow,
      lifecycle,
      limit,
      attest,
    );
    urls.reports = started.url;
    ({ analytics, reports } = started);
    // Reports list a merchant's endpoints whether or not they were paid this week (the Bazaar only
    // knows the paid ones): the catalogues of the merchants served here are listings too. In a turn on the
    // report service's connection, which the indexer may have set building already.
    const store = analytics;
    await store.exclusive(() => upsertListings(store, served.flatMap(listingsOf)));
    if (started.indexing) {
      const indexing = started.indexing;
      failed = new Promise<never>((_, reject) => {
        indexing.then(
          () => reject(new Error("the indexer stopped")),
          (error) => reject(error),
        );
      });
    }
  }
  failed.catch(() => undefined);
  if (metrics) urls.metrics = metrics;
  return { urls, merchants, db, analytics, reports, failed, facilitatorAccess };
}
