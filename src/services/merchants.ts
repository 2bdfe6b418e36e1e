/**
 * The merchant hosts of this process: one database for their state, one facilitator client, and per
 * host the merchant kit's app on its own port (`config.merchants[name].port`).
 */
import type { FacilitatorClient } from "@x402/core/server";
import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { fastAccount } from "../chain/secp256k1.ts";
import { type Database, openDatabase } from "../common/db/index.ts";
import { type Lifecycle, Unfinished } from "../common/lifecycle.ts";
import type { Fetch } from "../common/listen.ts";
import { log } from "../common/log.ts";
import { watchChannels } from "../common/metrics.ts";
import { withMetrics } from "../common/metrics-server.ts";
import type { UnpaidLimit } from "../common/rate-limit.ts";
import { ConfigError } from "../config/config-error.ts";
import { dataLayout } from "../config/layout.ts";
import { MERCHANT_HOSTS, type MerchantHost, merchantEnvPrefix } from "../config/ports.ts";
import {
  FailoverFacilitator,
  type FailoverOptions,
  facilitatorAuthHeaders,
  facilitatorEnvPrefix,
  httpFacilitator,
  type Merchant,
  type MerchantAppOptions,
  merchantApp,
  missingAliasPaths,
  networkAuthorizationReader,
  offersChannels,
  openChannels,
  paymentNetworks,
  priceToAtomic,
  SETTLING_MAX_MS,
  storedReceiptKey,
  walletSchedules,
} from "../merchant-kit/index.ts";
import { ALIAS_PATHS, MERCHANTS } from "../merchants/index.ts";
import { channelActions, channelTargets, serveChannelAdmin } from "./channel-admin.ts";
import type { Config } from "./config.ts";
import { listenWithUrlOn } from "./listen.ts";

/** A host that is not one of `MERCHANTS` (the demo's shops): its app, built once its URL is known. */
export interface ExtraHost {
  name: string;
  port: number;
  /** Its server's fetch handler, and the merchants it serves (their listings reach the reports). */
  build(url: string, kit: MerchantAppOptions): Promise<{ fetch: Fetch; merchants: readonly Merchant[] }>;
}

export interface MerchantHosts {
  urls: Record<string, string>;
  /** What each configured host serves (its catalogue, wallet and public URL). */
  merchants: Partial<Record<MerchantHost, Merchant>>;
  /** Every merchant served, the extra hosts' included. */
  served: Merchant[];
  /** The merchants' state. */
  db: Database;
}

/** The wallet of a host that is to be served, or a configuration error naming its setting. */
export function payToOf(config: Config, name: MerchantHost): `0x${string}` {
  const payTo = config.merchants[name]?.payTo;
  if (!payTo) throw new ConfigError(`${name} needs its wallet: set ${merchantEnvPrefix(name)}PAY_TO`);
  if (config.merchants[name]?.solanaPayTo && !config.payments.solanaRpcUrl)
    throw new ConfigError(
      `${merchantEnvPrefix(name)}SOLANA_PAY_TO is set: a host paid on Solana needs X402M_SOLANA_RPC_URL too`,
    );
  return payTo;
}

/**
 * Starts `names` (and `extra` hosts), each paid through `facilitator`: a client of one in this process,
 * or null for the configured ones (`configuredFacilitators`). Closing stops every host's HTTP, then closes
 * the state database.
 */
