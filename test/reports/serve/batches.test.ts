import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../../../src/analytics/migrations.ts";
import { AppError } from "../../../src/common/errors.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment, repeat } from "../../helpers/data.ts";

// Seven merchants, two of them flagged by a tiny-repeat farm, one with a listing.
const merchants = Array.from({ length: 7 }, (_, i) => addr(`batch-m${i}`));

let analytics: Analytics;
let service: ReportService;
let app: ReturnType<typeof reportRoutes>;
let clock = Date.parse("2026-11-25T12:00:00Z");

beforeAll(async () => {
  analytics = await analyticsWith([
    {
      type: "listing",
      pay_to: merchants[3],
      resource: "https://shop.example/api",
      price_usd: 0.01,
      description: "An API",
    },
    ...merchants.map((m, i) =>
      payment({ payer: addr(`batch-buyer${i}`), payTo: m, amount: 1_000_000 * (i + 1) }),
    ),
    ...repeat(10, { payer: addr("batch-farm"), payTo: merchants[1] as string, amount: 100 }),
    ...repeat(10, { payer: addr("batch-farm"), payTo: merchants[5] as string, amount: 100 }),
  ]);
  // A second for every build, so that a window built again says so in its generated_at.
  service = new ReportService(analytics, {
    publicUrl: "https://reports.test",
    now: () => {
      clock += 1000;
      return new Date(clock);
    },
  });
  app = reportRoutes(service);
});
afterAll(() => analytics.close());

async function all<T>(batches: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const batch of batches) out.push(batch);
  return out;
}

const lines = async (path: string) => (await (await app.request(path)).text()).split("\n").filter(Boolean);

describe("a window read in batches", () => {
  it("gives every report once, in address order, whatever the batch size", async () => {
    const whole = await lines(`/v1/datasets/base/reports.ndjson?end_block=${END}`);
    expect(whole).toHaveLength(7);
    const { window, batches } = await service.readReports(END, 3);
    expect(window.end_block).toBe(END);
    const read = await all(batches);
    expect(read.map((b) => b.length)).toEqual([3, 3, 1]);
    const reports = read.flat().map((body) => JSON.parse(body) as { address: string });
    expect(reports.map((r) => JSON.stringify(r))).toEqual(whole);
    expect(reports.map((r) => r.address)).toEqual([...merchants].sort());
    // The listing of the merchant in the middle batch is in its report.
    const listed = reports.find((r) => r.address === merchants[3]) as unknown as {
      bazaar_listings: unknown[];
    };
    expect(listed.bazaar_listings).toHaveLength(1);
  });

  it("gives the evidence of the flagged merchants only, batch by batch as the route does at once", async () => {
    const whole = await lines(`/v1/datasets/base/evidence.ndjson?end_block=${END}`);
    expect(whole).toHaveLength(2);
    const read = await all((await service.readEvidence(END, 2)).batches);
    expect(read.flat().map((d) => JSON.stringify(d))).toEqual(whole);
    expect(read.flat().map((d) => d.address)).toEqual([merchants[1], merchants[5]].sort());
  });

  it("writes the CSV dataset's header once, before the rows of every batch", async () => {
    const csv = await lines(`/v1/datasets/base/reports.csv?end_block=${END}`);
    expect(csv).toHaveLength(8);
    expect(csv[0]).toMatch(/^schema_version,generated_at,/);
    expect(csv.filter((l) => l.startsWith("schema_version"))).toHaveLength(1);
  });

  it("ends a read whose window was built again half way, rather than mix two builds", async () => {
    const { batches } = await service.readReports(END, 3);
    const iterator = batches[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toHaveLength(3);
    await bumpDataVersion(analytics);
    await service.build(END);
    const error = await iterator.next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 409, code: "window_rebuilt" });
    // A read begun after the build is whole again.
    expect((await all((await service.readReports(END, 3)).batches)).flat()).toHaveLength(7);
  });

  it("stops reading when the reader leaves, and answers the next request", async () => {
    const response = await app.request(`/v1/datasets/base/reports.ndjson?end_block=${END}`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    expect((await app.request(`/v1/reports/base/${merchants[0]}?end_block=${END}`)).status).toBe(200);
  });
});
