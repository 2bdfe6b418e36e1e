/**
 * The demo: the whole service on a local Base chain in one process tree. anvil (the devnet, its own
 * process) with the project's USDC, Permit2 and x402's upto proxy; the project's facilitator; the utility
 * API, its alias host, the inference API (on its offline engine) and the demo shops, each a paid x402
 * host; the indexer following the chain into the analytics database; the report service; and the buyer
 * simulator paying the merchants through x402 (`exact`, `upto` for metered calls, payment channels) over a
 * compressed week.
 *
 * Everything is kept in the data directory (`demo/` for the chain, the world's clock and the ground
 * truth; the analytics database and the PostgreSQL state beside it), so a second start resumes the same chain where it
 * stopped and the simulator plays the time it missed. What it does with a directory that holds part of a
 * week, or a damaged one, is in resume.ts: it stops rather than delete anything not asked to (`fresh`).
 */
import fs from "node:fs";
import type { Analytics } from "../analytics/duckdb.ts";
import { importNdjson } from "../analytics/import.ts";
import type { Database } from "../common/db/index.ts";
import { Lifecycle } from "../common/lifecycle.ts";
import { dataLayout } from "../config/layout.ts";
import type { ReportService } from "../reports/index.ts";
import { demoAttester } from "./attester.ts";
import { headOf, startChain } from "./chain.ts";
import { demoConfig } from "./demo-config.ts";
import type { DemoEvent, DemoOptions } from "./demo-options.ts";
import { type DemoMerchant, demoMerchants, merchantRecords, nameMerchants } from "./merchants.ts";
import { openWorld } from "./open-world.ts";
import { partFailure } from "./part-failure.ts";
import { SLOT_SECONDS } from "./plan-types.ts";
import { playFurtherChain, startFurtherDevnets } from "./play-further.ts";
import { playWeek } from "./play-week.ts";
import { DemoError } from "./resume.ts";
import { demoNotice, startDemoServices } from "./services.ts";
import { simMerchants } from "./sim-merchants.ts";
import { loadDemoSocial } from "./social.ts";
import { repairTruthNotes } from "./truth-notes.ts";
import { type DemoUrls, demoUrls, type ServiceUrls } from "./urls.ts";
import { merchantKeys } from "./wallets.ts";
import { WeekProgress } from "./week-progress.ts";

// What the demo takes and tells, defined where the parts that make or read them can import them without
// importing this file back; its callers read them here.
export type { DemoEvent, DemoMerchant, DemoOptions, DemoUrls };
export { DemoError };

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

/** Stopping saves the chain, about 10 s for a week of blocks here (src/chain/devnet/saved-chain.ts). */
const DEMO_CLOSE_TIMEOUT_MS = 150_000;

