/**
 * Each chain's weeks sealed and attested apart (issue 67, item 5): one store holding Base's test week and a
 * Polygon week whose blocks say their own time, one attester on a Base devnet with EAS. Base's week is attested
 * under the week schema as before; Polygon's closes at its last block with data before Monday 00:00 UTC, is the
 * 7 days to that Monday, and is attested under the schema that names its chain. `verify` checks a report of
 * each, each chain lists its own sealed weeks, and a Polygon week's attestation is never taken for a Base week's.
 */
import { createPublicClient, type Hex, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { importNdjson } from "../../../src/analytics/import.ts";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { BASE_RECORD, POLYGON_RECORD } from "../../../src/chain/chains.ts";
import { type Devnet, devnetChain, startDevnet } from "../../../src/chain/devnet/index.ts";
import { EAS_ADDRESS, easAbi } from "../../../src/chain/eas/index.ts";
import { Attester, type WeekStep } from "../../../src/reports/attest/attester.ts";
import { checkSealedWeeks } from "../../../src/reports/attest/check.ts";
import { CHAIN_WEEK_SCHEMA_UID, decodeWeek, WEEK_SCHEMA_UID } from "../../../src/reports/attest/schema.ts";
import { verifyReport } from "../../../src/reports/attest/verify.ts";
import { WeekCloses } from "../../../src/reports/index.ts";
import { SealedWeeksDocumentSchema } from "../../../src/reports/serve/document-schemas.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { DEFAULT_MAX_COST_WEI } from "../../../src/services/attest-settings.ts";
import { addr, analyticsWith, checkpoint, END, ndjsonFile, payment } from "../../helpers/data.ts";
import { easOn } from "../../helpers/eas.ts";

const PUBLIC = "https://reports.test";
const NOW = new Date("2026-11-24T00:00:00Z");
/** Monday 2026-11-23 00:00 UTC: Polygon's week closes there. */
const MONDAY = Date.UTC(2026, 10, 23) / 1000;
const DAY = 86_400;
const shop = addr("attest-chains-shop");
const buyer = addr("attest-chains-buyer");
/** Polygon's blocks and their own times: no rule relates them. */
const CLOSE = 300_000;
const onPolygon = (block: number, time: number, amount: number) => ({
  ...payment({ payer: buyer, payTo: shop, amount, block }),
  chain: "polygon",
  block_time: time,
});
const polygonLines = [
  // The week before, then two payments in the week (the last a minute before Monday), one after it.
  onPolygon(1_000, MONDAY - 8 * DAY, 5_000_000),
  onPolygon(200_000, MONDAY - 3 * DAY, 1_000_000),
  onPolygon(CLOSE, MONDAY - 60, 250_000),
  onPolygon(CLOSE + 20, MONDAY + 10, 9_000_000),
  { type: "checkpoint", chain: "polygon", block_number: CLOSE + 100, block_time: MONDAY + 200 },
];

let devnet: Devnet;
let analytics: Analytics;
let base: ReportService;
let polygon: ReportService;
let attester: Attester;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 2, blockTime: 0, genesisNumber: END + 1 });
  await easOn(devnet, (devnet.buyers[1] as { privateKey: Hex }).privateKey).register();
  analytics = await analyticsWith([
    ...[1, 2, 3].map(() => payment({ payer: buyer, payTo: shop, amount: 2_000_000 })),
    checkpoint(END),
  ]);
  await importNdjson(analytics, ndjsonFile(polygonLines));
  base = new ReportService(analytics, { publicUrl: PUBLIC, now: () => NOW });
  polygon = new ReportService(await analytics.fork(), {
    publicUrl: PUBLIC,
    now: () => NOW,
    chain: POLYGON_RECORD,
  });
  attester = new Attester({
    reports: [base, polygon],
    analytics,
    rpc: devnet.rpc,
    key: (devnet.buyers[0] as { privateKey: Hex }).privateKey,
    closes: WeekCloses.everyWeekFrom(END % WEEK_BLOCKS),
    maxCostWei: DEFAULT_MAX_COST_WEI,
  });
}, 60_000);

