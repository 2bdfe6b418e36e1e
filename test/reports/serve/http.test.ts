import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { FLAG_KINDS } from "../../../src/reports/screens/index.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment, repeat } from "../../helpers/data.ts";

const m = addr("merchant");
let analytics: Analytics;
let app: ReturnType<typeof reportRoutes>;

beforeAll(async () => {
  analytics = await analyticsWith([
    { type: "merchant", address: m, name: "shop.example", claimed: true },
    {
      type: "listing",
      pay_to: m,
      resource: "https://shop.example/api",
      price_usd: 0.01,
      description: "An <b>API</b>",
    },
    payment({ payer: addr("a"), payTo: m, amount: 3_000_000 }),
    ...repeat(10, { payer: addr("farm"), payTo: m, amount: 100 }),
  ]);
  app = reportRoutes(new ReportService(analytics, { publicUrl: "https://reports.test" }), {
    notice: async () => "SAMPLE DATA: made up.",
  });
});
afterAll(() => analytics.close());

async function errorOf(path: string, status: number, code: string) {
  const res = await app.request(path);
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
}

describe("report API", () => {
  it("serves a report that validates against the served schema, for an address in any case", async () => {
    const schema = await (await app.request("/v1/schema/report.json")).json();
    const validate = new Ajv2020({ strict: false }).compile(schema as object);
    const res = await app.request(`/v1/reports/base/${m.toUpperCase().replace("0X", "0x")}`);
    expect(res.status).toBe(200);
    const report = await res.json();
    expect(validate(report)).toBe(true);
    expect(report).toMatchObject({
      address: m,
      name: "shop.example",
      claimed: true,
      tx: 11,
      flags: { tiny_repeat: { tx: 10 } },
    });
    const older = (await (await app.request(`/v1/reports/base/${m}?end_block=${END}`)).json()) as {
      window: { end_block: number };
    };
    expect(older.window.end_block).toBe(END);
  });

  it("answers bad input with a JSON error and the right status", async () => {
    await errorOf("/v1/reports/base/0x1234", 400, "bad_address");
    await errorOf("/v1/reports/base/not-an-address", 400, "bad_address");
    await errorOf(`/v1/reports/base/${addr("nobody")}`, 404, "unknown_merchant");
    await errorOf(`/v1/reports/base/${m}?end_block=${END + 1}`, 404, "not_found");
    await errorOf(`/v1/reports/base/${m}?end_block=abc`, 400, "bad_end_block");
    await errorOf("/v1/reports/ethereum/0x1234", 404, "not_found");
    await errorOf("/v1/leaderboard/base?end_block=-1", 400, "bad_end_block");
    await errorOf(`/badges/base/${addr("nobody")}.svg`, 404, "unknown_merchant");
  });

  it("lets a browser read the API: CORS headers on an answer and on a refusal, and a preflight answered", async () => {
    for (const [path, status] of [
      [`/v1/reports/base/${m}`, 200],
      ["/v1/reports/base/not-an-address", 400],
    ] as const) {
      const res = await app.request(path, { headers: { Origin: "https://app.example" } });
      expect(res.status, path).toBe(status);
      expect(res.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(res.headers.get("access-control-expose-headers"), path).toBe("X-Request-Id");
    }
    const preflight = await app.request("/v1/leaderboard/base", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET,HEAD,OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("serves the leaderboard", async () => {
    const board = (await (await app.request("/v1/leaderboard/base")).json()) as { merchants: unknown[] };
    expect(board.merchants).toEqual([expect.objectContaining({ rank: 1, address: m, real_usd: 3 })]);
  });

  it("links every page and report to the screens' rules, served as a page with every screen in it", async () => {
    const report = (await (await app.request(`/v1/reports/base/${m}`)).json()) as { flag_note: string };
    expect(report.flag_note).toMatch(
      /not a finding of wrongdoing.* How each screen works: https:\/\/reports\.test\/screens$/,
    );
    const page = await (await app.request(`/reports/base/${m}`)).text();
    expect(page).toContain('<a href="https://reports.test/screens">How each screen works</a>');
    for (const path of [`/reports/base/${m}`, "/", "/no-such-page"])
      expect(await (await app.request(path)).text()).toContain('<a href="/screens">How the screens work</a>');

    const screens = await app.request("/screens");
    expect(screens.status).toBe(200);
    expect(screens.headers.get("content-type")).toMatch(/text\/html/);
    const text = await screens.text();
    expect(text).toContain("SAMPLE DATA: made up.");
    for (const kind of FLAG_KINDS)
      expect(text).toMatch(new RegExp(`<h2 id="[^"]+">\\d\\. <code>${kind}</code>`));
  });

  it("says which window a page's figures belong to, with a link that keeps them", async () => {
    const report = (await (await app.request(`/v1/reports/base/${m}`)).json()) as {
      window: { end_block: number };
    };
    const end = report.window.end_block;
    const page = await (await app.request(`/reports/base/${m}`)).text();
    expect(page).toContain(
      `<a href="/reports/base/${m}?end_block=${end}">Permanent link to this window's report</a>`,
    );
    const kept = await app.request(`/reports/base/${m}?end_block=${end}`);
    expect(kept.status).toBe(200);
    expect(await (await app.request("/")).text()).toContain(`<a href="/?end_block=${end}">`);
  });

  it("serves the page, the badge and the datasets", async () => {
    const page = await app.request(`/reports/base/${m}`);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain("shop.example");
    expect(html).not.toContain("<b>API</b>");
    expect(html).toContain("SAMPLE DATA: made up.");

    const badge = await app.request(`/badges/base/${m}.svg`);
    expect(badge.headers.get("content-type")).toMatch(/image\/svg\+xml/);
    expect(await badge.text()).toMatch(/^<svg/);

    const ndjson = await app.request("/v1/datasets/base/reports.ndjson");
    expect(ndjson.headers.get("link")).toContain("creativecommons.org/licenses/by/4.0");
    const lines = (await ndjson.text()).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).address)).toContain(m);

    const csv = await app.request("/v1/datasets/base/reports.csv");
    expect(csv.headers.get("content-disposition")).toMatch(
      /attachment; filename="x402-merchant-reports-base-\d+\.csv"/,
    );
    expect((await csv.text()).split("\r\n")[0]).toMatch(/^schema_version,/);

    const home = await app.request("/");
    expect(await home.text()).toContain("shop.example");
  });
});
