/**
 * The demo: the whole service on a local Base chain in one process tree. anvil (the devnet, its own
 * process) with the project's USDC, Permit2 and x402's upto proxy; the project's facilitator; the utility
 * API, its alias host, the inference API (on its offline engine) and the demo shops, each a paid x402
 * host; the indexer following the chain into the analytics database; the report service; and the buyer
 * simulator paying the merchants through x402 (`exact`, and `upto` for metered calls) over a compressed
 * week.
 *
 * Everything is kept in the data directory (`demo/` for the chain, the world's clock and the ground
 * truth; the analytics database and the PostgreSQL state beside it), so a second start resumes the same chain where it
 * stopped and the simulator plays the time it missed. What it does with a directory that holds part of a
 * week, or a damaged one, is in resume.ts: it stops rather than delete anything not asked to (`fresh`).
 */
import fs from "node:fs";
import { createPublicClient, http } from "viem";
import type { Analytics } from "../analytics/duckdb.ts";
import { importNdjson } from "../analytics/import.ts";
import { BLOCK_SECONDS, WEEK_BLOCKS } from "../chain/base.ts";
import {
  type DevnetAccount,
  derive,
  devnetChain,
  SavedChainError,
  startDevnet,
} from "../chain/devnet/index.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import type { Database } from "../common/db/index.ts";
import { Lifecycle } from "../common/lifecycle.ts";
import { sleep } from "../common/sleep.ts";
import { type Config, portSetting } from "../config/config.ts";
import { dataLayout } from "../config/layout.ts";
import { DEFAULT_REORG_DEPTH, type IndexerEvent } from "../indexer/index.ts";
import { isMeteredOnly, type Merchant } from "../merchant-kit/endpoint.ts";
import { OFFLINE_SETTINGS } from "../merchants/inference/catalogue.ts";
import type { ReportService } from "../reports/service.ts";
import { devnetFacilitatorOptions, startServices } from "../services/index.ts";
import { sizedChat, tinyChat } from "./chat-work.ts";
import type { Mix } from "./mix.ts";
import {
  chooseRoles,
  merchantWallet,
  type PlanEndpoint,
  type PlanMerchant,
  populationWallets,
  SLOT_SECONDS,
  SLOTS_PER_WEEK,
  slotSecondsFor,
  type WalletId,
} from "./plan.ts";
import { clearForFreshStart, DemoError, prepareStart, type World } from "./resume.ts";
import { shopsApp } from "./shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "./shops/index.ts";
import { runSimulator, type SimMerchant, type SimulatorEvent } from "./simulator.ts";
import { loadDemoSocial } from "./social.ts";
import { repairTruth } from "./truth.ts";

export { DemoError };

export interface DemoOptions {
  /** Ports, data directory and the rest; the merchants' wallets are the demo's own. */
  config: Config;
  mix: Mix;
  /**
   * Delete the demo's week (its folder and analytics database) and start a fresh one; without it, a data
   * directory holding part of a week, or a damaged one, stops the demo (resume.ts).
   */
  fresh?: boolean;
  /** The indexer's `fundingLookback` (blocks); default its own, which the young chain clamps at block 0. */
  fundingLookback?: number;
  /**
   * Days of chain the week is played in (1 to 7, default 7), for a fresh start. Fewer days play the same
   * week's actions closer together in the week's last days, after empty blocks for the first ones, so the
   * window is still a week and a day chart shows the payments on the last days only.
   */
  days?: number;
  onEvent?: (event: DemoEvent) => void;
}

export type DemoEvent =
  | { type: "started"; resumed: boolean; urls: DemoUrls; slot: number; slots: number }
  | { type: "simulator"; event: SimulatorEvent }
  | { type: "indexer"; event: IndexerEvent }
  | { type: "note"; message: string };

export interface DemoUrls {
  leaderboard: string;
  rpc: string;
  facilitator: string;
  utility: string;
  utilityAlias: string;
  inference: string;
  social: string;
  socialProxy: string;
  shops: string;
  /** The operator's `/metrics` (docs/metrics.md), unless X402M_METRICS_PORT is off. */
  metrics?: string;
}

export interface DemoMerchant {
  id: string;
  /** The host name its reports carry, and what people call it. */
  name: string;
  title: string;
  address: string;
  /** The merchant's report page, badge and API reference. */
  report: string;
  badge: string;
  api: string;
}