/** Starts the demo; resolves once every service listens (the week is then played in the background). */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const { config } = options;
  const emit = options.onEvent ?? (() => undefined);
  const note = (message: string) => emit({ type: "note", message });
  const layout = dataLayout(config.dataDir).demo;
  const { world: w, resumed } = await openWorld(config.dataDir, options, note);

  const lifecycle = new Lifecycle();
  const controller = new AbortController();
  lifecycle.add("the simulation", () => controller.abort());
  try {
    const devnet = await startChain(config.ports.devnet, layout.chain, w);
    lifecycle.add("anvil", () => devnet.stop());
    const genesisNumber = w.genesisNumber ?? 0;
    const slotSeconds = w.slotSeconds ?? SLOT_SECONDS;
    if (!resumed) fs.writeFileSync(layout.world, `${JSON.stringify(w, null, 2)}\n`);
    const head = (await headOf(devnet)).number;
    for (const message of repairTruthNotes(layout.truth, layout.truthComplete, head)) note(message);
    // After Base's, not beside it: a further chain started while Base's fails (a port in use) would save a
    // chain the next start finds without its world.
    const further = await startFurtherDevnets(w, config, layout.further, lifecycle, note);

    // Every merchant is paid into a devnet wallet of its own; the utility and its alias share one.
    const keys = merchantKeys();
    const progress = new WeekProgress();
    const furtherProgress = further.map(() => new WeekProgress());
    const { services, shops } = await startDemoServices({
      config: demoConfig(
        config,
        keys,
        further.map((run) => ({ slug: run.slug, rpc: run.devnet.rpc })),
      ),
      lifecycle,
      devnet,
      shopKeys: keys.shops,
      fromBlock: genesisNumber,
      fundingLookback: options.fundingLookback,
      attest: await demoAttester(devnet, w, config),
      onIndexerEvent: (event) => {
        progress.indexer(event);
        if (event.type === "listings" || event.type === "listings_failed")
          for (const chain of furtherProgress) chain.listed();
        emit({ type: "indexer", event });
      },
      further: further.map((run, i) => ({
        slug: run.slug,
        devnet: run.devnet,
        onIndexerEvent: (event) => {
          furtherProgress[i]?.indexer(event);
          emit({ type: "indexer", chain: run.slug, event });
        },
      })),
    });
    const urls = services.urls as ServiceUrls;
    const analytics = services.analytics as Analytics;
    const service = services.reports as ReportService;
    const socialInputs = await loadDemoSocial(services.db as Database, w.genesisTime);
    const publicUrl = config.publicUrl ?? urls.reports;
    const named = nameMerchants(services, urls, keys, shops);
    fs.writeFileSync(layout.merchants, merchantRecords(named));
    // In a turn on the report service's connection: the indexer may already have set it building (on a
    // resume it starts from a checkpoint), and the import's transaction must not interleave with a build's.
    await analytics.exclusive(async () => {
      await analytics.run("INSERT OR REPLACE INTO meta VALUES ('notice', $notice), ('demo', 'true')", {
        notice: demoNotice(further),
      });
      await importNdjson(analytics, layout.merchants);
    });

    const merchants = simMerchants(named, socialInputs);
    const headTime = w.genesisTime + 2 * (head - genesisNumber);
    const startSlot = resumed ? Math.max(0, Math.floor((headTime - w.epoch) / slotSeconds) + 1) : 0;
    // Base's week: the world's population paying every merchant on Base.
    const simulator = playWeek(
      w,
      w.mix,
      { rpc: devnet.rpc, usdc: devnet.usdc, owner: devnet.owner, genesisNumber },
      {
        merchants,
        named,
        startSlot,
        files: layout,
        signal: controller.signal,
        onEvent: (event) => {
          progress.simulator(event);
          emit({ type: "simulator", event });
        },
      },
    );
    const furtherSimulators = further.map((run, i) =>
      playFurtherChain(run, i, {
        world: w,
        resumed,
        merchants,
        named,
        signal: controller.signal,
        onEvent: (event) => {
          furtherProgress[i]?.simulator(event);
          emit({ type: "simulator", chain: run.slug, event });
        },
      }),
    );
    const simulators = [simulator, ...furtherSimulators];
    lifecycle.add("simulator", async () => {
      controller.abort();
      await Promise.all(simulators.map((s) => s.catch(() => undefined)));
    });

    const failed = partFailure(
      simulators,
      services.failed,
      [devnet, ...further.map((run) => run.devnet)],
      controller.signal,
    );
    // Each chain's leaderboard built once, as its readers will ask for it, once every week is indexed.
    const ready = Promise.all([progress, ...furtherProgress].map((p) => p.played(controller.signal)))
      .then(() =>
        Promise.all([
          service.leaderboard(),
          ...further.map((run) => fetchOk(`${urls.reports}/v1/leaderboard/${run.slug}`)),
        ]),
      )
      .then(() => undefined);
    ready.catch(() => undefined);
    const shown = demoUrls(publicUrl, devnet.rpc, urls, services.urls.metrics, further);
    emit({
      type: "started",
      resumed,
      urls: shown,
      slot: startSlot,
      slots: Math.ceil((Date.now() / 1000 - w.epoch) / slotSeconds),
    });
    return {
      resumed,
      urls: shown,
      merchants: demoMerchants(named, publicUrl),
      ready,
      failed,
      stop: () => lifecycle.close(DEMO_CLOSE_TIMEOUT_MS),
    };
  } catch (error) {
    await lifecycle.close(DEMO_CLOSE_TIMEOUT_MS);
    throw error;
  }
}

/** A GET that must answer 2xx (a leaderboard built once); a refusal is the demo's failure to show it. */
async function fetchOk(url: string): Promise<void> {
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new DemoError(`${url} answered ${response.status}`);
}
