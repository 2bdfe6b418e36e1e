/**
 * One span, one name, on a chain whose blocks say their own time (Arbitrum One): the week ending at a block reads
 * the same however the indexer has moved on since. The indexer keeps one checkpoint per CHECKPOINT_SPACING blocks
 * and the latest, so its next commit deletes the row of the checkpoint it follows, while readers are still served
 * the window ending there (serve/latest.ts). Dated by the last stored row below it instead, the week named its
 * span "1 day" on one read and 0.996 days ("23.9 hours") on the next: a demo's merchant page across chains and
 * its JSON, read seconds apart, named Arbitrum's day apart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { importNdjson } from "../../../src/analytics/import.ts";
import { bumpDataVersion } from "../../../src/analytics/migrations.ts";
import { ARBITRUM_RECORD, BASE_RECORD } from "../../../src/chain/chains.ts";
import { BatchWriter } from "../../../src/indexer/writer.ts";
import type { MerchantAcrossChains } from "../../../src/reports/model.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { spanText } from "../../../src/reports/week/span.ts";
import { resolveWindow } from "../../../src/reports/week/window.ts";
import { addr, analyticsWith, ndjsonFile, payment } from "../../helpers/data.ts";

const shop = addr("shop-on-two-chains");
/** Arbitrum's first payment: a Wednesday noon, so that no Monday close falls in its day. */
const T0 = Date.UTC(2026, 10, 18, 12) / 1000;
/** Its last payment, 0.996 days on: a quiet chain's day, short of the day its later empty blocks reach. */
const LAST_PAID = { block: 200, time: T0 + 86_054 };
/** The empty block the indexer's checkpoint first names: a day and 406 s after the first payment. */
const HEAD = { block: 300, time: T0 + 86_460 };

const onArbitrum = (block: number, time: number, payer: string) => ({
  ...payment({ payer: addr(payer), payTo: shop, amount: 250_000, block }),
  chain: "arbitrum",
  block_time: time,
});
const cursor = (block: number, time: number) => ({
  block,
  hash: `0x${block.toString(16).padStart(64, "0")}`,
  time,
});

let analytics: Analytics;
let indexer: BatchWriter;
let arbitrum: ReportService;
let app: ReturnType<typeof reportRoutes>;

/** One commit of the indexer's, of empty blocks `from`-`to`, `to` dated `time`, as a follower makes it. */
async function commitEmpty(
  from: number,
  to: number,
  time: number,
  previous: { block: number; time: number },
) {
  await indexer.commit(
    {
      from,
      to,
      end: cursor(to, time),
      payments: [],
      candidates: [],
      transfers: [],
      hashes: [cursor(to, time)],
    },
    { startBlock: 0, previous: cursor(previous.block, previous.time), reorgDepth: 64 },
  );
}

beforeAll(async () => {
  // Base's week (the helpers' test week, its checkpoint at END) and Arbitrum's young day beside it.
  analytics = await analyticsWith([payment({ payer: addr("base buyer"), payTo: shop, amount: 1_000_000 })]);
  await importNdjson(
    analytics,
    ndjsonFile([
      onArbitrum(100, T0, "first buyer"),
      onArbitrum(LAST_PAID.block, LAST_PAID.time, "last buyer"),
      { type: "checkpoint", chain: "arbitrum", block_number: LAST_PAID.block, block_time: LAST_PAID.time },
    ]),
  );
  // The indexer on its own connection, as the service gives it one (src/services/reports.ts).
  indexer = new BatchWriter(await analytics.fork(), ARBITRUM_RECORD);
  await commitEmpty(LAST_PAID.block + 1, HEAD.block, HEAD.time, LAST_PAID);
  const now = () => new Date("2026-11-20T00:00:00Z");
  const [base, arb] = [BASE_RECORD, ARBITRUM_RECORD].map(
    (chain) => new ReportService(analytics, { publicUrl: "https://reports.test", now, chain }),
  ) as [ReportService, ReportService];
  arbitrum = arb;
  app = reportRoutes([base, arbitrum]);
});
afterAll(() => analytics.close());

describe("a stamped chain's week as its indexer moves on", () => {
  it("is the same window, named the same span, when the checkpoint it ends at was replaced since", async () => {
    const across = (await (await app.request(`/v1/merchants/${shop}`)).json()) as MerchantAcrossChains;
    const served = across.chains.find((c) => c.chain === "arbitrum")?.window;
    expect(served).toMatchObject({ end_block: HEAD.block, days: 1.000694 });
    const page = await (await app.request(`/merchants/${shop}`)).text();
    expect(page).toContain("on Base and Arbitrum One, Base&#39;s 7 days and Arbitrum One&#39;s 1 day, each");
    const json = async () =>
      (await (await app.request(`/v1/reports/arbitrum/${shop}?end_block=${HEAD.block}`)).json()) as {
        window: unknown;
        claim: string;
      };
    const before = await json();
    expect(before.window).toEqual(served);
    expect(before.claim).toContain(" in the 1 day to ");

    // The indexer's next block, in the same CHECKPOINT_SPACING stretch: its commit deletes the checkpoint row of
    // HEAD and tells the service it reached the blocks after HEAD only.
    await commitEmpty(HEAD.block + 1, HEAD.block + 1, HEAD.time + 1, HEAD);
    const rows = await analytics.all(
      "SELECT 1 FROM checkpoints WHERE chain = 'arbitrum' AND block_number = $b",
      {
        b: HEAD.block,
      },
    );
    expect(rows).toEqual([]);
    // A write every window is built again for (a listings refresh that brought news): HEAD's window is
    // resolved again, as it also is once the service has forgotten it.
    await bumpDataVersion(analytics);

    expect(await resolveWindow(analytics, ARBITRUM_RECORD, HEAD.block)).toEqual(served);
    expect((await arbitrum.report(shop, HEAD.block)).report.window).toEqual(served);
    // The page of that week and its JSON, read after the commit, name the span the JSON named before it.
    const after = await json();
    expect(after.window).toEqual(served);
    expect(after.claim).toBe(before.claim);
    const html = await (await app.request(`/reports/arbitrum/${shop}?end_block=${HEAD.block}`)).text();
    expect(html).toContain(`<p class="claim">${before.claim}</p>`);

    // The latest has moved on a block: the merchant page and its JSON name the one span its window has.
    const latest = (await (await app.request(`/v1/merchants/${shop}`)).json()) as MerchantAcrossChains;
    const days = latest.chains.find((c) => c.chain === "arbitrum")?.window.days as number;
    expect(days).toBeGreaterThanOrEqual(served?.days as number);
    const latestPage = await (await app.request(`/merchants/${shop}`)).text();
    expect(latestPage).toContain(`Arbitrum One&#39;s ${spanText(days)}, each`);
  });

  it("names a span a few seconds either side of a day one way: a day", () => {
    const days = (seconds: number) => seconds / 86_400;
    expect(spanText(days(86_399))).toBe("1 day");
    expect(spanText(days(86_401))).toBe("1 day");
    expect(spanText(days(86_220))).toBe("1 day");
    // Rounded to a tenth of an hour, 23.9 hours is not a day.
    expect(spanText(days(86_219))).toBe("23.9 hours");
    expect(spanText(0.996)).toBe("23.9 hours");
    expect(spanText(days(82_944))).toBe("23 hours");
    expect(spanText(days(3_599))).toBe("1 hour");
    expect(spanText(days(59.6))).toBe("1 minute");
  });
});