export interface Demo {
  resumed: boolean;
  urls: DemoUrls;
  merchants: DemoMerchant[];
  /** Settles when the simulated week is on chain, indexed, and the leaderboard's window is full. */
  ready: Promise<void>;
  /** Rejects when a part fails on its own (anvil dies, the indexer gives up). */
  failed: Promise<never>;
  stop(): Promise<void>;
}

export const DEMO_NOTICE =
  "DEVNET DEMO: simulated buyers paying real x402 endpoints on a local chain (anvil as Base, chain id 8453). The wallets, merchants and figures are not Base mainnet's.";

/** Derivation indices of the demo's merchant wallets (the devnet uses 0 and 1, its buyers 2 on). */
const MERCHANT_KEY_BASE = 100;
/** The inference API's wallet: apart from the shops' (`MERCHANT_KEY_BASE + 1` on), whatever their number. */
const INFERENCE_KEY = 99;
/** The social-data API's wallet, apart from the others likewise. */
const SOCIAL_KEY = 98;
/** Its paid proxy's own wallet: the proxy is a merchant of its own on the leaderboard. */
const SOCIAL_PROXY_KEY = 97;
const POPULATION_KEY_BASE = 1_000;
/** Stopping saves the chain, about 10 s for a week of blocks here (src/chain/devnet/saved-chain.ts). */
const DEMO_CLOSE_TIMEOUT_MS = 150_000;
/** Slot 0 starts this many blocks after genesis; the chain holds a week plus this and the confirmations. */
const LEAD_BLOCKS = 600;
/**
 * Utility endpoints the simulated buyers call: those that answer offline from their catalogue example.
 * The others need the network or an upstream (scrape, dns, the language model) and would only fail.
 */
const SIMULATED_UTILITY_PATHS = [
  "/api/calc",
  "/api/a11y/contrast",
  "/api/timezone",
  "/api/geo",
  "/api/icon/search",
  "/api/data/convert",
  "/api/qr",
];

/**
 * Whether the simulated buyers call an endpoint: the utility API's that answer offline, the inference
 * API's chat routes (its audio routes need Debian's speech programs, which a machine may lack), the
 * social-data API's and its proxy's that have an input from its archive, every shop's.
 */
function simulated(merchant: string, path: string, socialInputs: Record<string, unknown>): boolean {
  if (merchant === "utility") return SIMULATED_UTILITY_PATHS.includes(path);
  if (merchant === "inference") return path.startsWith("/v1/chat/");
  if (merchant === "social" || merchant === "social-proxy") return Object.hasOwn(socialInputs, path);
  return true;
}