export async function startMerchantHosts(
  config: Config,
  names: readonly MerchantHost[],
  facilitator: FacilitatorClient | null,
  lifecycle: Lifecycle,
  extra: readonly ExtraHost[] = [],
  notice?: string,
  limit?: UnpaidLimit,
): Promise<MerchantHosts> {
  for (const name of names) payToOf(config, name);
  const db = await openDatabase({
    pgliteDir: dataLayout(config.dataDir).pglite.merchants,
    databaseUrl: config.databaseUrl,
  });
  lifecycle.add("merchant database", () => db.close());
  // Closed after every host's HTTP and before the database: a paid call whose client the drain cut still
  // commits what it was paid for, and a stop never exits between a settlement and that commit.
  const settling = new Unfinished(SETTLING_MAX_MS);
  lifecycle.addUnfinished("paid calls settling", settling);
  const kit: MerchantAppOptions = {
    settling,
    services: { db, config },
    facilitator: facilitator ?? configuredFacilitators(config.payments),
    payments: config.payments,
    notice,
    limit,
  };
  const urls: Record<string, string> = {};
  const merchants: MerchantHosts["merchants"] = {};
  for (const name of names) {
    const host = config.merchants[name] as Config["merchants"][string];
    warnOfMissingAliasPaths(config, name);
    const server = await listenWithUrlOn(
      name,
      async (url) => {
        const signed = withReceiptSigner(
          withAuthorizer(
            MERCHANTS[name]({ payTo: payToOf(config, name), publicUrl: host.publicUrl ?? url }, config),
            host.channelAuthorizerKey,
          ),
          host.receiptKey ?? storedReceiptKey(config.dataDir, MERCHANT_HOSTS[name].payToFrom ?? name),
        );
        // Its ERC-8021 builder code (X402M_<HOST>_BUILDER_CODE), declared in its 402s.
        const coded = host.builderCode ? { ...signed, builderCode: host.builderCode } : signed;
        // Its Solana wallet (X402M_<HOST>_SOLANA_PAY_TO), taken where X402M_SOLANA_RPC_URL is set (issue 86).
        const merchant = host.solanaPayTo ? { ...coded, solanaPayTo: host.solanaPayTo } : coded;
        merchants[name] = merchant;
        return withMetrics((await merchantApp(merchant, kit)).fetch, config.metrics.token);
      },
      config.host,
      host.port,
    );
    lifecycle.addServer(`${name} http`, server);
    urls[name] = server.url;
    merchants[name]?.warm?.().catch((error: unknown) => {
      log("warn", "warming the merchant failed; its first call will try again", {
        merchant: name,
        error: String(error),
      });
    });
  }
  const served: Merchant[] = [];
  for (const host of extra) {
    const server = await listenWithUrlOn(
      host.name,
      async (url) => {
        const built = await host.build(url, kit);
        served.push(...built.merchants);
        return withMetrics(built.fetch, config.metrics.token);
      },
      config.host,
      host.port,
    );
    lifecycle.addServer(`${host.name} http`, server);
    urls[host.name] = server.url;
  }
  served.unshift(...Object.values(merchants));
  // Claims and settles of the merchants' payment channels (docs/platform.md, "Payment channels"), for the
  // hosts whose catalogue offers them, whatever `channels.mode` says: channels already open are the
  // merchant's money until claimed.
  const scheduleOptions = channelScheduleOptions(config, db, kit.facilitator);
  const takesChannels = served.filter((m) => m.endpoints.some(offersChannels));
  const watched = new Set<string>();
  for (const schedule of walletSchedules(takesChannels, scheduleOptions)) {
    schedule.start();
    lifecycle.add("channel schedule", () => schedule.stop());
    // A wallet's channels on every network, watched once.
    if (!watched.has(schedule.receiver))
      watchWallet(served, schedule.receiver, db, config.payments.asset.decimals, lifecycle);
    watched.add(schedule.receiver);
  }
  // `channels list|claim|refund` cannot open a PGlite directory this process holds: it asks here.
  if (db.kind === "pglite") {
    const targets = channelTargets(served, scheduleOptions);
    const actions = channelActions(db, targets, config.payments.asset.decimals);
    await serveChannelAdmin(config.dataDir, actions, lifecycle);
  }
  return { urls, merchants, served, db };
}

/**
 * `channels list|claim|refund` on `db` itself (a PostgreSQL server, or PGlite nobody holds): every configured
 * host with a wallet, its own authorizer key, the configured facilitators, as `serve` would have them.
 */
export function configuredChannelActions(config: Config, db: Database) {
  const wallets = Object.entries(config.merchants).flatMap(([name, host]) =>
    host?.payTo ? [withAuthorizer({ name, payTo: host.payTo } as Merchant, host.channelAuthorizerKey)] : [],
  );
  const options = channelScheduleOptions(config, db, configuredFacilitators(config.payments));
  return channelActions(db, channelTargets(wallets, options), config.payments.asset.decimals);
}

