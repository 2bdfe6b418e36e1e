/**
 * The weekly attester (src/reports/attest/attester.ts) against EAS on a devnet whose blocks come after the
 * analytics data's week (genesis at END + 1, as on Base an attestation follows the week it attests): one
 * attestation per week however often it is looked at, by a restarted service or by two at once; a lost
 * transaction sent again as the same bytes, one whose nonce went elsewhere signed again; the sealed reports
 * served frozen with their proofs, and never rebuilt.
 *
 * Each test has a store of its own, and one devnet mined on demand (blockTime 0) serves them all: each
 * counts the attestations of its own week (`attestationsOf`), whatever the others made.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  parseAbiItem,
  parseTransaction,
  stringToHex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importNdjson } from "../../../src/analytics/import.ts";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { BASE_RECORD } from "../../../src/chain/chains.ts";
import { type Devnet, devnetChain, startDevnet } from "../../../src/chain/devnet/index.ts";
import { EAS_ADDRESS, easAbi } from "../../../src/chain/eas/index.ts";
import { Attester } from "../../../src/reports/attest/attester.ts";
import { checkSealedWeeks } from "../../../src/reports/attest/check.ts";
import { decodeWeek, WEEK_SCHEMA_UID } from "../../../src/reports/attest/schema.ts";
import { canonicalJson, provesReport } from "../../../src/reports/attest/tree.ts";
import { verifyReport } from "../../../src/reports/attest/verify.ts";
import { WeekCloses } from "../../../src/reports/index.ts";
import type { FlagFeedDocument, FlagRecord } from "../../../src/reports/model.ts";
import { publishSite } from "../../../src/reports/publish/publish.ts";
import type { Report } from "../../../src/reports/schema.ts";
import { SealedWeeksDocumentSchema } from "../../../src/reports/serve/document-schemas.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { DEFAULT_MAX_COST_WEI } from "../../../src/services/attest-settings.ts";
import { addr, analyticsWith, checkpoint, END, ndjsonFile, payment, repeat } from "../../helpers/data.ts";
import { easOn } from "../../helpers/eas.ts";

const PUBLIC = "https://reports.test";
const NOW = new Date("2026-11-20T00:00:00Z");
/** Week closes at END: the window ending there is the attested week. */
const CLOSES = WeekCloses.everyWeekFrom(END % WEEK_BLOCKS);

let devnet: Devnet;
let client: ReturnType<typeof createPublicClient>;

/** Empties the node's pool, as a node restart or an RPC that never passed a transaction on would. */
async function dropAll(): Promise<void> {
  await fetch(devnet.rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_dropAllTransactions", params: [] }),
  });
}

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 8, blockTime: 0, genesisNumber: END + 1 });
  client = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  // The schema registered once for every test, so that each test's first step signs its week (registering it
  // is the demo's and the attester's first step on a fresh chain: test/demo/demo.test.ts).
  await easOn(devnet, keyOf(5)).register();
});
afterAll(() => devnet?.stop());

/** A store with two merchants' week ending at END (a farm's tiny repeats flagged), a distinct one per `seed`. */
async function store(seed: string) {
  const shop = addr(`attest-shop-${seed}`);
  const other = addr(`attest-other-${seed}`);
  const analytics = await analyticsWith([
    ...repeat(12, { payer: addr(`attest-farm-${seed}`), payTo: shop, amount: 100 }),
    ...repeat(3, { payer: addr(`attest-buyer-${seed}`), payTo: shop, amount: 2_000_000 }),
    ...repeat(2, { payer: addr(`attest-buyer2-${seed}`), payTo: other, amount: 1_500_000 }),
  ]);
  const reports = new ReportService(analytics, { publicUrl: PUBLIC, now: () => NOW });
  return { analytics, reports, shop, other };
}

function attesterOf(world: Awaited<ReturnType<typeof store>>, key: Hex, maxCostWei?: bigint) {
  return new Attester({
    reports: world.reports,
    analytics: world.analytics,
    rpc: devnet.rpc,
    key,
    closes: CLOSES,
    maxCostWei: maxCostWei ?? DEFAULT_MAX_COST_WEI,
  });
}

const keyOf = (i: number) => (devnet.buyers[i] as { privateKey: Hex }).privateKey;

/** Steps until the week is attested, mining between them; the steps taken. */
async function attestFully(attester: Attester): Promise<string[]> {
  const steps: string[] = [];
  for (let i = 0; i < 6; i++) {
    const step = (await attester.attestDue()).get(END) ?? "none";
    steps.push(step);
    if (step === "attested" || step === "found" || step === "sealed_only") return steps;
    await devnet.mine();
  }
  return steps;
}

