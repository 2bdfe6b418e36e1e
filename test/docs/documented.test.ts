/**
 * Nothing the program has goes undocumented: every command and flag of the command table, every HTTP route the
 * report service and the merchant hosts register, appear in docs/; the README links every document, and
 * docs/README.md indexes them. The environment variables are held to docs/operations.md by
 * test/config/env-documented.test.ts; the command reference to the commands' help by cli-reference.test.ts.
 *
 * The routes are read from the running Hono apps (`app.routes`), built as the services build them, so that a
 * route added anywhere (a route file, the kit, a catalogue) is seen, however its path is written.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { COMMANDS } from "../../src/cli/commands.ts";
import { FLAGS } from "../../src/cli/flags.ts";
import type { MerchantHost } from "../../src/config/ports.ts";
import { merchantApp } from "../../src/merchant-kit/app.ts";
import { MERCHANTS } from "../../src/merchants/index.ts";
import { ReportService, reportRoutes } from "../../src/reports/index.ts";
import { tempAnalytics } from "../helpers/data.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { refusingFacilitator, testConfig } from "../helpers/merchant.ts";

const DOC_FILES = fs
  .readdirSync("docs")
  .filter((f) => f.endsWith(".md"))
  .sort();
const DOCS = DOC_FILES.map((f) => fs.readFileSync(path.join("docs", f), "utf8")).join("\n");
const README = fs.readFileSync("README.md", "utf8");

/** The paths an app answers, as the documents write them: `/reports/base/{address}` for `:address`. */
function pathsOf(app: { routes: readonly { path: string }[] }): string[] {
  const paths = app.routes.map((r) => r.path).filter((p) => !p.includes("*"));
  return [...new Set(paths)].map((p) => p.replace(/:([A-Za-z_]+)/g, "{$1}")).sort();
}

describe("the documents", () => {
  it("name every command and every flag it takes", () => {
    const cli = fs.readFileSync("docs/cli.md", "utf8");
    for (const command of COMMANDS) {
      expect(cli, command.name).toContain(`### ${command.name}\n`);
      for (const flag of Object.keys(command.flags))
        expect(cli, `${command.name} --${flag}`).toContain(`--${flag}`);
    }
    const unnamed = Object.keys(FLAGS).filter((flag) => !DOCS.includes(`--${flag}`));
    expect(unnamed, "flags no document names").toEqual([]);
  });

  it("are every one in docs/README.md's index and linked from the README, and their links lead somewhere", () => {
    const index = fs.readFileSync("docs/README.md", "utf8");
    const others = DOC_FILES.filter((f) => f !== "README.md");
    expect(
      others.filter((f) => !index.includes(`](${f})`)),
      "not in docs/README.md",
    ).toEqual([]);
    expect(README).toContain("](docs/README.md)");
    expect(
      others.filter((f) => !README.includes(`](docs/${f})`)),
      "not linked from README.md",
    ).toEqual([]);
    const broken: string[] = [];
    for (const file of ["README.md", ...DOC_FILES.map((f) => path.join("docs", f))]) {
      const text = fs.readFileSync(file, "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        if (!fs.existsSync(path.join(path.dirname(file), target as string)))
          broken.push(`${file}: ${target}`);
      }
    }
    expect(broken, "links to nothing").toEqual([]);
  });

  it("keep the README a front door: under 150 lines", () => {
    expect(README.split("\n").length).toBeLessThan(150);
  });
});

describe("the documented routes", () => {
  let analytics: Analytics;
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  beforeAll(async () => {
    analytics = await tempAnalytics();
    database = await openTestDatabase("pglite");
  });
  afterAll(async () => {
    analytics?.close();
    await database?.close();
  });

  it("are every route of the report service", () => {
    const paths = pathsOf(reportRoutes(new ReportService(analytics, { publicUrl: "http://127.0.0.1" })));
    expect(paths).toContain("/v1/reports/base/{address}");
    expect(
      paths.filter((p) => !DOCS.includes(p)),
      "report service routes no document gives",
    ).toEqual([]);
  });

  it("are every route of every merchant host, the kit's and its catalogue's", async () => {
    const config = testConfig();
    const missing: string[] = [];
    for (const name of Object.keys(MERCHANTS) as MerchantHost[]) {
      const merchant = MERCHANTS[name](
        { payTo: "0x000000000000000000000000000000000000dEaD", publicUrl: "http://127.0.0.1" },
        config,
      );
      const app = await merchantApp(merchant, {
        services: { db: database.db, config },
        facilitator: refusingFacilitator,
        payments: config.payments,
        funds: async () => ({ balance: 0n, used: new Set<string>() }),
      });
      const paths = pathsOf(app);
      expect(paths, name).toContain("/openapi.json");
      for (const endpoint of merchant.endpoints)
        expect(paths, name).toContain(endpoint.path.replace(/:([A-Za-z_]+)/g, "{$1}"));
      missing.push(...paths.filter((p) => !DOCS.includes(p)).map((p) => `${name} ${p}`));
    }
    expect(missing, "merchant host routes no document gives").toEqual([]);
  });
});
