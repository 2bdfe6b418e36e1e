/**
 * Solana's weeks attested on Base with the others (issue 86, item 4): one store holding Base's test week and a
 * Solana week of slots dated by their own times, one attester on a Base devnet with EAS. Solana's week closes at
 * its last slot with data before Monday 00:00 UTC and is attested under the schema that names its chain
 * (`solana:5eykt…`), its reports' leaves naming the chain and each owner's 32-byte key (tree.ts); `verify`, in
 * process and on the command line, accepts each Solana report as its key is written, and refuses one moved to
 * another chain, another case, or another week's attestation.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getBase58Decoder } from "@solana/kit";
import { createPublicClient, type Hex, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { importNdjson } from "../../../src/analytics/import.ts";
import { WEEK_BLOCKS } from "../../../src/chain/base.ts";
import { BASE_RECORD, SOLANA_RECORD } from "../../../src/chain/chains.ts";
import { type Devnet, devnetChain, startDevnet } from "../../../src/chain/devnet/index.ts";
import { EAS_ADDRESS, easAbi } from "../../../src/chain/eas/index.ts";
import { Attester, type WeekStep } from "../../../src/reports/attest/attester.ts";
import { checkSealedWeeks } from "../../../src/reports/attest/check.ts";
import { CHAIN_WEEK_SCHEMA_UID, decodeWeek, WEEK_SCHEMA_UID } from "../../../src/reports/attest/schema.ts";
import { provesReport } from "../../../src/reports/attest/tree.ts";
import { verifyReport } from "../../../src/reports/attest/verify.ts";
import { WeekCloses } from "../../../src/reports/index.ts";
import { SealedWeeksDocumentSchema } from "../../../src/reports/serve/document-schemas.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { DEFAULT_MAX_COST_WEI } from "../../../src/services/attest-settings.ts";
import { addr, analyticsWith, checkpoint, END, ndjsonFile, payment } from "../../helpers/data.ts";
import { easOn, once } from "../../helpers/eas.ts";
import { runMain } from "../../helpers/in-process.ts";
import { solKey, solPayment } from "../../helpers/solana.ts";

const PUBLIC = "https://reports.test";
const NOW = new Date("2026-11-24T00:00:00Z");
/** Monday 2026-11-23 00:00 UTC: Solana's week closes there. */
const MONDAY = Date.UTC(2026, 10, 23) / 1000;
const DAY = 86_400;
const baseShop = addr("attest-solana-base-shop");
const buyer = solKey("attest-solana-buyer");
const shop = solKey("attest-solana-shop");
/**
 * An owner whose first 12 bytes are zero (base58: leading `1`s): its 32 bytes are an EVM address's ABI word, the
 * case an untagged leaf would let collide with an EVM merchant's.
 */
const padded = getBase58Decoder().decode(
  new Uint8Array([...new Array(12).fill(0), ...new Array(20).fill(0xab)]),
);
/** Slots and their own times. */
const CLOSE = 400_000_000;
const onSolana = (payTo: string, slot: number, time: number, amount: number) => ({
  ...solPayment({ payer: buyer, payTo, amount, slot }),
  block_time: time,
});
const solanaLines = [
  // The week before, then payments in the week (the last a minute before Monday), one after it.
  onSolana(shop, CLOSE - 1_700_000, MONDAY - 8 * DAY, 5_000_000),
  onSolana(shop, CLOSE - 600_000, MONDAY - 3 * DAY, 1_000_000),
  onSolana(padded, CLOSE - 300_000, MONDAY - 2 * DAY, 2_000_000),
  onSolana(shop, CLOSE, MONDAY - 60, 250_000),
  onSolana(shop, CLOSE + 50, MONDAY + 10, 9_000_000),
  { type: "checkpoint", chain: "solana", block_number: CLOSE + 500, block_time: MONDAY + 200 },
];

let devnet: Devnet;
let analytics: Analytics;
let base: ReportService;
let solana: ReportService;
let attester: Attester;
let dir: string;

beforeAll(async () => {
  devnet = await startDevnet({ port: 0, buyers: 2, blockTime: 0, genesisNumber: END + 1 });
  await easOn(devnet, (devnet.buyers[1] as { privateKey: Hex }).privateKey).register();
  analytics = await analyticsWith([
    ...[1, 2].map(() =>
      payment({ payer: addr("attest-solana-base-buyer"), payTo: baseShop, amount: 2_000_000 }),
    ),
    checkpoint(END),
  ]);
  await importNdjson(analytics, ndjsonFile(solanaLines));
  base = new ReportService(analytics, { publicUrl: PUBLIC, now: () => NOW });
  solana = new ReportService(await analytics.fork(), {
    publicUrl: PUBLIC,
    now: () => NOW,
    chain: SOLANA_RECORD,
  });
  attester = new Attester({
    reports: [base, solana],
    analytics,
    rpc: devnet.rpc,
    key: (devnet.buyers[0] as { privateKey: Hex }).privateKey,
    closes: WeekCloses.everyWeekFrom(END % WEEK_BLOCKS),
    maxCostWei: DEFAULT_MAX_COST_WEI,
  });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-attest-solana-"));
}, 60_000);