afterAll(async () => {
  await attester?.stop();
  analytics?.close();
  await devnet?.stop();
});

describe("weeks attested per chain", () => {
  it("closes Polygon's week at its last block with data before Monday, the 7 days to that Monday", async () => {
    const { window, reports } = await polygon.reports(CLOSE);
    expect(window).toEqual({
      start_block: 1_000,
      end_block: CLOSE,
      complete: true,
      start: "2026-11-16T00:00:00+00:00",
      end: "2026-11-22T23:59:00+00:00",
      days: 7,
    });
    // The week's two payments, not the one of the week before nor the one after Monday.
    expect(reports.map((r) => [r.address, r.tx, r.usd])).toEqual([[shop, 2, 1.25]]);
  });

  it("attests each chain's closed week once, under its own schema, one transaction at a time", async () => {
    const seen: Record<string, WeekStep[]> = { base: [], polygon: [] };
    for (let i = 0; i < 10; i++) {
      const steps = await attester.attestEveryChain();
      for (const [slug, weeks] of steps) for (const step of weeks.values()) seen[slug]?.push(step);
      const done = (slug: string, end: number) => steps.get(slug)?.get(end) === "sealed_only";
      if (done("base", END) && done("polygon", CLOSE)) break;
      // Never two of the key's transactions waiting at once: a step that sent stops there.
      const sent = [...steps.values()].flatMap((w) => [...w.values()]).filter((s) => s === "sent");
      expect(sent.length).toBeLessThanOrEqual(1);
      await devnet.mine();
    }
    expect(seen.base).toContain("attested");
    expect(seen.polygon).toContain("registering");
    expect(seen.polygon).toContain("attested");

    const client = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
    const weeks = reportRoutes([base, polygon], {});
    const listed = async (slug: string) =>
      SealedWeeksDocumentSchema.parse(await (await weeks.request(`/v1/weeks/${slug}`)).json());
    const [baseWeeks, polygonWeeks] = [await listed("base"), await listed("polygon")];
    expect(baseWeeks.weeks.map((w) => w.end_block)).toEqual([END]);
    expect(polygonWeeks.weeks.map((w) => w.end_block)).toEqual([CLOSE]);
    const uid = polygonWeeks.weeks[0]?.attestation?.uid as Hex;
    const onChain = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [uid],
    });
    expect(onChain.schema).toBe(CHAIN_WEEK_SCHEMA_UID);
    expect(decodeWeek(onChain.data, onChain.schema)).toMatchObject({
      chain: "eip155:137",
      startBlock: 1_000,
      endBlock: CLOSE,
      reports: 1,
    });

    // Each chain's report verifies against its own week's attestation.
    const polygonReport = (await polygon.report(shop, CLOSE)).report;
    expect(polygonReport).toMatchObject({ chain: "polygon", frozen: true });
    expect(polygonReport.attestation?.schema).toBe(CHAIN_WEEK_SCHEMA_UID);
    expect(await verifyReport(polygonReport, client as never)).toMatchObject({ endBlock: CLOSE, uid });
    const baseReport = (await base.report(shop, END)).report;
    expect(baseReport.attestation?.schema).toBe(WEEK_SCHEMA_UID);
    expect(await verifyReport(baseReport, client as never)).toMatchObject({ endBlock: END });

    // A Polygon report claiming the Base week schema's attestation is refused, whatever its proof says.
    const claimed = {
      ...polygonReport,
      attestation: { ...polygonReport.attestation, schema: WEEK_SCHEMA_UID },
    };
    await expect(verifyReport(claimed, client as never)).rejects.toMatchObject({ code: "schema" });

    // Every sealed report of both chains still proves against its week's root.
    expect(await checkSealedWeeks(analytics)).toEqual([
      { ok: true, subject: "sealed weeks", text: "2 weeks, 2 reports, each proves against its week's root" },
    ]);
    // A later step does nothing more: both weeks are attested.
    const again = await attester.attestEveryChain();
    expect(again.get(BASE_RECORD.slug)?.get(END)).toBe("sealed_only");
    expect(again.get(POLYGON_RECORD.slug)?.get(CLOSE)).toBe("sealed_only");
  }, 60_000);
});
