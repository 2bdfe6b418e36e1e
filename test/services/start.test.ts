import { describe, expect, it, onTestFinished } from "vitest";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { listingsOf } from "../../src/merchant-kit/listings.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startServices } from "../../src/services/start.ts";
import { isolatedDatabaseOptions } from "../helpers/db.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { newMerchant } from "../helpers/x402.ts";

describe("the composition root", () => {
  it("lists every endpoint of the merchants it serves in the reports, paid or not", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const db = await isolatedDatabaseOptions(process.env.DATABASE_URL ? "postgres" : "pglite");
    onTestFinished(db.cleanup);
    const payTo = newMerchant().toLowerCase();
    const config = loadConfig({
      env: {
        X402M_DATA: db.dataDir,
        DATABASE_URL: db.databaseUrl ?? "",
        PORT: "0",
        X402M_METRICS_PORT: "0",
        X402M_FACILITATOR_URL: facilitator.url,
        X402M_UTILITY_PAY_TO: payTo,
        X402M_UTILITY_PORT: "0",
      },
    });
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const services = await startServices({ config, lifecycle, merchants: ["utility"], reports: {} });

    const utility = services.merchants.utility;
    if (!utility || !services.analytics) throw new Error("the utility merchant and the reports should run");
    const expected = listingsOf(utility).map((l) => l.resource);
    expect(expected.length).toBeGreaterThan(20);
    const stored = await services.analytics.all<{ resource: string }>(
      "SELECT resource FROM listings WHERE pay_to = $payTo ORDER BY resource",
      { payTo },
    );
    expect(stored.map((r) => r.resource)).toEqual([...expected].sort());
  }, 60_000);
});
