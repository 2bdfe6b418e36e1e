/**
 * What the demo does with what its data directory holds: start a fresh week, resume, or stop naming the
 * file, and with --fresh delete only its own week. The decision is tested on what the files say; the
 * command itself, on a torn world.json, in test/cli/demo.test.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { dataLayout } from "../../src/config/layout.ts";
import { CHANNELS_OFF, CLUSTER_EVASIONS_OFF, DEFAULT_MIX, EVASIONS_OFF } from "../../src/demo/mix.ts";
import {
  DemoError,
  type DemoFiles,
  inspectDemoFiles,
  planStart,
  prepareStart,
  readWorld,
  type StoreKind,
  storeKind,
  type World,
} from "../../src/demo/resume.ts";

const DIR = "/data";
const layout = dataLayout(DIR);
const STATE = path.join(layout.demo.chain, "state.json.gz");
const WORLD: World = { version: 1, genesisTime: 1_000, epoch: 2_200, mix: DEFAULT_MIX };
const EMPTY: DemoFiles = { world: { state: "absent" }, chain: undefined, others: [], analytics: false };
const WEEK: DemoFiles = {
  world: { state: "whole", world: WORLD },
  chain: "chain/state.json.gz",
  others: ["merchants.ndjson", "truth-complete.json", "truth.ndjson"],
  analytics: true,
};

/** The plan, and whether the analytics database had to be opened to make it. */
async function plan(files: DemoFiles, fresh = false, store: StoreKind = "demo") {
  let opened = 0;
  const result = await planStart(DIR, files, {
    fresh,
    store: async () => {
      opened++;
      return store;
    },
  });
  return { ...result, opened };
}

describe("planStart", () => {
  it("starts a fresh week in an empty data directory, with no flag", async () => {
    expect(await plan(EMPTY)).toEqual({ start: "fresh", opened: 0 });
    // An empty store (or the sample week that `npm start` loaded before the demo) holds nothing to keep.
    expect(await plan({ ...EMPTY, analytics: true }, false, "empty")).toEqual({ start: "fresh", opened: 1 });
    expect(await plan({ ...EMPTY, analytics: true }, false, "sample")).toEqual({ start: "fresh", opened: 1 });
  });

  it("resumes a whole week without opening the analytics database", async () => {
    expect(await plan(WEEK)).toEqual({ start: "resume", world: WORLD, opened: 0 });
  });

  it("stops at a world.json that is torn or of another version, naming it, deleting nothing", async () => {
    for (const reason of ["is not JSON (Unexpected end of JSON input)", "is of version 2, not 1"]) {
      const result = await plan({ ...WEEK, world: { state: "damaged", reason } });
      expect(result).toMatchObject({ start: "refuse", opened: 0 });
      expect(result.start === "refuse" && result.reason).toBe(
        `${layout.demo.world} ${reason}, so the demo cannot resume its week: restore it, or start afresh with --fresh (npm start -- --fresh), which deletes ${layout.demo.dir} and ${layout.analytics.file}`,
      );
    }
  });

  it("stops when the chain of a world is missing, naming it", async () => {
    const result = await plan({ ...WEEK, chain: undefined });
    expect(result).toMatchObject({ start: "refuse", opened: 0 });
    expect(result.start === "refuse" && result.reason).toMatch(
      new RegExp(
        `^${STATE} is missing, so the week ${layout.demo.world} describes cannot resume: restore it, or start afresh with --fresh`,
      ),
    );
  });

  it("stops when the world of a chain, a ground truth or a demo's store is missing, naming what is there", async () => {
    const chainOnly = await plan({ ...EMPTY, chain: "chain/state.json.gz", analytics: true });
    expect(chainOnly.start === "refuse" && chainOnly.reason).toMatch(
      new RegExp(
        `^${layout.demo.world} is missing but ${layout.demo.dir} holds chain/state.json.gz: restore it, or start afresh with --fresh`,
      ),
    );
    const truthOnly = await plan({ ...EMPTY, others: ["truth-complete.json", "truth.ndjson"] });
    expect(truthOnly.start === "refuse" && truthOnly.reason).toMatch(
      /is missing but \/data\/demo holds truth-complete.json, truth.ndjson: restore it, or start afresh with --fresh \(npm start -- --fresh\), which deletes \/data\/demo$/,
    );
    expect(chainOnly.opened + truthOnly.opened).toBe(0);
    const storeOnly = await plan({ ...EMPTY, analytics: true }, false, "demo");
    expect(storeOnly).toMatchObject({ start: "refuse", opened: 1 });
    expect(storeOnly.start === "refuse" && storeOnly.reason).toMatch(
      new RegExp(
        `^${layout.demo.world} is missing but ${layout.analytics.file} holds a demo's week: restore ${layout.demo.dir}, or start afresh with --fresh`,
      ),
    );
  });

  it("with --fresh, starts afresh whatever the demo's files hold, but never over a store that is not the demo's", async () => {
    for (const files of [
      WEEK,
      { ...WEEK, world: { state: "damaged", reason: "is not JSON (x)" } } as const,
      { ...WEEK, chain: undefined },
    ]) {
      expect(await plan(files, true, "demo")).toEqual({ start: "fresh", opened: 1 });
    }
    expect(await plan({ ...WEEK, analytics: false }, true)).toEqual({ start: "fresh", opened: 0 });
    const foreign = await plan(WEEK, true, "foreign");
    expect(foreign.start === "refuse" && foreign.reason).toBe(
      "/data holds an analytics database that is not the demo's: give the demo its own directory (--data DIR or X402M_DATA)",
    );
    const foreignAlone = await plan({ ...EMPTY, analytics: true }, false, "foreign");
    expect(foreignAlone.start).toBe("refuse");
  });
});

