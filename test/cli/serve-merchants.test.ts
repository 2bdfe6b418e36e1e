import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { isolatedDatabaseOptions, LEDGER_KIND } from "../helpers/db.ts";
import { runMain } from "../helpers/in-process.ts";
import { listenSupportedOnly } from "../helpers/merchant.ts";
import { newMerchant } from "../helpers/x402.ts";

/** Documents read back loosely: the assertions are the check. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read back in a test
type LooseJson = any;

const BIN = path.resolve("bin/x402-merchants");

describe("serve --only", () => {
  it("runs the utility and alias hosts on their own ports, prints both URLs, and stops on SIGTERM", async () => {
    const facilitator = await listenSupportedOnly();
    onTestFinished(() => facilitator.close());
    const payTo = newMerchant();
    // The hosts' store: a schema of the server where the tests have one (CI: PGlite started in the child
    // costs it a CPU-second or more, and test/cli/serve-modules.test.ts serves on PGlite), else a data
    // directory with an empty PGlite cluster already made (initdb takes about 2 s).
    const state = await isolatedDatabaseOptions(LEDGER_KIND, "merchants");
    onTestFinished(state.cleanup);
    const data = state.dataDir;
    const child = spawn(process.execPath, [BIN, "serve", "--only", "utility,utility-alias", "--data", data], {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        DATABASE_URL: state.databaseUrl ?? "",
        X402M_FACILITATOR_URL: facilitator.url,
        X402M_UTILITY_PAY_TO: payTo,
        X402M_UTILITY_PORT: "0",
        X402M_UTILITY_ALIAS_PORT: "0",
        X402M_METRICS_PORT: "0",
      },
    });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => {
        err += chunk.toString();
      });
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}: ${err}`)));
    });
    const urls = JSON.parse(line) as Record<string, string>;
    // The hosts in the order named, then the operator's metrics (on loopback, a free port here).
    expect(Object.keys(urls)).toEqual(["utility", "utility-alias", "metrics"]);
    expect(urls.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(urls.metrics as string)).status).toBe(200);
    const { utility, "utility-alias": alias } = urls as { utility: string; "utility-alias": string };
    expect(utility).not.toBe(alias);

    const unpaid = await fetch(`${utility}/api/calc?expr=1%2B1`);
    expect(unpaid.status).toBe(402);
    const doc = (await (await fetch(`${utility}/openapi.json`)).json()) as LooseJson;
    expect(doc.paths["/api/calc"].get["x-payment-info"].price.amount).toBe("0.001");

    // The alias lists only its subset of the utility catalogue (geo and scrape): never calc.
    expect((await fetch(`${alias}/api/calc?expr=1`)).status).toBe(404);
    const aliasDoc = (await (await fetch(`${alias}/openapi.json`)).json()) as LooseJson;
    for (const p of Object.keys(aliasDoc.paths)) expect(["/api/geo", "/api/scrape"]).toContain(p);

    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  }, 60_000);

  // Refused from the flags and the environment before anything opens: in this process (runMain), where a
  // child each cost 2-3 CPU-s for the same exit code and line (the case above serves as a process).
  it("refuses an unknown service and a merchant without a wallet", async () => {
    const unknown = await runMain(["serve", "--only", "utility,bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--only takes a list of reports, utility, utility-alias/);
    const noWallet = await runMain(["serve", "--only", "utility"], { X402M_UTILITY_PAY_TO: "" });
    expect(noWallet.code).toBe(2);
    expect(noWallet.stderr).toMatch(/set X402M_UTILITY_PAY_TO/);
  });

  // The one `listings` run as a process in the suite: kept so, the user's path.
  it("prints the listings as import records", async () => {
    const payTo = newMerchant();
    const out = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [BIN, "listings", "--only", "utility"], {
        env: { ...process.env, X402M_UTILITY_PAY_TO: payTo, X402M_UTILITY_URL: "https://utility.test/" },
      });
      let stdout = "";
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      child.once("exit", () => resolve(stdout));
    });
    expect(
      out
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toContainEqual({
      type: "listing",
      pay_to: payTo.toLowerCase(),
      resource: "https://utility.test/api/calc",
      price_usd: 0.001,
      description: expect.stringMatching(/^Calculator with 50 significant digits/),
      method: "GET",
    });
  });
});
