import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startReportService } from "../../src/services/reports.ts";
import { holdAnalytics } from "../helpers/hold.ts";

describe("the report service", () => {
  it("waits out a reader that holds the database when it starts", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-reports-"));
    const holder = await holdAnalytics(dir);
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const starting = startReportService(
      loadConfig({ env: { X402M_DATA: dir, PORT: "0" } }),
      undefined,
      lifecycle,
    );
    const settled = { done: false };
    starting.then(
      () => (settled.done = true),
      () => (settled.done = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(settled.done).toBe(false);
    await holder.release();
    const started = await starting;
    expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
  });
});