/** Starts the demo; resolves once every service listens (the week is then played in the background). */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const { config } = options;
  const emit = options.onEvent ?? (() => undefined);
  const layout = dataLayout(config.dataDir).demo;

  if (
    options.days !== undefined &&
    !(Number.isInteger(options.days) && options.days >= 1 && options.days <= 7)
  ) {
    throw new DemoError(`a week is played in 1 to 7 days, not ${options.days}`);
  }
  // Before anything starts: a refusal leaves every file as it was (the devnet saves its chain when it stops).
  const { plan, files } = await prepareStart(config.dataDir, { fresh: options.fresh === true });
  const canResume = plan.start === "resume";
  let w: World;
  if (plan.start === "resume") {
    w = plan.world;
    if (JSON.stringify(w.mix) !== JSON.stringify(options.mix)) {
      emit({
        type: "note",
        message:
          "resuming with the population the demo started with (--mix and --scale apply to a fresh data directory)",
      });
    }
    const days = w.slotSeconds === undefined ? 7 : Math.round((w.slotSeconds * SLOTS_PER_WEEK) / 86_400);
    if (options.days !== undefined && options.days !== days) {
      emit({
        type: "note",
        message: `resuming the week played in ${days} days (--days applies to a fresh data directory)`,
      });
    }
  } else {
    clearForFreshStart(config.dataDir);
    const deleted = [
      ...(files.world.state !== "absent" || files.chain || files.others.length > 0 ? [layout.dir] : []),
      ...(files.analytics ? [dataLayout(config.dataDir).analytics.file] : []),
    ];
    if (options.fresh && deleted.length > 0) {
      emit({ type: "note", message: `--fresh: deleted ${deleted.join(" and ")}` });
    }
    const now = Math.floor(Date.now() / 1000);
    const days = options.days ?? 7;
    const slotSeconds = slotSecondsFor(days);
    // The blocks of the week's unplayed first days: mined empty before slot 0, which a chain without state
    // roots does at tens of thousands a second.
    const skipped = WEEK_BLOCKS - (SLOTS_PER_WEEK * slotSeconds) / BLOCK_SECONDS;
    const genesisTime = now - 2 * (WEEK_BLOCKS + DEFAULT_REORG_DEPTH + LEAD_BLOCKS);
    w = {
      version: 1,
      genesisTime,
      epoch: genesisTime + 2 * (LEAD_BLOCKS + skipped),
      mix: options.mix,
      ...(days < 7 ? { slotSeconds } : {}),
    };
  }

  const lifecycle = new Lifecycle();
  const controller = new AbortController();
  lifecycle.add("the simulation", () => controller.abort());
  try {
    // No state roots, Cancun rather than Prague and no historical states: each keeps anvil's cost per block
    // low (docs/benchmarks.md). A world an earlier version made with a higher first block resumes the chain
    // it saved, which has state roots (a fresh one with a higher first block could have none).
    const devnet = await startDevnet({
      port: config.ports.devnet,
      buyers: 0,
      blockTime: 0,
      hardfork: "cancun",
      pruneHistory: 0,
      stateRoots: false,
      statePath: layout.chain,
      saveIntervalSeconds: 600,
      genesisTimestamp: w.genesisTime,
      // Read by anvil on a fresh chain only; a saved chain carries its own numbers.
      ...(w.genesisNumber ? { genesisNumber: w.genesisNumber } : {}),
    }).catch((error) => {
      if (error instanceof SavedChainError) {
        throw new DemoError(
          `${error.message}: restore it, or start afresh with --fresh (npm start -- --fresh), which deletes the week`,
        );
      }
      if (/address already in use|EADDRINUSE/i.test(String(error))) {
        throw new DemoError(
          `the devnet's port ${config.ports.devnet} is in use: stop the other chain or set ${portSetting("devnet")} (0 picks a free one)`,
        );
      }
      throw error;
    });
    lifecycle.add("anvil", () => devnet.stop());
    const genesisNumber = w.genesisNumber ?? 0;
    const slotSeconds = w.slotSeconds ?? SLOT_SECONDS;
    if (!canResume) fs.writeFileSync(layout.world, `${JSON.stringify(w, null, 2)}\n`);

    const head = Number(
      await createPublicClient({
        chain: devnetChain(devnet.rpc),
        transport: http(devnet.rpc),
      }).getBlockNumber(),
    );
    // A chain saved before a crash may be older than the truth written after it, and the crash may have
    // cut the truth's last line short.
    const repair = repairTruth(layout.truth, head, layout.truthComplete);
    if (repair.torn !== undefined)
      emit({ type: "note", message: tornNote(layout.truth, repair.torn, repair.completeTo, head) });
    if (repair.dropped > 0)
      emit({
        type: "note",
        message: `dropped ${repair.dropped} ground-truth records of blocks the saved chain lacks`,
      });

    // Every merchant is paid into a devnet wallet of its own; the utility and its alias share one.
    const utilityKey = derive(MERCHANT_KEY_BASE);
    const inferenceKey = derive(INFERENCE_KEY);
    const socialKey = derive(SOCIAL_KEY);
    const socialProxyKey = derive(SOCIAL_PROXY_KEY);
    const shopKeys = DEMO_SHOPS.map((_, i) => derive(MERCHANT_KEY_BASE + 1 + i));
    const walletOf = (key: DevnetAccount) => key.address.toLowerCase() as `0x${string}`;
    const hostKey = (name: string) =>
      ({ inference: inferenceKey, social: socialKey, "social-proxy": socialProxyKey })[name] ?? utilityKey;
    const demoConfig: Config = {
      ...config,
      merchants: Object.fromEntries(
        Object.entries(config.merchants).map(([name, host]) => [
          name,
          { ...host, payTo: walletOf(hostKey(name)) },
        ]),
      ),
      // The inference API answers on its offline engine, the social-data API from its archive: the demo
      // needs no model, no X account and no network.
      inference: OFFLINE_SETTINGS,
      social: { ...config.social, provider: "archive" },
    };
    let shops: { merchant: Merchant; name: string }[] = [];
    const indexed = { block: -1 };
    const services = await startServices({
      config: demoConfig,
      lifecycle,
      // Receipts polled every 50 ms: while catching up, blocks come every few milliseconds.
      facilitator: devnetFacilitatorOptions(devnet, 50),
      merchants: ["utility", "utility-alias", "inference", "social", "social-proxy"],
      notice: DEMO_NOTICE,
      hosts: [
        {
          name: "shops",
          port: config.ports.shops,
          build: async (url, kit) => {
            shops = DEMO_SHOPS.map((shop, i) => ({
              name: shop.name,
              merchant: shopMerchant(
                shop,
                (shopKeys[i] as DevnetAccount).address.toLowerCase() as `0x${string}`,
                `${url}/${shop.slug}`,
              ),
            }));
            return { fetch: (await shopsApp(shops, kit)).fetch, merchants: shops.map((s) => s.merchant) };
          },
        },
      ],
      reports: {
        follow: (started) => ({
          rpc: { url: devnet.rpc, rps: 0 },
          registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
          fromBlock: genesisNumber,
          follow: true,
          pollMs: 500,
          fundingLookback: options.fundingLookback,
          discovery: { url: `${started.facilitator}/discovery/resources`, refreshMs: 60_000 },
          onEvent: (event) => {
            if (event.type === "batch") indexed.block = Math.max(indexed.block, event.to);
            if (event.type === "caught_up") indexed.block = Math.max(indexed.block, event.block);
            emit({ type: "indexer", event });
          },
        }),
      },
    });
    const urls = services.urls as Record<
      | "facilitator"
      | "utility"
      | "utility-alias"
      | "inference"
      | "social"
      | "social-proxy"
      | "shops"
      | "reports",
      string
    >;
    const analytics = services.analytics as Analytics;
    const service = services.reports as ReportService;
    const utility = services.merchants.utility as Merchant;
    const inference = services.merchants.inference as Merchant;
    const social = services.merchants.social as Merchant;
    const socialProxy = services.merchants["social-proxy"] as Merchant;
    const socialInputs = await loadDemoSocial(services.db as Database, w.genesisTime);
    await analytics.run("INSERT OR REPLACE INTO meta VALUES ('notice', $notice), ('demo', 'true')", {
      notice: DEMO_NOTICE,
    });
    const publicUrl = config.publicUrl ?? urls.reports;

    // The merchants as the operator names them (a `merchant` record each; a report's name is a host name
    // and the shops share one host, so each gets its own under .localhost), and as the simulator sees them.
    const named = [
      {
        id: "utility",
        name: "utility.localhost",
        title: "Utility API",
        key: utilityKey,
        merchant: utility,
        api: `${urls.utility}/docs`,
      },
      {
        id: "inference",
        name: "inference.localhost",
        title: "Inference API",
        key: inferenceKey,
        merchant: inference,
        api: `${urls.inference}/docs`,
      },
      {
        id: "social",
        name: "social.localhost",
        title: "Social-data API",
        key: socialKey,
        merchant: social,
        api: `${urls.social}/docs`,
      },
      {
        id: "social-proxy",
        name: "social-proxy.localhost",
        title: "Social-data API (paid proxy)",
        key: socialProxyKey,
        merchant: socialProxy,
        api: `${urls["social-proxy"]}/docs`,
      },
      ...shops.map((s, i) => ({
        id: s.merchant.name,
        name: `${s.merchant.name}.localhost`,
        title: s.name,
        key: shopKeys[i] as DevnetAccount,
        merchant: s.merchant,
        api: `${s.merchant.publicUrl}/docs`,
      })),
    ];
    fs.writeFileSync(
      layout.merchants,
      named
        .map(
          (m) =>
            `${JSON.stringify({ type: "merchant", address: m.key.address.toLowerCase(), name: m.name })}\n`,
        )
        .join(""),
    );
    await importNdjson(analytics, layout.merchants);

    const simMerchants: SimMerchant[] = named.map((m) => ({
      id: m.id,
      url: m.merchant.publicUrl,
      payTo: m.key.address,
      endpoints: m.merchant.endpoints
        .filter((e) => simulated(m.id, e.path, socialInputs))
        .map((e): PlanEndpoint => {
          const input = (m.id.startsWith("social") ? socialInputs[e.path] : e.example.input) as Record<
            string,
            unknown
          >;
          // Endpoints that offer exact too are bought at their listed price.
          const metered = isMeteredOnly(e);
          return {
            method: e.method,
            path: e.path,
            price: Number(e.price),
            input,
            ...(metered ? { scheme: "upto" as const } : {}),
            ...(metered && "messages" in input ? { sized: sizedChat(input) } : {}),
            ...(metered && "messages" in input && tinyChat(input) ? { tiny: tinyChat(input) } : {}),
          };
        }),
    }));
    const planMerchants: PlanMerchant[] = simMerchants.map(({ id, endpoints }) => ({ id, endpoints }));
    const wallets = new Map<WalletId, DevnetAccount>();
    for (const m of named) wallets.set(merchantWallet(m.id), m.key);
    populationWallets(w.mix).forEach((id, i) => {
      wallets.set(id, derive(POPULATION_KEY_BASE + i));
    });

    const headTime = w.genesisTime + 2 * (head - genesisNumber);
    const startSlot = canResume ? Math.max(0, Math.floor((headTime - w.epoch) / slotSeconds) + 1) : 0;
    let caughtUpBlock: number | undefined;
    const simulator = runSimulator({
      rpc: devnet.rpc,
      usdc: devnet.usdc,
      owner: devnet.owner,
      plan: {
        mix: w.mix,
        merchants: planMerchants,
        // The inference and social-data APIs (and its proxy) take genuine demand only: the patterns the
        // screens exist for are played by the utility API and the shops.
        roles: chooseRoles(planMerchants, "utility", ["inference", "social", "social-proxy"]),
        epoch: w.epoch,
        slotSeconds,
      },
      merchants: simMerchants,
      wallets,
      genesisTime: w.genesisTime,
      genesisNumber,
      startSlot,
      truthFile: layout.truth,
      truthCompleteFile: layout.truthComplete,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "caught_up") caughtUpBlock = event.block;
        emit({ type: "simulator", event });
      },
    });
    lifecycle.add("simulator", async () => {
      controller.abort();
      await simulator.catch(() => undefined);
    });

    const failed = new Promise<never>((_, reject) => {
      const fail = (what: string) => (error: unknown) => {
        if (!controller.signal.aborted)
          reject(new DemoError(`${what}: ${(error as Error)?.message ?? error}`));
      };
      simulator.then(() => undefined, fail("the buyer simulator failed"));
      services.failed.catch(fail("the indexer failed"));
      devnet.exited.then(({ code, signal }) =>
        fail("anvil stopped")(new Error(signal ?? `exit code ${code}`)),
      );
    });
    failed.catch(() => undefined);

    const ready = (async () => {
      // Ready: the simulator reached the present, the indexer has every block of the week it can
      // confirm, and the leaderboard has been built once.
      for (;;) {
        if (controller.signal.aborted) throw new DemoError("stopped before the week was ready");
        if (caughtUpBlock !== undefined && indexed.block >= caughtUpBlock - DEFAULT_REORG_DEPTH) break;
        await sleep(250);
      }
      await service.leaderboard();
    })();
    ready.catch(() => undefined);

    const demoUrls: DemoUrls = {
      leaderboard: `${publicUrl}/`,
      rpc: devnet.rpc,
      facilitator: urls.facilitator,
      utility: urls.utility,
      utilityAlias: urls["utility-alias"],
      inference: urls.inference,
      social: urls.social,
      socialProxy: urls["social-proxy"],
      shops: urls.shops,
      ...(services.urls.metrics && { metrics: services.urls.metrics }),
    };
    emit({
      type: "started",
      resumed: canResume,
      urls: demoUrls,
      slot: startSlot,
      slots: Math.ceil((Date.now() / 1000 - w.epoch) / slotSeconds),
    });
    return {
      resumed: canResume,
      urls: demoUrls,
      merchants: named.map((m) => {
        const address = m.key.address.toLowerCase();
        return {
          id: m.id,
          name: m.name,
          title: m.title,
          address,
          report: `${publicUrl}/reports/base/${address}`,
          badge: `${publicUrl}/badges/base/${address}.svg`,
          api: m.api,
        };
      }),
      ready,
      failed,
      stop: () => lifecycle.close(DEMO_CLOSE_TIMEOUT_MS),
    };
  } catch (error) {
    await lifecycle.close(DEMO_CLOSE_TIMEOUT_MS);
    throw error;
  }
}

/**
 * The line a crash cut short held a payment the simulator settled. When the saved chain ends at or before
 * the block the truth was complete to, that payment is not on it either (a batch is appended before the
 * block it completes is recorded), and nothing is lost; past it, the chain may hold payments the truth
 * now lacks, and the user must know the check may blame the reports for them.
 */
function tornNote(truthFile: string, line: number, completeTo: number | undefined, head: number): string {
  const dropped = `${truthFile} line ${line} was cut short by a crash or a full disk: dropped it`;
  if (completeTo !== undefined && head <= completeTo) return dropped;
  const from = completeTo === undefined ? "" : ` of blocks ${completeTo + 1} to ${head}`;
  return `${dropped}; the saved chain may hold payments${from} that the ground truth now lacks, for which simulate --check could blame the reports (--fresh starts a week it can check whole)`;
}
