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
import { SOLANA_SLUG } from "../chain/solana/constants.ts";
import type { Database } from "../common/db/index.ts";
import { Lifecycle } from "../common/lifecycle.ts";
import { type DemoChainFiles, dataLayout } from "../config/layout.ts";
import type { ReportService } from "../reports/index.ts";
import type { Config } from "../services/index.ts";
import { demoAttester } from "./attester.ts";
import { headOf, startChain } from "./chain.ts";
import { demoConfig } from "./demo-config.ts";
import type { DemoEvent, DemoOptions } from "./demo-options.ts";
import { type DemoMerchant, demoMerchants, merchantRecords, nameMerchants } from "./merchants.ts";
import { openWorld } from "./open-world.ts";
import { partFailure } from "./part-failure.ts";
import { SLOT_SECONDS, SLOTS_PER_WEEK } from "./plan-types.ts";
import { playFurtherChain, startFurtherDevnets } from "./play-further.ts";
import { playWeek } from "./play-week.ts";
import { DemoError, type World } from "./resume.ts";
import { demoNotice, startDemoServices } from "./services.ts";
import { type SimMerchant, simMerchants } from "./sim-merchants.ts";
import { loadDemoSocial } from "./social.ts";
import type { SolanaRun } from "./solana-week.ts";
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
    const solana = await startSolana(w, config, layout.further(SOLANA_SLUG), lifecycle, note);

    // Every merchant is paid into a devnet wallet of its own; the utility and its alias share one.
    const keys = merchantKeys();
    const progress = new WeekProgress();
    const furtherProgress = further.map(() => new WeekProgress(1)); // blocks as transactions come: week-progress.ts
    const { services, shops } = await startDemoServices({
      config: demoConfig(
        config,
        keys,
        further.map((run) => ({ slug: run.slug, rpc: run.devnet.rpc })),
        solana?.devnet.rpc,
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
      ...(solana && { solana: { rpc: solana.devnet.rpc, feePayerKey: solana.devnet.feePayer.secretKey } }),
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
        notice: demoNotice(further, w.solana === true),
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
    const solanaWeek = solana && playSolana(solana, merchants, w, analytics, controller.signal, emit);
    const simulators = [simulator, ...furtherSimulators, ...(solanaWeek ? [solanaWeek] : [])];
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
    const others = [...further.map((run) => run.slug), ...(w.solana ? [SOLANA_SLUG] : [])];
    const ready = whenReady(
      [
        ...[progress, ...furtherProgress].map((p) => p.played(controller.signal)),
        ...(solanaWeek ? [solanaWeek] : []),
      ],
      () => [
        service.leaderboard(),
        ...others.map((slug) => fetchOk(`${urls.reports}/v1/leaderboard/${slug}`)),
      ],
    );
    const shown = demoUrls(publicUrl, devnet.rpc, urls, services.urls.metrics, further, solana?.devnet.rpc);
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

/**
 * The local Solana when the world plays Solana and its week is still to play (solana-week.ts): a week a start
 * before this one indexed stays as it is, and no Solana is started.
 */
async function startSolana(
  world: World,
  config: Config,
  files: DemoChainFiles,
  lifecycle: Lifecycle,
  note: (message: string) => void,
): Promise<SolanaRun | undefined> {
  if (!world.solana) return undefined;
  // Loaded only for a Solana week: the SVM, its RPC server and the SDK's SVM client.
  const { solanaWeekDone, startDemoSolana } = await import("./solana-week.ts");
  if (solanaWeekDone(files)) {
    note(
      `Solana's week was played and indexed by an earlier start: it stays as ${files.dir} and the analytics database hold it (the local Solana lives in memory, so it is not started again)`,
    );
    return undefined;
  }
  if (fs.existsSync(files.truth))
    note(`Solana's week was not indexed before the demo stopped: playing it again on a fresh local Solana`);
  return await startDemoSolana(config.ports.devnetSolana, world, files, lifecycle);
}

/** Plays the Solana week over the world's week, telling its progress as a chain's simulator events. */
async function playSolana(
  run: SolanaRun,
  merchants: readonly SimMerchant[],
  world: World,
  analytics: Analytics,
  signal: AbortSignal,
  emit: (event: DemoEvent) => void,
): Promise<void> {
  const { playSolanaWeek } = await import("./solana-week.ts");
  const slotSeconds = world.slotSeconds ?? SLOT_SECONDS;
  const stats = await playSolanaWeek(
    run,
    merchants,
    { start: world.epoch, end: world.epoch + SLOTS_PER_WEEK * slotSeconds },
    analytics,
    {
      signal,
      onFailure: (reason) =>
        emit({
          type: "simulator",
          chain: SOLANA_SLUG,
          event: { type: "payment_failed", merchant: "solana", path: "", status: 0, reason },
        }),
    },
  );
  if (stats.kept)
    emit({
      type: "note",
      message: "Solana's week was in the store though not marked complete: kept it, marked it",
    });
  emit({
    type: "simulator",
    chain: SOLANA_SLUG,
    event: {
      type: "caught_up",
      slot: SLOTS_PER_WEEK,
      block: stats.slot,
      payments: stats.payments,
      failures: stats.failures,
    },
  });
}

/**
 * Settles once every week is played and indexed (Solana's once its one pass is in), then each chain's leaderboard
 * built once, as its readers will ask for it.
 */
function whenReady(weeks: readonly Promise<unknown>[], build: () => Promise<unknown>[]): Promise<void> {
  const ready = Promise.all(weeks)
    .then(() => Promise.all(build()))
    .then(() => undefined);
  ready.catch(() => undefined);
  return ready;
}

/** A GET that must answer 2xx (a leaderboard built once); a refusal is the demo's failure to show it. */
async function fetchOk(url: string): Promise<void> {
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new DemoError(`${url} answered ${response.status}`);
}
