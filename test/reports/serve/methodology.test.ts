/**
 * The methodology version (issue 55, item 2): a window's reports are stored with the version of the screens
 * they were built under, and every report, page, badge, evidence and feed row says it; a window stored under
 * another version (an earlier release's) is built again under this one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { METHODOLOGY_VERSION } from "../../../src/reports/screens/methodology.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, repeat } from "../../helpers/data.ts";

const PUBLIC = "https://reports.test";
const shop = addr("method-shop");
const farm = addr("method-farm");
const buyer = addr("method-buyer");
const current = { version: METHODOLOGY_VERSION, url: `${PUBLIC}/screens#changelog` };

describe("the methodology of a window", () => {
  let analytics: Analytics;
  beforeAll(async () => {
    analytics = await analyticsWith([
      ...repeat(12, { payer: farm, payTo: shop, amount: 100 }),
      ...repeat(3, { payer: buyer, payTo: shop, amount: 2_000_000 }),
    ]);
  });
  afterAll(() => analytics?.close());

  /** What the stored window says it was built under. */
  const stored = async () =>
    (
      await analytics.one<{ methodology: string | null }>(
        "SELECT methodology FROM report_windows WHERE end_block = $end",
        { end: END },
      )
    )?.methodology;

  it("is stored with the window and stated by the report, its evidence, page, badge and feed", async () => {
    const service = new ReportService(analytics, { publicUrl: PUBLIC });
    const { report } = await service.report(shop, END);
    expect(await stored()).toBe(METHODOLOGY_VERSION);
    expect(report.methodology).toEqual(current);
    expect(Object.keys(report).slice(-2)).toEqual(["methodology", "held"]);
    expect((await service.evidence(shop, END)).methodology).toEqual(current);
    const feed = await service.flags(END);
    expect(feed.methodology).toEqual(current);
    expect(feed.wallets.map((w) => [w.wallet, w.methodology_version])).toEqual([[farm, METHODOLOGY_VERSION]]);

    const routes = reportRoutes(service, { notice: async () => undefined, unlogged: true });
    const page = await (await routes.request(`/reports/base/${shop}?end_block=${END}`)).text();
    expect(page).toContain(`Screened under methodology <a href="${current.url}">${METHODOLOGY_VERSION}</a>`);
    const badge = await (await routes.request(`/badges/base/${shop}.svg?end_block=${END}`)).text();
    expect(badge).toContain(`data-methodology="${METHODOLOGY_VERSION}"`);
  });

  it("builds a window stored under another version again, under this one", async () => {
    await new ReportService(analytics, { publicUrl: PUBLIC }).report(shop, END);
    // As an earlier release left it, and as the migration leaves the windows stored before versions were.
    for (const earlier of ["1.3.0", null]) {
      await analytics.run(
        "UPDATE report_windows SET methodology = $v, generated_at = 'then' WHERE end_block = $end",
        {
          v: earlier,
          end: END,
        },
      );
      const { report } = await new ReportService(analytics, { publicUrl: PUBLIC }).report(shop, END);
      expect(report.methodology).toEqual(current);
      expect(await stored()).toBe(METHODOLOGY_VERSION);
      expect(report.generated_at).not.toBe("then");
    }
  });
});
