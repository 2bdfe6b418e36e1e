import { describe, expect, it } from "vitest";
import { escapeText } from "../../../src/common/html.ts";
import { renderReportPage } from "../../../src/reports/render/report-page.ts";
import { FLAG_KINDS, SCREENS } from "../../../src/reports/screens/index.ts";
import { MERCHANT, makeDetails, makeEmptyReport, makeReport, PAYER, wallet } from "../fixtures.ts";

const XSS = '<script>alert("x")</script>';
const NOTICE = "DEVNET DEMO: simulated buyers on a local chain.";

describe("renderReportPage", () => {
  const page = (report = makeReport(), details = makeDetails(), notice?: string) =>
    renderReportPage(report, details, { notice });

  it("is a complete HTML5 document with a viewport and a title, and no script or external asset", () => {
    const html = page();
    expect(html).toMatch(/^<!doctype html>\s*<html lang="en">/);
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toMatch(/<title>api\.example\.com: x402 payments on Base, 7 days to 2025-06-08<\/title>/);
    expect(html).toMatch(/<\/body>\s*<\/html>\s*$/);
    expect(html).not.toMatch(/<script|<link rel="stylesheet"|@import|url\(http/);
  });

  it("escapes every value that comes from the report and the details", () => {
    const report = makeReport({
      name: XSS,
      claim: `${XSS} received $10.00 …`,
      exchange_flow_note: `<img src=x onerror=alert(1)>`,
      bazaar_listings: [{ resource: "https://a.example/?q=<b>", price_usd: 0.01, description: `"><iframe>` }],
    });
    const html = page(
      report,
      makeDetails({ tiny_repeat: [{ wallet: `"><svg onload=alert(1)>`, tx: 1, usd: 1 }] }),
    );
    expect(html).not.toContain("<script>alert");
    expect(html).not.toMatch(/<img src=x|<iframe|<svg onload|<b>/);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).toContain("&quot;&gt;&lt;iframe&gt;");
  });

  it("links only web URLs among the listings", () => {
    const report = makeReport({
      bazaar_listings: [{ resource: "javascript:alert(1)", price_usd: 0.01, description: "x" }],
    });
    const html = page(report);
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain("<code>javascript:alert(1)</code>");
  });

  it("shows the notice banner only when there is a notice", () => {
    expect(page(makeReport(), makeDetails(), NOTICE)).toContain(NOTICE);
    expect(page(makeReport(), makeDetails())).not.toContain('class="notice"');
  });

  it("states the claim, the address, the window and the figures", () => {
    const report = makeReport();
    const html = page(report);
    expect(html).toContain(`<p class="claim">${report.claim}</p>`);
    expect(html).toContain(MERCHANT);
    expect(html).toContain("Blocks 30,000,000 to 30,302,400");
    expect(html).toContain("2025-06-01 12:00 UTC");
    expect(html).toContain("Complete: every block");
    expect(html).toContain("$12.00");
    expect(html).toContain("$10.00");
    expect(html).toContain("23.45%"); // top_buyer_share 0.2345
    expect(html).toContain("$0.005 to $0.012");
    expect(page(makeReport({ window: { ...report.window, complete: false } }))).toContain("Incomplete");
  });

  it("gives a merchant of less than a dollar its exact amounts, to six decimals", () => {
    const small = makeReport({ tx: 40, usd: 0.01, real_tx: 5, real_usd: 0.01 });
    const exact = { ...makeDetails(), exact: { amount: "8000", real_amount: "5000" } };
    const html = page(small, exact);
    expect(html).toContain("Exact USDC");
    expect(html).toMatch(/\$0\.008000<\/td><td class="num">\$0\.005000<\/td><td class="num">\$0\.003000/);
    expect(html).toContain("less than $1, so the exact amounts");
    // A merchant of a dollar or more shows cents only.
    expect(
      page(makeReport({ usd: 12.5 }), { ...makeDetails(), exact: { amount: "12500000", real_amount: "1" } }),
    ).not.toContain("Exact USDC");
  });

  it("explains the claimed, held and rank states", () => {
    expect(page(makeReport({ claimed: true }))).toContain("Claimed: the merchant has claimed");
    expect(page(makeReport({ claimed: false }))).toContain("Unclaimed");
    expect(page(makeReport({ held: true, rank_by_real_revenue: null }))).toContain(
      "Held: the operator holds this merchant out of the ranking",
    );
    // A report of an attested week is frozen, which is not a hold: it says nothing of the ranking.
    expect(page(makeReport({ frozen: true, rank_by_real_revenue: 3 }))).toContain(
      "Ranked #3 by real revenue",
    );
    expect(page(makeReport({ rank_by_real_revenue: 3 }))).toContain("Ranked #3 by real revenue");
    expect(page(makeEmptyReport())).toContain("Not ranked: no payment passed every screen in this window.");
    // Payments passed, but less than half a cent in all: the reason is the amount, not the screens.
    expect(page(makeReport({ rank_by_real_revenue: null, real_tx: 2, real_usd: 0 }))).toContain(
      "Not ranked: the 2 payments that passed every screen add up to less than half a cent ($0.00 once rounded); a rank needs $0.01.",
    );
  });

  it("draws the daily chart and a table row per date", () => {
    const report = makeReport();
    const html = page(report);
    expect(html).toContain('role="img"');
    expect(html.match(/<g class="day"/g)).toHaveLength(report.daily.length);
    for (const d of report.daily) expect(html).toContain(`<th scope="row">${d.date}</th>`);
  });

  it("lists the payments by scheme, and says a channel's payments are claims, not requests", () => {
    const html = page(makeReport());
    expect(html).toContain("<caption>Payments by x402 scheme</caption>");
    expect(html).toMatch(
      /<code>exact<\/code>[^<]*<\/th><td class="num">1,000<\/td><td class="num">\$10\.00<\/td>/,
    );
    expect(html).toMatch(
      /<code>batch-settlement<\/code>: channels: a payment per claim<\/th><td class="num">200<\/td>/,
    );
    expect(html).toContain("Each claim on one channel counts as one payment");
    // No scheme table, nor its note, without payments; and no channel note without channels.
    expect(page(makeEmptyReport())).not.toContain("Payments by x402 scheme");
    const exactOnly = makeReport({
      schemes: { exact: { tx: 1200, usd: 12, real_tx: 1000, real_usd: 10, tx_counts: "payments" } },
    });
    expect(page(exactOnly)).not.toContain("Each claim on one channel");
  });

  it("explains every flag kind with its screen's summary and lists the wallets that tripped it", () => {
    const flags = Object.fromEntries(FLAG_KINDS.map((k) => [k, { tx: 2, usd: 0.02 }]));
    const flagged = Object.fromEntries(
      FLAG_KINDS.map((k, i) => [k, [{ wallet: wallet(String(i + 3)), tx: 2, usd: 0.02 }]]),
    );
    const html = page(makeReport({ flags }), makeDetails(flagged));
    for (const [i, screen] of SCREENS.entries()) {
      const section = new RegExp(
        `<section class="flag" id="flag-${screen.kind}">([\\s\\S]*?)</section>`,
      ).exec(html)?.[1];
      expect(section, screen.kind).toBeDefined();
      expect(section).toContain(escapeText(screen.summary));
      expect(section).toContain("2 payments, $0.02");
      expect(section).toContain(wallet(String(i + 3)));
    }
    // In the screens' order.
    const order = [...html.matchAll(/id="flag-(\w+)"/g)].map((m) => m[1]);
    expect(order).toEqual([...FLAG_KINDS]);
  });

  it("shows the full address of each flagged wallet", () => {
    const wallets = [
      { wallet: PAYER, tx: 150, usd: 1.5 },
      { wallet: wallet("f"), tx: 50, usd: 0.5 },
    ];
    const html = page(makeReport(), makeDetails({ tiny_repeat: wallets }));
    for (const w of wallets) expect(html).toContain(`>${w.wallet}</code>`);
    expect(html).toContain("$1.50");
  });

  it("says so when nothing is flagged, and always shows the flag note", () => {
    const report = makeEmptyReport();
    const html = page(report);
    expect(html).toContain("No screen flagged any payment");
    expect(html).not.toContain('class="flag"');
    expect(html).toContain(report.flag_note);
  });

  it("shows the exchange flow note only when there is one", () => {
    const note = "3 passing buyer wallets received USDC that left this merchant through an exchange.";
    expect(page(makeReport({ exchange_flow_note: note }))).toContain(note);
    expect(page(makeReport({ exchange_flow_note: null }))).not.toContain("Exchange flows");
  });

  it("lists the listings with price and description", () => {
    const html = page();
    expect(html).toContain('href="https://api.example.com/api/ping"');
    expect(html).toContain("$0.001");
    expect(html).toContain("Web search, with an answer.");
    expect(page(makeReport({ bazaar_listings: [] }))).toContain("No paid endpoints listed.");
  });

  it("shows the badge with a Markdown snippet, the data links and the licence", () => {
    const report = makeReport();
    const html = page(report);
    expect(html).toContain(`<img src="${report.badge}"`);
    expect(html).toContain(`[![x402 real revenue](${report.badge})](${report.page})`);
    for (const href of [
      `/v1/reports/base/${MERCHANT}`,
      "/v1/schema/report.json",
      "/v1/datasets/base/reports.ndjson",
      "/v1/datasets/base/reports.csv",
      report.license,
    ]) {
      expect(html).toContain(`href="${href}"`);
    }
    expect(html).toContain("CC BY 4.0");
  });
});