describe("what the files say", () => {
  const dataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-resume-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  it("finds nothing in a directory a failed first start left (empty demo and chain folders)", () => {
    const dir = dataDir();
    expect(inspectDemoFiles(dir)).toEqual(EMPTY);
    fs.mkdirSync(path.join(dir, "demo", "chain"), { recursive: true });
    expect(inspectDemoFiles(dir)).toEqual(EMPTY);
  });

  it("reads a whole world, and tells a torn one and another version's apart from an absent one", () => {
    const dir = dataDir();
    const { demo } = dataLayout(dir);
    fs.mkdirSync(demo.chain, { recursive: true });
    const whole = `${JSON.stringify(WORLD, null, 2)}\n`;
    fs.writeFileSync(demo.world, whole);
    // The chain as an earlier version saved it, then as this one does (it wins when both are there).
    fs.writeFileSync(path.join(demo.chain, "state.json"), "{}");
    fs.writeFileSync(demo.truth, "");
    const files = { world: { state: "whole", world: WORLD }, others: ["truth.ndjson"], analytics: false };
    expect(inspectDemoFiles(dir)).toEqual({ ...files, chain: "chain/state.json" });
    fs.writeFileSync(path.join(demo.chain, "state.json.gz"), "");
    expect(inspectDemoFiles(dir)).toEqual({ ...files, chain: "chain/state.json.gz" });
    fs.writeFileSync(path.join(demo.chain, "state.json.gz.tmp"), "");
    expect(inspectDemoFiles(dir).others).toEqual(["chain/state.json.gz.tmp", "truth.ndjson"]);
    fs.rmSync(path.join(demo.chain, "state.json.gz.tmp"));

    fs.writeFileSync(demo.world, whole.slice(0, 30));
    expect(readWorld(demo.world)).toMatchObject({
      state: "damaged",
      reason: expect.stringMatching(/^is not JSON \(/),
    });
    fs.writeFileSync(demo.world, JSON.stringify({ ...WORLD, version: 2 }));
    expect(readWorld(demo.world)).toEqual({
      state: "damaged",
      reason: "is of version 2, not 1, the one this x402-merchants reads",
    });
    fs.writeFileSync(demo.world, JSON.stringify({ ...WORLD, epoch: "soon" }));
    expect(readWorld(demo.world)).toMatchObject({
      state: "damaged",
      reason: expect.stringMatching(/^is not a demo's world \(epoch: /),
    });
    fs.rmSync(demo.world);
    expect(readWorld(demo.world)).toEqual({ state: "absent" });
  });

  it("resumes a world saved before the evasions, the channels or the cluster evasions without them, and one saved since with its own", () => {
    const dir = dataDir();
    const { demo } = dataLayout(dir);
    fs.mkdirSync(demo.dir, { recursive: true });
    const without = (off: object) =>
      Object.fromEntries(Object.entries(DEFAULT_MIX).filter(([key]) => !(key in off)));
    fs.writeFileSync(
      demo.world,
      JSON.stringify({ ...WORLD, mix: without({ ...EVASIONS_OFF, ...CHANNELS_OFF }) }),
    );
    // Their defaults would fund wallets in slots that world has already played.
    expect(readWorld(demo.world)).toEqual({
      state: "whole",
      world: { ...WORLD, mix: { ...DEFAULT_MIX, ...EVASIONS_OFF, ...CHANNELS_OFF } },
    });
    // Saved after the evasions and before the channels: its evasions, no channels.
    fs.writeFileSync(demo.world, JSON.stringify({ ...WORLD, mix: without(CHANNELS_OFF) }));
    expect(readWorld(demo.world)).toEqual({
      state: "whole",
      world: { ...WORLD, mix: { ...DEFAULT_MIX, ...CHANNELS_OFF } },
    });
    // Saved after the channels and before the cluster evasions: its channels, no cluster evasions.
    fs.writeFileSync(demo.world, JSON.stringify({ ...WORLD, mix: without(CLUSTER_EVASIONS_OFF) }));
    expect(readWorld(demo.world)).toEqual({
      state: "whole",
      world: { ...WORLD, mix: { ...DEFAULT_MIX, ...CLUSTER_EVASIONS_OFF } },
    });
    const own = { ...DEFAULT_MIX, distributorWallets: 5 };
    fs.writeFileSync(demo.world, JSON.stringify({ ...WORLD, mix: own }));
    expect(readWorld(demo.world)).toEqual({ state: "whole", world: { ...WORLD, mix: own } });
  });

  it("resumes over a last truth line cut short (the demo drops it), but stops at damage in the middle", async () => {
    const dir = dataDir();
    const { demo } = dataLayout(dir);
    fs.mkdirSync(demo.chain, { recursive: true });
    fs.writeFileSync(demo.world, JSON.stringify(WORLD));
    fs.writeFileSync(path.join(demo.chain, "state.json.gz"), "");
    const line = (block: number) =>
      JSON.stringify({
        tx_hash: `0x${block}`,
        block_number: block,
        payer: "0xc",
        pay_to: "0xa",
        amount: "1000",
        behaviour: "agent",
        merchant: "m",
        endpoint: "GET /x",
      });
    fs.writeFileSync(demo.truth, `${line(10)}\n${line(20)}\n${line(30).slice(0, 45)}`);
    expect((await prepareStart(dir, { fresh: false })).plan).toEqual({ start: "resume", world: WORLD });

    const damaged = `${line(10)}\n${line(20).slice(0, 45)}${line(30)}\n`;
    fs.writeFileSync(demo.truth, damaged);
    const error = await prepareStart(dir, { fresh: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DemoError);
    expect((error as DemoError).message).toMatch(
      new RegExp(
        `^${demo.truth} line 2 is not a ground-truth record \\(.+\\): the ground truth is damaged, and the demo would build on it; restore the file, or start afresh with --fresh`,
      ),
    );
    expect(fs.readFileSync(demo.truth, "utf8")).toBe(damaged);
  });

  it("tells a demo's analytics database from an empty one and from one holding other data", async () => {
    const dir = dataDir();
    (await Analytics.open({ dataDir: dir })).close();
    expect(await storeKind(dir)).toBe("empty");
    const marked = await Analytics.open({ dataDir: dir });
    await marked.run("INSERT INTO meta VALUES ('demo', 'true')");
    marked.close();
    expect(await storeKind(dir)).toBe("demo");
    const other = dataDir();
    const used = await Analytics.open({ dataDir: other });
    await used.run("INSERT INTO merchants (address, name) VALUES ('0x1', 'someone')");
    used.close();
    expect(await storeKind(other)).toBe("foreign");
  });
});
