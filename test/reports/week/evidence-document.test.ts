/**
 * The evidence behind a report's flags: every named wallet's rule, payments, funding path or cycle,
 * agreeing with the page's figures; served as JSON, as a page linked from the report page, and in bulk.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analytics } from "../../../src/analytics/duckdb.ts";
import type { EvidenceDocument, EvidenceWallet } from "../../../src/reports/model.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { SHOWN_PAYMENTS } from "../../../src/reports/week/evidence-document.ts";
import { addr, analyticsWith, END, END_TIME, payment, repeat, START, transfer } from "../../helpers/data.ts";

const DAY = 43_200;
const m = addr("evidence-merchant");
const [hopA, hopB, hopC] = ["ev-a", "ev-b", "ev-c"].map(addr) as [string, string, string];
const sybil = addr("ev-sybil");
const farm = addr("ev-farm");
const prober = addr("ev-prober");
const [r1, r2, r3] = ["ev-r1", "ev-r2", "ev-r3"].map(addr) as [string, string, string];
const FUNDED_AT = START + 100_000;

const fundingHops = [
  transfer(m, hopA, 500_000_000, START - 6 * 7 * DAY),
  transfer(hopA, hopB, 490_000_000, START - 5 * 7 * DAY),
  transfer(hopB, hopC, 480_000_000, START - 4 * 7 * DAY),
  // In the block of the last tiny payment before FUNDED_AT, after it (a transfer's log index is 1, a payment's 0).
  transfer(hopC, sybil, 50_000_000, FUNDED_AT - 1),
];

const records = [
  { type: "merchant", address: m, name: "evidence.example" },
  { type: "listing", pay_to: m, resource: "https://evidence.example/a", price_usd: 0.01, description: "A" },
  ...repeat(20, { payer: addr("ev-customer"), payTo: m, amount: 10_000 }),
  ...fundingHops,
  // The funded wallet pays tiny amounts before the funding arrives, and the listed price and tiny amounts
  // after: its payments split between two screens, the tiny ones after the funding going to the first
  // screen in precedence order.
  ...repeat(12, { payer: sybil, payTo: m, amount: 1_000 }, START + 1, FUNDED_AT - 1),
  ...repeat(15, { payer: sybil, payTo: m, amount: 10_000 }, FUNDED_AT, END),
  ...repeat(5, { payer: sybil, payTo: m, amount: 1_000 }, FUNDED_AT + 7, END - 7),
  ...repeat(30, { payer: farm, payTo: m, amount: 1_000 }),
  ...repeat(4, { payer: m, payTo: m, amount: 10_000 }),
  // A ring of four: r1 pays r2, r2 pays r3, r3 pays the merchant, the merchant pays r1 (money r1 brought,
  // so that for the merchant this is a ring, not its own money coming back).
  payment({ payer: r1, payTo: r2, amount: 1_000_000, block: START + 10 }),
  payment({ payer: r2, payTo: r3, amount: 1_000_000, block: START + 20 }),
  payment({ payer: r3, payTo: m, amount: 1_000_000, block: START + 30 }),
  payment({ payer: m, payTo: r1, amount: 1_000_000, block: START + 40 }),
  // A prober: one small payment to each of 25 merchants.
  ...Array.from({ length: 25 }, (_, i) =>
    payment({
      payer: prober,
      payTo: i === 0 ? m : addr(`ev-other-${i}`),
      amount: 10_000,
      block: START + 500 + i,
    }),
  ),
];

let analytics: Analytics;
let service: ReportService;
let app: ReturnType<typeof reportRoutes>;
let doc: EvidenceDocument;

beforeAll(async () => {
  analytics = await analyticsWith(records);
  service = new ReportService(analytics, {
    publicUrl: "https://reports.test",
    now: () => new Date(END_TIME * 1000 + 3_600_000),
  });
  app = reportRoutes(service);
  doc = await service.evidence(m, END);
});
afterAll(() => analytics.close());

const walletOf = (kind: string, wallet: string): EvidenceWallet => {
  const found = doc.flags.find((f) => f.kind === kind)?.wallets.find((w) => w.wallet === wallet);
  if (!found) throw new Error(`no ${kind} evidence for ${wallet}`);
  return found;
};

describe("the evidence document", () => {
  it("explains every wallet the page names, with the page's counts and dollars", async () => {
    const { report, details } = await service.report(m, END);
    expect(doc.flags.map((f) => f.kind)).toEqual(Object.keys(report.flags));
    for (const flag of doc.flags) {
      expect(flag).toMatchObject(report.flags[flag.kind] as object);
      const named = details.flagged_wallets[flag.kind] ?? [];
      expect(flag.wallets.map((w) => [w.wallet, w.tx, w.usd])).toEqual(
        named.map((w) => [w.wallet, w.tx, w.usd]),
      );
      for (const w of flag.wallets) {
        // The payments listed are the ones the build flagged under this kind: as many as the page says.
        expect(w.payments.count).toBe(w.tx);
        expect(w.payments.shown.length).toBe(Math.min(SHOWN_PAYMENTS, w.tx));
        expect(w.rule.length).toBeGreaterThan(20);
      }
    }
    // One wallet, two screens: the tiny payments before the funding arrived, the rest after it.
    expect(walletOf("merchant_funded", sybil).tx).toBe(20);
    expect(walletOf("tiny_repeat", sybil).tx).toBe(12);
    expect(walletOf("merchant_funded", sybil).payments.shown.every((p) => p.block >= FUNDED_AT)).toBe(true);
    expect(walletOf("tiny_repeat", sybil).payments.shown.every((p) => p.block < FUNDED_AT)).toBe(true);
  });

  it("walks the funding path back to the merchant, hop by hop with hashes and dates", () => {
    const w = walletOf("merchant_funded", sybil);
    expect(w.funding_path?.map((h) => [h.from, h.to, h.usd, h.tx_hash])).toEqual(
      fundingHops.map((t) => [t.from, t.to, Number(t.amount) / 1e6, t.tx_hash]),
    );
    expect(w.funding_path?.[0]?.time).toBe("2026-10-04T00:00:00Z");
    expect(w.rule).toContain("through 4 transfers (below; any number, at any age");
    // 15 payments of $0.01 and 5 of $0.001 after the funding, the 12 tiny ones before it paid with other money.
    expect(w.provenance).toEqual({
      paid_usd: 0.167,
      merchant_usd: 0.155,
      merchant_share: 0.9281,
      transfers: 4,
    });
  });

  it("gives a ring's cycle, closed and in order, and its balance", () => {
    const w = walletOf("ring", r3);
    const steps = w.ring?.cycle?.steps ?? [];
    expect(steps.map((s) => s.from)).toEqual([r3, m, r1, r2]);
    expect(steps.map((s) => s.to)).toEqual([m, r1, r2, r3]);
    expect(w.ring).toMatchObject({
      returned_usd: 1,
      sent_usd: 1,
      cycle: { moves: 4, wallets_in_component: 4 },
    });
    expect(w.rule).toContain("100% came back to it: money counted again");
  });

  it("states the repeat pattern and the threshold of tiny payments against the listed price", () => {
    const w = walletOf("tiny_repeat", farm);
    expect(w.tiny).toEqual({
      price_usd: 0.01,
      price_source: "listed",
      tiny_max_usd: 0.002,
      tiny_payments: 30,
      cluster_tiny_payments: 30,
    });
    expect(w.payments).toMatchObject({ count: 30, common_usd: 0.001, common_count: 30 });
    // 30 payments spread evenly over the week: one every 7 days / 29.
    expect(w.payments.median_interval_seconds).toBeCloseTo((7 * 86_400) / 29, -1);
    expect(w.rule).toContain(
      "30 payments of at most $0.002 from this wallet's cluster (a fifth of the merchant's price $0.01, its lowest listed price its buyers pay (5 or more clusters, or 20% of them; the lowest line where none is))",
    );
  });

  it("counts a prober's merchants, and names self-payment plainly", () => {
    expect(walletOf("prober", prober).prober).toEqual({
      merchants: 25,
      light_merchants: 25,
      payments_to_this_merchant: 1,
    });
    expect(walletOf("self_payment", m).payments.count).toBe(4);
  });
});

describe("the cluster a wallet was counted in", () => {
  it("names the cluster and its size for each wallet of a farm funded from one source, on the page too", async () => {
    const shop = addr("cluster-shop");
    const farmer = addr("cluster-farmer");
    const farmWallets = ["cf-1", "cf-2", "cf-3"].map(addr);
    const store = await analyticsWith([
      {
        type: "listing",
        pay_to: shop,
        resource: "https://cluster.example/a",
        price_usd: 0.01,
        description: "A",
      },
      ...repeat(20, { payer: addr("cluster-customer"), payTo: shop, amount: 10_000 }),
      ...farmWallets.map((w) => transfer(farmer, w, 1_000_000, START - 10)),
      // Four tiny payments each: none alone makes ten, the cluster's twelve do.
      ...farmWallets.flatMap((w) => repeat(4, { payer: w, payTo: shop, amount: 1_000 })),
    ]);
    try {
      const reports = new ReportService(store, {
        publicUrl: "https://reports.test",
        now: () => new Date(END_TIME * 1000 + 3_600_000),
      });
      const evidence = await reports.evidence(shop, END);
      const flag = evidence.flags.find((f) => f.kind === "tiny_repeat");
      expect(flag?.tx).toBe(12);
      const root = [farmer, ...farmWallets].sort()[0];
      const links = farmWallets
        .sort()
        .map((w) => ({ wallet: w, linked: farmer, rule: "funding", strong: true, share: 1 }));
      for (const w of flag?.wallets ?? []) {
        expect(w.cluster).toEqual({ id: root, wallets: 4, links, links_total: 3 });
        expect(w.tiny).toMatchObject({ tiny_payments: 4, cluster_tiny_payments: 12 });
      }
      const page = await (
        await reportRoutes(reports).request(`/reports/base/${shop}/evidence?end_block=${END}`)
      ).text();
      expect(page).toContain(`Counted as one buyer with the 3 other wallets of cluster <code>${root}</code>`);
      expect(page).toContain(
        `<tr><td><code>${farmWallets[0]}</code></td><td><code>${farmer}</code></td><td><code>funding</code>: funded it</td><td>strong</td><td>100% of its USDC</td></tr>`,
      );
    } finally {
      store.close();
    }
  });
});

describe("evidence over HTTP", () => {
  it("serves the document as JSON, and errors as JSON", async () => {
    const res = await app.request(`/v1/reports/base/${m}/evidence?end_block=${END}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(doc)));
    expect((await app.request(`/v1/reports/base/0x1234/evidence`)).status).toBe(400);
    const unknown = await app.request(`/v1/reports/base/${addr("nobody")}/evidence?end_block=${END}`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unknown_merchant");
  });

  it("links each wallet of the report page to its entry on the evidence page", async () => {
    const page = await (await app.request(`/reports/base/${m}?end_block=${END}`)).text();
    const evidence = await (await app.request(`/reports/base/${m}/evidence?end_block=${END}`)).text();
    for (const flag of doc.flags) {
      for (const w of flag.wallets) {
        const anchor = `${flag.kind}-${w.wallet}`;
        expect(page).toContain(`/reports/base/${m}/evidence?end_block=${END}#${anchor}`);
        expect(evidence).toContain(`id="${anchor}"`);
        for (const p of w.payments.shown) expect(evidence).toContain(p.tx_hash);
      }
    }
    expect(evidence).toContain(fundingHops[0]?.tx_hash);
  });

  it("puts every flagged merchant's evidence in the bulk download", async () => {
    const res = await app.request(`/v1/datasets/base/evidence.ndjson?end_block=${END}`);
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as EvidenceDocument);
    const { reports } = await service.reports(END);
    const flagged = reports.filter((r) => Object.keys(r.flags).length > 0).map((r) => r.address);
    expect(lines.map((d) => d.address).sort()).toEqual(flagged.sort());
    expect(lines.find((d) => d.address === m)).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});

describe("reports stored before the evidence", () => {
  it("are rebuilt after the upgrade, so their evidence has its facts", async () => {
    const old = await analyticsWith(records);
    const dataDir = old.dataDir;
    const options = { publicUrl: "https://reports.test", now: () => new Date(END_TIME * 1000 + 3_600_000) };
    await new ReportService(old, options).report(m, END);
    // A stored window as an older build left it: wallets without evidence, and no migration 7.
    await old.run(
      `UPDATE reports SET details = regexp_replace(details, ',"evidence":\\{.*?\\}\\}(,|\\])', '\\1', 'g')`,
    );
    await old.run("DELETE FROM schema_migrations WHERE version = 7");
    old.close();
    const reopened = await Analytics.open({ dataDir });
    try {
      const evidence = await new ReportService(reopened, options).evidence(m, END);
      expect(evidence.flags.find((f) => f.kind === "merchant_funded")?.wallets[0]?.funding_path).toHaveLength(
        4,
      );
    } finally {
      reopened.close();
    }
  });
});