/** The attestations on chain of the week ending at END by `attester` whose root is `root`. */
async function attestationsOf(attester: string, root: string): Promise<Hex[]> {
  const logs = await client.getLogs({
    address: EAS_ADDRESS,
    event: parseAbiItem(
      "event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID)",
    ),
    args: { attester: attester as Hex, schemaUID: WEEK_SCHEMA_UID },
    fromBlock: 0n,
  });
  const uids: Hex[] = [];
  for (const entry of logs) {
    const a = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [entry.args.uid as Hex],
    });
    const week = decodeWeek(a.data);
    if (week.endBlock === END && week.reportsRoot === root) uids.push(entry.args.uid as Hex);
  }
  return uids;
}

describe("the attester", () => {
  it("attests a closed week once, and its reports are then served frozen with their proofs", async () => {
    const world = await store("once");
    const attester = attesterOf(world, keyOf(0));
    const before = (await world.reports.report(world.shop, END)).report;
    expect(before.frozen).toBe(false);
    expect(before.attestation).toBeUndefined();

    const steps = await attestFully(attester);
    expect(steps.at(-1)).toBe("attested");
    const { report } = await world.reports.report(world.shop, END);
    expect(report.frozen).toBe(true);
    const field = report.attestation;
    if (!field) throw new Error("no attestation field");
    expect(field).toMatchObject({
      chain_id: 8453,
      eas: EAS_ADDRESS.toLowerCase(),
      schema: WEEK_SCHEMA_UID,
      attester: attester.address.toLowerCase(),
    });
    expect(provesReport(field.root as Hex, report, field.proof as Hex[], BASE_RECORD)).toBe(true);
    // As anyone checks it, with nothing but the RPC (src/reports/attest/verify.ts).
    expect(await verifyReport(report, client as PublicClient, { attester: attester.address })).toMatchObject({
      address: world.shop,
      endBlock: END,
      uid: field.uid,
    });
    // Every report of the week, read in batches, carries its proof against the same root.
    const { reports } = await world.reports.reports(END);
    expect(reports.map((r) => r.address).sort()).toEqual([world.shop, world.other].sort());
    for (const r of reports)
      expect(provesReport(field.root as Hex, r, r.attestation?.proof as Hex[], BASE_RECORD)).toBe(true);
    // The chain states the window, the methodology and the root.
    const onChain = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [field.uid as Hex],
    });
    expect(decodeWeek(onChain.data)).toMatchObject({
      startBlock: report.window.start_block,
      endBlock: END,
      methodology: report.methodology.version,
      reportsRoot: field.root,
      reports: 2,
      publicUrl: PUBLIC,
    });

    // The list of sealed weeks names it with its attestation, as the schema the MCP tool declares says.
    const listed = SealedWeeksDocumentSchema.parse(await world.reports.weeks());
    expect(listed.weeks).toEqual([
      expect.objectContaining({
        end_block: END,
        start_block: report.window.start_block,
        root: field.root,
        reports: 2,
        attestation: expect.objectContaining({
          uid: field.uid,
          tx: field.tx,
          attester: field.attester,
          chain_id: 8453,
        }),
        conflict_uid: null,
      }),
    ]);

    // `check` finds every sealed report proving against its root, and one changed in the store.
    expect(await checkSealedWeeks(world.analytics)).toEqual([
      { ok: true, subject: "sealed weeks", text: "1 week, 2 reports, each proves against its week's root" },
    ]);
    await world.analytics.run(
      `UPDATE attested_reports SET body = replace(body, '"tx":15', '"tx":16') WHERE address = $shop`,
      { shop: world.shop },
    );
    expect(await checkSealedWeeks(world.analytics)).toEqual([
      expect.objectContaining({
        ok: false,
        problem: "data",
        text: expect.stringContaining(`${world.shop} first`),
      }),
    ]);
    await world.analytics.run(
      `UPDATE attested_reports SET body = replace(body, '"tx":16', '"tx":15') WHERE address = $shop`,
      { shop: world.shop },
    );

    // Looked at again, by this attester and by a restarted service's: nothing more is sent.
    expect((await attester.attestDue()).get(END)).toBe("sealed_only");
    const restarted = new ReportService(world.analytics, { publicUrl: PUBLIC });
    const again = attesterOf({ ...world, reports: restarted }, keyOf(0));
    expect((await again.attestDue()).get(END)).toBe("sealed_only");
    expect(await attestationsOf(attester.address, field.root)).toEqual([field.uid]);
    world.analytics.close();
  });

  it("publishes an attested week whose every report verifies, and whose feed hashes to what was attested", async () => {
    const world = await store("published");
    const attester = attesterOf(world, keyOf(1));
    // Rendered before the week is attested, and kept (serve/answers.ts) until the attestation is recorded.
    const routes = reportRoutes(world.reports, { notice: async () => undefined, unlogged: true });
    const served = async () =>
      (await (await routes.request(`/v1/reports/base/${world.shop}?end_block=${END}`)).json()) as Report;
    expect((await served()).frozen).toBe(false);
    expect((await attestFully(attester)).at(-1)).toBe("attested");
    expect((await served()).frozen).toBe(true);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-attested-site-"));
    try {
      const site = path.join(tmp, "site");
      const manifest = await publishSite(async (url) => routes.request(url), site, {
        version: "test",
        license: "https://creativecommons.org/licenses/by/4.0/",
        endBlock: END,
        merchants: async (end) => ({
          notice: undefined,
          batches: (await world.reports.readMerchants(end)).batches,
        }),
      });
      const lines = (file: string) =>
        fs
          .readFileSync(path.join(site, "v1", "datasets", "base", file), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      const reports = lines("reports.ndjson") as unknown as Report[];
      expect(reports).toHaveLength(2);
      for (const report of reports) {
        expect(
          await verifyReport(report, client as PublicClient, { attester: attester.address }),
        ).toMatchObject({
          endBlock: END,
        });
        // Each merchant's own file is the same report, as verifiable.
        const own = manifest.files.find((f) => f.path === `/v1/reports/base/${report.address}`);
        const file = JSON.parse(fs.readFileSync(path.join(site, own?.file as string), "utf8")) as Report;
        expect(file).toEqual(report);
      }
      // The feed: the manifest names the attestation, and the published rows hash to the attested feed hash.
      const feed = keccak256(
        stringToHex(
          lines("flags.ndjson")
            .map((row) => `${canonicalJson(row)}\n`)
            .join(""),
        ),
      );
      expect(lines("flags.ndjson").length).toBeGreaterThan(0);
      expect(manifest.attestation).toMatchObject({ uid: reports[0]?.attestation?.uid, feed_hash: feed });
      const onChain = await client.readContract({
        address: EAS_ADDRESS,
        abi: easAbi,
        functionName: "getAttestation",
        args: [manifest.attestation?.uid as Hex],
      });
      expect(decodeWeek(onChain.data).feedHash).toBe(feed);
      const page = (await (
        await routes.request(`/v1/flags/base?end_block=${END}`)
      ).json()) as FlagFeedDocument;
      expect(page.attestation).toEqual(manifest.attestation);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      world.analytics.close();
    }
  });

  it("serves a sealed week as sealed when its data or its public URL changes, and keeps it stored", async () => {
    const world = await store("changed");
    await attestFully(attesterOf(world, keyOf(0)));
    const sealed = (await world.reports.report(world.shop, END)).report;
    await importNdjson(
      world.analytics,
      ndjsonFile([
        payment({ payer: addr("attest-late"), payTo: world.shop, amount: 9_000_000, block: END - 5 }),
      ]),
    );
    const after = (await world.reports.report(world.shop, END)).report;
    expect(after).toEqual(sealed);
    // Nor when the service moves to another public URL: its links stay those the week was sealed with.
    const moved = new ReportService(world.analytics, { publicUrl: "https://moved.test" });
    expect((await moved.report(world.shop, END)).report).toEqual(sealed);
    const rows: FlagRecord[] = [];
    for await (const batch of (await moved.readFlags(END)).batches) rows.push(...batch);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.evidence.startsWith(`${PUBLIC}/`)).toBe(true);
    // Nor dropped to make room: a service keeping one window builds two others, and the week stays sealed.
    const stored = () =>
      world.analytics.all("SELECT generated_at FROM report_windows WHERE end_block = $end", { end: END });
    const before = await stored();
    const narrow = new ReportService(world.analytics, { publicUrl: PUBLIC, keepWindows: 1 });
    await narrow.build(END - 10);
    await narrow.build(END - 20);
    expect(await stored()).toEqual(before);
    expect(before).toHaveLength(1);
    world.analytics.close();
  });

  it("makes one attestation when two services attest the same week at once", async () => {
    const [a, b] = await Promise.all([store("twice"), store("twice")]);
    const key = keyOf(2);
    const [first, second] = [attesterOf(a, key), attesterOf(b, key)];
    const steps = await Promise.all([first.attestDue(), second.attestDue()]);
    expect(steps.map((s) => s.get(END)).sort()).toContain("sent");
    await devnet.mine();
    const ends = [await attestFully(first), await attestFully(second)];
    // Same store contents, same nonce, same fees: often the very same bytes, so both find their receipt.
    for (const end of ends) expect(["attested", "found"]).toContain(end.at(-1));
    const [ra, rb] = [
      (await a.reports.report(a.shop, END)).report,
      (await b.reports.report(b.shop, END)).report,
    ];
    expect(ra.attestation?.uid).toBe(rb.attestation?.uid);
    expect(await attestationsOf(first.address, ra.attestation?.root as string)).toHaveLength(1);
    a.analytics.close();
    b.analytics.close();
  });

  it("sends a lost transaction again as the same bytes, and signs again only when its nonce went elsewhere", async () => {
    const world = await store("lost");
    const key = keyOf(3);
    const attester = attesterOf(world, key);
    const sealed = async () =>
      world.analytics.one<{ tx: string; raw_tx: string; nonce: number }>(
        "SELECT tx, raw_tx, nonce::DOUBLE AS nonce FROM attestations WHERE end_block = $end",
        { end: END },
      );
    expect((await attester.attestDue()).get(END)).toBe("sent");
    const signed = await sealed();
    // Lost from the node's pool (a restart, an RPC that never passed it on): the same bytes again.
    await dropAll();
    expect((await attester.attestDue()).get(END)).toBe("rebroadcast");
    expect(await sealed()).toEqual(signed);
    await dropAll();
    // Its nonce spent by another transaction of the key: signed again, at the next nonce.
    const account = privateKeyToAccount(key);
    const wallet = createWalletClient({
      account,
      chain: devnetChain(devnet.rpc),
      transport: http(devnet.rpc),
    });
    await wallet.sendTransaction({ to: account.address, value: 0n, nonce: signed?.nonce });
    await devnet.mine();
    expect((await attester.attestDue()).get(END)).toBe("sent");
    const resigned = await sealed();
    expect(resigned?.nonce).toBe((signed?.nonce ?? 0) + 1);
    await devnet.mine();
    expect((await attester.attestDue()).get(END)).toBe("attested");
    const { report } = await world.reports.report(world.shop, END);
    expect(await attestationsOf(attester.address, report.attestation?.root as string)).toHaveLength(1);
    world.analytics.close();
  });

  it("replaces a transaction that waited too long with the same nonce at a higher fee: one attestation", async () => {
    const world = await store("stuck");
    const attester = new Attester({
      reports: world.reports,
      analytics: world.analytics,
      rpc: devnet.rpc,
      key: keyOf(6),
      closes: CLOSES,
      maxCostWei: DEFAULT_MAX_COST_WEI,
      replaceAfterMs: 0,
    });
    const signed = () =>
      world.analytics.one<{ tx: string; raw_tx: Hex; nonce: number }>(
        "SELECT tx, raw_tx, nonce::DOUBLE AS nonce FROM attestations WHERE end_block = $end",
        { end: END },
      );
    expect((await attester.attestDue()).get(END)).toBe("sent");
    const first = await signed();
    expect((await attester.attestDue()).get(END)).toBe("replaced");
    const second = await signed();
    expect(second?.nonce).toBe(first?.nonce);
    expect(parseTransaction(second?.raw_tx as Hex).maxFeePerGas).toBeGreaterThan(
      parseTransaction(first?.raw_tx as Hex).maxFeePerGas as bigint,
    );
    await devnet.mine();
    expect((await attester.attestDue()).get(END)).toBe("attested");
    const { report } = await world.reports.report(world.shop, END);
    expect(report.attestation?.tx).toBe(second?.tx);
    expect(await attestationsOf(attester.address, report.attestation?.root as string)).toHaveLength(1);
    world.analytics.close();
  });

  it("sends nothing over its budget, and attests no week that has not closed", async () => {
    const world = await store("budget");
    const attester = attesterOf(world, keyOf(4), 1n);
    expect((await attester.attestDue()).get(END)).toBe("over_budget");
    expect(
      await world.analytics.one("SELECT tx FROM attestations WHERE end_block = $end", { end: END }),
    ).toEqual({
      tx: null,
    });
    // Weeks closing one block after the last checkpoint: the last closed one is a week earlier, which is
    // sealed; the one after the checkpoint is not looked at.
    const later = new Attester({
      reports: world.reports,
      analytics: world.analytics,
      rpc: devnet.rpc,
      key: keyOf(4),
      closes: WeekCloses.everyWeekFrom((END + 1) % WEEK_BLOCKS),
      maxCostWei: 1n,
    });
    expect([...(await later.attestDue()).keys()]).toEqual([END + 1 - WEEK_BLOCKS]);
    // A week later, the week still unattested is where a new attester picks up, not the last week closed.
    await importNdjson(world.analytics, ndjsonFile([checkpoint(END + WEEK_BLOCKS)]));
    const restarted = attesterOf(world, keyOf(4), 1n);
    expect([...(await restarted.attestDue()).entries()]).toEqual([[END, "over_budget"]]);
    world.analytics.close();
  });
});