afterAll(async () => {
  await attester?.stop();
  analytics?.close();
  await devnet?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Both chains' weeks attested, each step the attester took on the way, by chain: once, for whichever test runs first. */
const attested = once(async () => {
  const seen: Record<string, WeekStep[]> = { base: [], solana: [] };
  for (let i = 0; i < 10; i++) {
    const steps = await attester.attestEveryChain();
    for (const [slug, weeks] of steps) for (const step of weeks.values()) seen[slug]?.push(step);
    const done = (slug: string, end: number) => steps.get(slug)?.get(end) === "sealed_only";
    if (done("base", END) && done("solana", CLOSE)) break;
    await devnet.mine();
  }
  return seen;
});

describe("Solana's week attested on Base", () => {
  it("is attested beside Base's, under the schema naming Solana, and each Solana report verifies", async () => {
    const seen = await attested();
    expect(seen.base).toContain("attested");
    expect(seen.solana).toContain("registering");
    expect(seen.solana).toContain("attested");

    const client = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
    const weeks = reportRoutes([base, solana], {});
    const listed = SealedWeeksDocumentSchema.parse(await (await weeks.request("/v1/weeks/solana")).json());
    expect(listed.weeks.map((w) => [w.end_block, w.reports])).toEqual([[CLOSE, 2]]);
    const uid = listed.weeks[0]?.attestation?.uid as Hex;
    const onChain = await client.readContract({
      address: EAS_ADDRESS,
      abi: easAbi,
      functionName: "getAttestation",
      args: [uid],
    });
    expect(onChain.schema).toBe(CHAIN_WEEK_SCHEMA_UID);
    expect(decodeWeek(onChain.data, onChain.schema)).toMatchObject({
      chain: SOLANA_RECORD.caip2,
      startBlock: CLOSE - 1_700_000,
      endBlock: CLOSE,
      reports: 2,
    });

    // Each Solana report, as served over HTTP, verifies as its key is written; the padded owner's too.
    for (const owner of [shop, padded]) {
      const served = await weeks.request(`/v1/reports/solana/${owner}?end_block=${CLOSE}`);
      const report = (await served.json()) as Record<string, unknown> & { attestation?: { schema: string } };
      expect(report).toMatchObject({ chain: "solana", address: owner, frozen: true });
      expect(report.attestation?.schema).toBe(CHAIN_WEEK_SCHEMA_UID);
      expect(await verifyReport(report, client as never)).toMatchObject({
        address: owner,
        endBlock: CLOSE,
        uid,
      });
    }
    // Base's week, attested in the same walk, still verifies under its own schema.
    const baseReport = (await base.report(baseShop, END)).report;
    expect(baseReport.attestation?.schema).toBe(WEEK_SCHEMA_UID);
    expect(await verifyReport(baseReport, client as never)).toMatchObject({
      address: baseShop,
      endBlock: END,
    });

    expect(await checkSealedWeeks(analytics)).toEqual([
      { ok: true, subject: "sealed weeks", text: "2 weeks, 3 reports, each proves against its week's root" },
    ]);
    const again = await attester.attestEveryChain();
    expect(again.get(SOLANA_RECORD.slug)?.get(CLOSE)).toBe("sealed_only");
    expect(again.get(BASE_RECORD.slug)?.get(END)).toBe("sealed_only");
  }, 60_000);

  it("refuses a Solana report moved to another chain, another case or another week's attestation", async () => {
    await attested();
    const client = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
    const report = (await solana.report(shop, CLOSE)).report;
    const baseReport = (await base.report(baseShop, END)).report;
    const field = report.attestation as NonNullable<typeof report.attestation>;
    const failure = (r: unknown) =>
      verifyReport(r, client as never).then(
        () => "verified",
        (e: { code: string }) => e.code,
      );
    // Its leaf is Solana's: read as Base's, no proof holds, whatever the chain it claims.
    expect(provesReport(field.root as Hex, report, field.proof as Hex[], BASE_RECORD)).toBe(false);
    expect(await failure({ ...report, chain: "base" })).toBe("not_report");
    expect(await failure({ ...report, chain: "polygon" })).toBe("not_report");
    // A base58 key is case-sensitive: another case is another key, and not the one attested.
    expect(
      await failure({ ...report, address: report.address.replace(/[a-z]/, (c) => c.toUpperCase()) }),
    ).toBe("proof");
    expect(await failure({ ...report, address: "not-a-key" })).toBe("not_report");
    // Base's attestation and root with Base's proof: the Solana leaf is not in Base's tree.
    expect(await failure({ ...report, attestation: { ...field, ...baseReport.attestation } })).toBe("proof");
    // An EVM report given Solana's week: its leaf is not in Solana's tree either.
    expect(await failure({ ...baseReport, attestation: field })).toBe("proof");
  }, 60_000);

  it("`verify` prints the Solana key as written", async () => {
    await attested();
    const report = (await solana.report(padded, CLOSE)).report;
    const file = path.join(dir, "solana.json");
    fs.writeFileSync(file, JSON.stringify(report, null, 2));
    const out = await runMain(["verify", file, "--rpc", devnet.rpc, "--json"]);
    expect(out).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(out.stdout)).toMatchObject({
      file,
      address: padded,
      end_block: CLOSE,
      uid: report.attestation?.uid,
    });
  }, 60_000);
});
