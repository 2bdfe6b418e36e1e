/**
 * Whether the demo starts a fresh week, resumes the one its data directory holds, or stops. A week is
 * `demo/world.json` (the world's clock and population) with the chain it describes (`demo/chain/state.json.gz`),
 * the ground truth beside them and the analytics database the indexer filled. Nothing of it is deleted
 * unless `--fresh` asks:
 *
 * - nothing there (no file in `demo/`, no analytics database or an empty one): a fresh week;
 * - world.json whole and the chain saved: resume;
 * - world.json damaged or of another version, or one of the two missing, or a ground truth or a demo's
 *   analytics database without them: stop, naming the file to restore (or `--fresh`);
 * - `--fresh`: delete the demo's folder and its analytics database, and start a fresh week; an analytics
 *   database that is not the demo's stops it even then.
 *
 * The analytics database is opened only when the answer depends on it, so a refusal touches no file.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { Analytics } from "../analytics/duckdb.ts";
import { findSavedChain, LEGACY_CHAIN_FILE, SAVED_CHAIN_FILE } from "../chain/devnet/index.ts";
import { SOLANA_SLUG } from "../chain/solana/constants.ts";
import { AppError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import { readServiceRecord } from "../config/service-record.ts";
import { FURTHER_CHAINS } from "./further-chains.ts";
import { CHANNELS_OFF, CLUSTER_EVASIONS_OFF, EVASIONS_OFF, type Mix, MixSchema } from "./mix.ts";
import { SLOT_SECONDS, slotSecondsFor } from "./plan-types.ts";
import { readTruthComplete, scanTruth, TruthError } from "./truth.ts";

export class DemoError extends AppError {
  constructor(message: string) {
    super(500, "demo_failed", message);
  }
}

/** What a demo's data directory remembers between starts. */
export interface World {
  version: 1;
  /** Chain time of block 0. */
  genesisTime: number;
  /** Chain time of the simulator's slot 0. */
  epoch: number;
  mix: Mix;
  /**
   * Number of the chain's first block (default 0). A week played in fewer days starts its chain this high,
   * numbered and dated as if the week's first days were there: its window is a whole week.
   */
  genesisNumber?: number;
  /** Chain seconds a slot of the plan lasts (default 1,800: the week in seven days). */
  slotSeconds?: number;
  /**
   * The chains played beside Base, by slug (`arbitrum`): each its own devnet under `demo/<slug>/`. A world
   * saved before there were any plays Base alone, as it did.
   */
  chains?: string[];
  /**
   * Whether a Solana week is played beside them (issue 86 item 7), its truth under `demo/solana/`: once, as its
   * chain lives in memory (solana-week.ts). A world saved before there was one plays none.
   */
  solana?: boolean;
}

const WORLD_VERSION = 1;

const WorldSchema = z.object({
  version: z.literal(WORLD_VERSION),
  genesisTime: z.number().int(),
  epoch: z.number().int(),
  genesisNumber: z.number().int().min(0).optional(),
  slotSeconds: z.number().int().min(slotSecondsFor(1)).max(SLOT_SECONDS).optional(),
  chains: z.array(z.enum(FURTHER_CHAINS)).optional(),
  solana: z.boolean().optional(),
  // Unknown keys are let through, as before this check: a world that resumed then still resumes. A world
  // saved before the evasions, the channels or the cluster evasions existed lacks their fields, and plays
  // none of them (mix.ts, EVASIONS_OFF, CHANNELS_OFF, CLUSTER_EVASIONS_OFF).
  mix: z.preprocess(
    (mix) =>
      mix !== null && typeof mix === "object"
        ? { ...EVASIONS_OFF, ...CHANNELS_OFF, ...CLUSTER_EVASIONS_OFF, ...mix }
        : mix,
    z.object(MixSchema.shape),
  ),
});

export type WorldFile =
  | { state: "absent" }
  | { state: "whole"; world: World }
  /** `reason` completes "world.json ...": "is not JSON (...)", "is of version 2, ...". */
  | { state: "damaged"; reason: string };

