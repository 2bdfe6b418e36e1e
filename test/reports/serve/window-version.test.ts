import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import {
  bumpDataVersion,
  dataVersion,
  foldDataWrites,
  windowVersion,
} from "../../../src/analytics/migrations.ts";
import { ReportService } from "../../../src/reports/index.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { addr, analyticsWith, checkpoint, END, payment } from "../../helpers/data.ts";
import { capturedLogLines } from "../../helpers/log.ts";

/**
 * A stored window counts only the writes that reached it: the indexer moving the chain on leaves a closed week
 * as it was built, read by a fresh service (a restart), and a sealed week warns only when data inside it changed.
 */
const merchant = addr("version-merchant");
let analytics: Analytics;
let clock = Date.parse("2026-11-27T00:00:00Z");

/** A fresh service each time, as after a restart: nothing of the last one's memory of current windows. */
const fresh = () =>
  new ReportService(analytics, {
    publicUrl: "https://reports.test",
    now: () => {
      clock += 1000;
      return new Date(clock);
    },
  });
const built = () =>
  analytics.one<{ data_version: bigint; generated_at: string }>(
    "SELECT data_version, generated_at FROM report_windows WHERE end_block = $end",
    { end: END },
  );

beforeAll(async () => {
  analytics = await analyticsWith([
    payment({ payer: addr("version-buyer"), payTo: merchant, amount: 1_000_000 }),
    checkpoint(END),
  ]);
});
afterAll(() => analytics.close());

describe("a window's version", () => {
  it("moves with writes that reach the window, not with the chain moving on", async () => {
    const before = await windowVersion(analytics, END);
    const store = await dataVersion(analytics);
    await bumpDataVersion(analytics, END + 1);
    expect(await windowVersion(analytics, END)).toBe(before);
    expect(await dataVersion(analytics)).toBe(store + 1n);
    await bumpDataVersion(analytics, END);
    expect(await windowVersion(analytics, END)).toBe(before + 1n);
    // An import or a listings refresh reaches every window.
    await bumpDataVersion(analytics);
    expect(await windowVersion(analytics, END)).toBe(before + 2n);
  });

  it("keeps a closed week as built across a restart while the indexer writes past it, and builds it on a write inside it", async () => {
    await fresh().report(merchant, END);
    const first = await built();
    for (let i = 1; i <= 3; i++) await bumpDataVersion(analytics, END + 100 * i);
    await fresh().report(merchant, END);
    expect(await built()).toEqual(first);

    await bumpDataVersion(analytics, END - 10);
    await fresh().report(merchant, END);
    const second = await built();
    expect(second?.generated_at).not.toBe(first?.generated_at);
    expect(second?.data_version).toBe((first?.data_version ?? 0n) + 1n);
  });

  it("folds writes at open without moving any stored window's version", async () => {
    await fresh().report(merchant, END);
    // A second stored window, ending below the first.
    const earlier = END - 50_000;
    await fresh().report(merchant, earlier);
    const stored = await built();
    // Writes past every stored window, one between the two ends, one below both (a funding history's old
    // transfers), one at the later end, and one reaching all.
    for (let i = 1; i <= 3; i++) await bumpDataVersion(analytics, END + 500 * i);
    await bumpDataVersion(analytics, END - 1);
    await bumpDataVersion(analytics, earlier - 7);
    await bumpDataVersion(analytics, END);
    await bumpDataVersion(analytics);
    const version = await windowVersion(analytics, END);
    const versionEarlier = await windowVersion(analytics, earlier);
    const store = await dataVersion(analytics);
    await foldDataWrites(analytics, 1);
    // Every write folded; the stored windows' versions and the store's as they were.
    expect(await analytics.one("SELECT count(*) AS n FROM data_writes")).toEqual({ n: 0n });
    expect(await windowVersion(analytics, END)).toBe(version);
    expect(await windowVersion(analytics, earlier)).toBe(versionEarlier);
    expect(await dataVersion(analytics)).toBe(store);
    expect(version).toBe((stored?.data_version ?? 0n) + 4n);
    // A write past the window after the fold still leaves it current, one inside it still moves it.
    await bumpDataVersion(analytics, END + 9_000);
    expect(await windowVersion(analytics, END)).toBe(version);
    await bumpDataVersion(analytics, END - 9_000);
    expect(await windowVersion(analytics, END)).toBe(version + 1n);
  });

  it("warns of a sealed week only when data inside it changed", async () => {
    const lines = capturedLogLines("warn");
    await fresh().sealWeek(END);
    await bumpDataVersion(analytics, END + 7_000);
    await fresh().report(merchant, END);
    expect(lines.join("")).not.toContain("sealed week");

    const sealed = await built();
    await bumpDataVersion(analytics, END - 3);
    const { report } = await fresh().report(merchant, END);
    expect(lines.filter((l) => l.includes("a sealed week's data or methodology changed"))).toHaveLength(1);
    // Served as sealed, not built again.
    expect(await built()).toEqual(sealed);
    expect(report.window.end_block).toBe(END);
  });
});

describe("the sealed weeks", () => {
  it("are listed with what was sealed and where to fetch it, the attestation null until mined", async () => {
    const service = fresh();
    const sealed = await service.sealWeek(END);
    const response = await reportRoutes(service).request("/v1/weeks/base");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { chain: string; weeks: Record<string, unknown>[] };
    expect(body.chain).toBe("base");
    expect(body.weeks).toEqual([
      {
        end_block: END,
        start_block: sealed.start_block,
        methodology: sealed.methodology,
        root: sealed.root,
        reports: sealed.reports,
        sealed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/),
        dataset: `https://reports.test/v1/datasets/base/reports.ndjson?end_block=${END}`,
        attestation: null,
        conflict_uid: null,
      },
    ]);
    // HEAD answers as GET without a body; another method is told what the path takes.
    const routes = reportRoutes(service);
    const head = await routes.request("/v1/weeks/base", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await routes.request("/v1/weeks/base", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect(await post.json()).toMatchObject({
      error: { code: expect.any(String), message: expect.any(String) },
    });
  });
});