/** How the merchants' channels are claimed: by the schedule, and by `channels claim` (services/channel-admin.ts). */
export function channelScheduleOptions(config: Config, db: Database, facilitator: FacilitatorClient) {
  return {
    db,
    facilitator,
    network: config.payments.network as `${string}:${string}`,
    asset: config.payments.asset,
    atomic: priceToAtomic,
    settings: config.channels,
    rpcUrl: config.payments.rpcUrl,
    // The host's further networks: a schedule each, claiming on its chain (docs/chains.md).
    more: paymentNetworks(config.payments)
      .slice(1)
      .map((n) => ({ network: n.network as `${string}:${string}`, asset: n.asset, rpcUrl: n.rpcUrl })),
  };
}

/** The wallet's open channels and unclaimed money on every scrape (docs/metrics.md), by its hosts' names. */
function watchWallet(
  served: readonly Merchant[],
  receiver: string,
  db: Database,
  decimals: number,
  lifecycle: Lifecycle,
): void {
  const names = served.filter((m) => m.payTo.toLowerCase() === receiver).map((m) => m.name);
  const stop = watchChannels([...new Set(names)].join(","), async () => {
    const channels = await openChannels(db, [receiver]);
    const unclaimed = channels.reduce((sum, c) => sum + c.unclaimed, 0n);
    return { open: channels.length, unclaimedUsd: Number(formatUnits(unclaimed, decimals)) };
  });
  lifecycle.add("channel metrics", async () => stop());
}

/** The merchant with its own channel authorizer, when its host has a key (X402M_<HOST>_CHANNEL_AUTHORIZER_KEY). */
function withAuthorizer(merchant: Merchant, key: string | null): Merchant {
  return key ? { ...merchant, channelAuthorizer: privateKeyToAccount(key as `0x${string}`) } : merchant;
}

/**
 * The merchant signing its offers and receipts with `key` (X402M_<HOST>_RECEIPT_KEY, else the one kept in the
 * data directory: an alias host's is its source's). Its address is logged: it is what buyers pin.
 */
function withReceiptSigner(merchant: Merchant, key: string | undefined): Merchant {
  if (!key) return merchant;
  // Its typed data signed by libsecp256k1: two signatures on every paid answer (chain/secp256k1.ts).
  const receiptSigner = fastAccount(key as `0x${string}`);
  log("info", "the host signs its offers and receipts", {
    merchant: merchant.name,
    signer: receiptSigner.address,
  });
  return { ...merchant, receiptSigner };
}

/** An alias host lists what its source has; paths its source lacks are left out, and said so. */
function warnOfMissingAliasPaths(config: Config, name: MerchantHost): void {
  const alias = ALIAS_PATHS[name];
  if (!alias) return;
  const source = MERCHANTS[alias.source]({ payTo: payToOf(config, name), publicUrl: "" }, config);
  const missing = missingAliasPaths(source, alias.paths);
  if (missing.length > 0)
    log("warn", "the alias host lacks endpoints its source does not have yet", { missing });
}

/**
 * The facilitators of `payments.facilitators`, in order, with their headers (a CDP JWT per request for
 * those with `auth: "cdp"`), as one client that fails over (docs/platform.md, "Facilitators"); a
 * settlement whose outcome one of them left unknown is looked up on `payments.rpcUrl`. `options`: the
 * failover's timings (tests shorten them).
 */
export function configuredFacilitators(
  payments: Config["payments"],
  options: FailoverOptions = {},
): FacilitatorClient {
  const list = payments.facilitators.map((facilitator, index) => {
    const cdp = facilitator.auth === "cdp" ? payments.cdp : null;
    const prefix = facilitatorEnvPrefix(index + 1);
    return {
      name: facilitator.url,
      client: httpFacilitator(
        facilitator.url,
        facilitatorAuthHeaders(facilitator.url, facilitator.headers, cdp),
      ),
      credentials: cdp
        ? "CDP_API_KEY_ID and CDP_API_KEY_SECRET"
        : Object.keys(facilitator.headers).length > 0
          ? `${prefix}HEADERS`
          : `${prefix}HEADERS (none sent)`,
    };
  });
  return new FailoverFacilitator(list, {
    chain: networkAuthorizationReader(paymentNetworks(payments)),
    ...options,
  });
}
