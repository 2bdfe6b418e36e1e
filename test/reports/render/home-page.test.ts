import { describe, expect, it } from "vitest";
import type { LeaderboardEntry, UnrankedEntry } from "../../../src/reports/model.ts";
import { renderHomePage } from "../../../src/reports/render/home-page.ts";
import { makeLeaderboard, wallet } from "../fixtures.ts";

const XSS = '<script>alert("x")</script>';
const NOTICE = "DEVNET DEMO: simulated buyers on a local chain.";

const entry = (rank: number, overrides: Partial<LeaderboardEntry> = {}): LeaderboardEntry => ({
  rank,
  address: wallet(String(rank)),
  name: `merchant-${rank}.example`,
  real_usd: 100 / rank,
  usd: 200 / rank,
  real_tx: 10,
  tx: 20,
  real_buyers: 3,
  buyers: 4,
  page: `https://x402-merchants.example/reports/base/${wallet(String(rank))}`,
  ...overrides,
});

describe("renderHomePage", () => {
  it("ranks the merchants with links to their pages", () => {
    const merchants = [entry(1), entry(2), entry(3)];
    const html = renderHomePage(makeLeaderboard(merchants), {});
    const links = [...html.matchAll(/<a href="([^"]+)" title="(0x[0-9a-f]{40})">([^<]+)<\/a>/g)];
    expect(links.map((l) => l[3])).toEqual(merchants.map((m) => m.name));
    expect(links.map((l) => l[1])).toEqual(merchants.map((m) => m.page));
    expect(html).toContain("$100.00");
    expect(html).toContain("$200.00");
    expect(html).toContain("50%");
    expect(html).toContain("3 / 4");
    expect(html).not.toContain(NOTICE);
  });

  it("escapes merchant names", () => {
    const html = renderHomePage(makeLeaderboard([entry(1, { name: XSS })]), {});
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;");
  });

  it("lists the unranked merchants below the ranking, counted, each with its reason", () => {
    const unranked = (digit: string, reason: UnrankedEntry["reason"], name: string): UnrankedEntry => {
      const { rank: _rank, ...rest } = entry(1, { name, address: wallet(digit), real_usd: 0, usd: 5 });
      return { ...rest, reason };
    };
    const html = renderHomePage(
      makeLeaderboard(
        [entry(1)],
        [unranked("a", "held", "held.example"), unranked("b", "no_passing_payment", XSS)],
      ),
      {},
    );
    expect(html).toContain("<h2>Not ranked (2)</h2>");
    expect(html).toContain("<td>held: held out of the ranking by the operator</td>");
    expect(html).toContain("<td>no payment passed every screen</td>");
    expect(html).not.toContain("<script>");
    expect(html.indexOf("Not ranked (2)")).toBeGreaterThan(html.indexOf("merchant-1.example"));
    expect(renderHomePage(makeLeaderboard([entry(1)]), {})).not.toContain("Not ranked");
  });

  it("shows a friendly row for an empty ranking and the notice banner", () => {
    const html = renderHomePage(makeLeaderboard([]), { notice: NOTICE });
    expect(html).toContain(
      "No ranked merchants in this window: none has received $0.01 in payments that passed every screen.",
    );
    expect(html).toContain(NOTICE);
  });

  it("pages the ranking: which merchants of how many, and links to the other pages kept to the window", () => {
    const unrankedOnly = (digit: string): UnrankedEntry => {
      const { rank: _rank, ...rest } = entry(1, { address: wallet(digit), real_usd: 0 });
      return { ...rest, reason: "no_passing_payment" };
    };
    const board = (number: number, merchants: LeaderboardEntry[], unranked: UnrankedEntry[] = []) => ({
      ...makeLeaderboard(merchants, unranked),
      totals: { merchants: 250, ranked: 201, unranked: 49 },
      page: { number, size: 100, pages: 3 },
    });
    const end = makeLeaderboard([]).window.end_block;
    const first = renderHomePage(board(1, [entry(1), entry(2)]), {});
    expect(first).toContain("Merchants 1 to 2 of 250 (201 ranked). Page 1 of 3.");
    expect(first).toContain(`<a rel="next" href="/ranking/2?end_block=${end}">Next</a>`);
    expect(first).toContain(`<a rel="last" href="/ranking/3?end_block=${end}">Last</a>`);
    expect(first).not.toContain('rel="prev"');
    expect(first).toContain("Weekly reports of the x402 micropayments");

    const last = renderHomePage(board(3, [entry(201)], [unrankedOnly("a")]), {});
    expect(last).toContain("Merchants 201 to 202 of 250 (201 ranked). Page 3 of 3.");
    expect(last).toContain(`<a rel="first" href="/?end_block=${end}">First</a>`);
    expect(last).toContain(`<a rel="prev" href="/ranking/2?end_block=${end}">Previous</a>`);
    expect(last).not.toContain('rel="next"');
    expect(last).toContain("<h2>Not ranked (49)</h2>");
    expect(last).toContain(`href="/ranking/3?end_block=${end}">Permanent link`);
    expect(last).not.toContain("Weekly reports of the x402 micropayments");

    // A page of unranked merchants only has no ranking table, and no "no ranked merchants" row.
    const tail = renderHomePage(board(3, [], [unrankedOnly("b")]), {});
    expect(tail).not.toContain("<caption>Merchants ranked by real revenue");
    expect(tail).not.toContain("No ranked merchants");
  });

  it("links the leaderboard JSON, the schema, the datasets and the licence", () => {
    const html = renderHomePage(makeLeaderboard([]), {});
    for (const href of [
      "/v1/leaderboard/base",
      "/v1/schema/report.json",
      "/v1/datasets/base/reports.ndjson",
      "/v1/datasets/base/reports.csv",
      "https://creativecommons.org/licenses/by/4.0/",
    ]) {
      expect(html).toContain(`href="${href}"`);
    }
    expect(html).toMatch(/<meta name="viewport"/);
    expect(html).toMatch(/<title>[^<]+<\/title>/);
  });
});