/** What the data directory holds, as far as the files tell without opening the analytics database. */
export interface DemoFiles {
  world: WorldFile;
  /** The saved chain relative to `demo/` (`chain/state.json.gz`, or an earlier version's `chain/state.json`), if any. */
  chain: string | undefined;
  /** Every other file under `demo/` (the ground truth and the rest), relative to it. */
  others: string[];
  /** Whether `analytics.duckdb` exists. */
  analytics: boolean;
}

/**
 * What an analytics database holds: nothing (`empty`), a demo's week (`demo`), the sample week `npm start`
 * loaded before the demo existed (`sample`, bundled data and so replaceable), or anything else (`foreign`).
 */
export type StoreKind = "empty" | "demo" | "sample" | "foreign";

export type StartPlan =
  | { start: "fresh" }
  | { start: "resume"; world: World }
  | { start: "refuse"; reason: string };

export function readWorld(file: string): WorldFile {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "absent" };
    return { state: "damaged", reason: `cannot be read (${(error as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { state: "damaged", reason: `is not JSON (${(error as Error).message})` };
  }
  const version = (value as { version?: unknown } | null)?.version;
  if (version !== WORLD_VERSION) {
    return {
      state: "damaged",
      reason: `is of version ${JSON.stringify(version ?? null)}, not ${WORLD_VERSION}, the one this x402-merchants reads`,
    };
  }
  const parsed = WorldSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      state: "damaged",
      reason: `is not a demo's world (${issue?.path.join(".")}: ${issue?.message})`,
    };
  }
  return { state: "whole", world: parsed.data };
}

/** Reads what the demo's files say; opens nothing. */
export function inspectDemoFiles(dataDir: string): DemoFiles {
  const layout = dataLayout(dataDir);
  const saved = findSavedChain(layout.demo.chain);
  const chainFiles = [SAVED_CHAIN_FILE, LEGACY_CHAIN_FILE].map((name) => path.join(layout.demo.chain, name));
  const others = listFiles(layout.demo.dir).filter(
    (file) => file !== layout.demo.world && !chainFiles.includes(file),
  );
  return {
    world: readWorld(layout.demo.world),
    chain: saved && path.relative(layout.demo.dir, saved.file),
    others: others.map((file) => path.relative(layout.demo.dir, file)).sort(),
    analytics: fs.existsSync(layout.analytics.file),
  };
}

/**
 * The decision, from what the files say and, only when it depends on it, what the analytics database
 * holds (`store`, called at most once). Refusals name the file and how to recover.
 */
export async function planStart(
  dataDir: string,
  files: DemoFiles,
  options: { fresh: boolean; store: () => Promise<StoreKind> },
): Promise<StartPlan> {
  const layout = dataLayout(dataDir);
  const stateFile = path.join(layout.demo.chain, SAVED_CHAIN_FILE);
  const notTheDemos = {
    start: "refuse",
    reason: `${dataDir} holds an analytics database that is not the demo's: give the demo its own directory (--data DIR or X402M_DATA)`,
  } as const;
  const afresh = `start afresh with --fresh (npm start -- --fresh), which deletes ${layout.demo.dir}${
    files.analytics ? ` and ${layout.analytics.file}` : ""
  }`;

  if (options.fresh) {
    return files.analytics && (await options.store()) === "foreign" ? notTheDemos : { start: "fresh" };
  }
  const { world } = files;
  if (world.state === "whole") {
    // A further chain that played something and lost its chain cannot resume; one that never got as far as its
    // first save (a start that stopped before it) starts afresh beside the resumed Base.
    const missing = (world.world.chains ?? []).find(
      (slug) =>
        !findSavedChain(layout.demo.further(slug).chain) && fs.existsSync(layout.demo.further(slug).truth),
    );
    if (files.chain && missing !== undefined) {
      return {
        start: "refuse",
        reason: `${path.join(layout.demo.further(missing).chain, SAVED_CHAIN_FILE)} is missing, so the week ${layout.demo.world} describes cannot resume on ${missing}: restore it, or ${afresh}`,
      };
    }
    if (files.chain) return { start: "resume", world: world.world };
    return {
      start: "refuse",
      reason: `${stateFile} is missing, so the week ${layout.demo.world} describes cannot resume: restore it, or ${afresh}`,
    };
  }
  if (world.state === "damaged") {
    return {
      start: "refuse",
      reason: `${layout.demo.world} ${world.reason}, so the demo cannot resume its week: restore it, or ${afresh}`,
    };
  }
  const held = [...(files.chain ? [files.chain] : []), ...files.others];
  if (held.length > 0) {
    return {
      start: "refuse",
      reason: `${layout.demo.world} is missing but ${layout.demo.dir} holds ${held.join(", ")}: restore it, or ${afresh}`,
    };
  }
  if (!files.analytics) return { start: "fresh" };
  const store = await options.store();
  if (store === "foreign") return notTheDemos;
  if (store === "demo") {
    return {
      start: "refuse",
      reason: `${layout.demo.world} is missing but ${layout.analytics.file} holds a demo's week: restore ${layout.demo.dir}, or ${afresh}`,
    };
  }
  return { start: "fresh" };
}

