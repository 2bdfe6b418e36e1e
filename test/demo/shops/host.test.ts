import { describe, expect, it, onTestFinished } from "vitest";
import { shopsApp } from "../../../src/demo/shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "../../../src/demo/shops/index.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { refusingFacilitator, testConfig } from "../../helpers/merchant.ts";

describe("the demo's shops host", () => {
  it("shows the demo's banner on its index and on every shop's API reference, the index styled like the reports", async () => {
    const opened = await openTestDatabase("pglite");
    onTestFinished(opened.close);
    const shops = DEMO_SHOPS.filter((s) => ["uuid", "fortune"].includes(s.slug)).map((shop, i) => ({
      name: shop.title,
      merchant: shopMerchant(
        shop,
        `0x${String(i + 1).repeat(40)}` as `0x${string}`,
        `http://shops.test/${shop.slug}`,
      ),
    }));
    const config = testConfig();
    const app = await shopsApp(shops, {
      services: { db: opened.db, config },
      facilitator: refusingFacilitator,
      payments: config.payments,
      notice: "DEVNET DEMO: not real money.",
    });

    const index = await (await app.request("/")).text();
    expect(index).toContain('<div class="notice" role="note">DEVNET DEMO: not real money.</div>');
    expect(index).toContain("<table>");
    expect(index).toMatch(/<code>GET \/uuid<\/code> \$0\.0001 \(unlisted\)/);
    for (const slug of ["uuid", "fortune"]) {
      const reference = await (await app.request(`/${slug}/docs`)).text();
      expect(reference).toContain('<div class="notice" role="note">DEVNET DEMO: not real money.</div>');
    }
  });
});