/**
 * The plan for `dataDir`, or a `DemoError` saying why the demo cannot start there: another process serves
 * it, the plan refuses, or the ground truth a resumed demo would append to is damaged. Reads files only,
 * and opens the analytics database only when the plan depends on it: nothing is changed.
 */
export async function prepareStart(
  dataDir: string,
  options: { fresh: boolean },
): Promise<{ plan: Exclude<StartPlan, { start: "refuse" }>; files: DemoFiles }> {
  const running = readServiceRecord(dataDir);
  if (running) {
    throw new DemoError(
      `${dataDir} is in use by a running demo or serve (PID ${running.pid}, ${running.url}): stop it first`,
    );
  }
  const files = inspectDemoFiles(dataDir);
  const plan = await planStart(dataDir, files, { fresh: options.fresh, store: () => storeKind(dataDir) });
  if (plan.start === "refuse") throw new DemoError(plan.reason);
  if (plan.start === "resume") {
    const demo = dataLayout(dataDir).demo;
    checkTruth(demo);
    for (const slug of [...(plan.world.chains ?? []), ...(plan.world.solana ? [SOLANA_SLUG] : [])])
      checkTruth(demo.further(slug));
  }
  return { plan, files };
}

/**
 * The ground truth a resumed demo appends to must read whole, but for a last line a crash cut short,
 * which the demo drops once its chain is up (`repairTruth`).
 */
function checkTruth(demo: { truth: string; truthComplete: string }): void {
  try {
    scanTruth(demo.truth);
    readTruthComplete(demo.truthComplete);
  } catch (error) {
    if (!(error instanceof TruthError)) throw error;
    throw new DemoError(
      `${error.message}: the ground truth is damaged, and the demo would build on it; restore the file, or start afresh with --fresh (npm start -- --fresh), which deletes the week`,
    );
  }
}

/** What the analytics database of `dataDir` holds (it must exist: opening creates one). */
export async function storeKind(dataDir: string): Promise<StoreKind> {
  const analytics = await Analytics.open({ dataDir });
  try {
    const marks = await analytics.all<{ key: string }>(
      "SELECT key FROM meta WHERE key IN ('demo', 'sample')",
    );
    if (marks.some((m) => m.key === "demo")) return "demo";
    if (marks.length > 0) return "sample";
    const used = await analytics.one<{ n: bigint }>(
      "SELECT (SELECT count(*) FROM payments) + (SELECT count(*) FROM merchants) + (SELECT count(*) FROM checkpoints) AS n",
    );
    return used?.n === 0n ? "empty" : "foreign";
  } finally {
    analytics.close();
  }
}

/** Deletes the demo's folder and its analytics database: only once `planStart` said "fresh". */
export function clearForFreshStart(dataDir: string): void {
  const layout = dataLayout(dataDir);
  for (const suffix of ["", ".wal"]) fs.rmSync(`${layout.analytics.file}${suffix}`, { force: true });
  fs.rmSync(layout.demo.dir, { recursive: true, force: true });
  fs.mkdirSync(layout.demo.dir, { recursive: true });
}

/** Every file under `dir` (absolute paths); none when it does not exist. Empty folders do not count. */
function listFiles(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return entries.flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? listFiles(file) : [file];
  });
}
