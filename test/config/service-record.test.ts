import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Lifecycle } from "../../src/common/lifecycle.ts";
import {
  reachableUrl,
  readServiceRecord,
  removeServiceRecord,
  writeServiceRecord,
} from "../../src/config/service-record.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startServices } from "../../src/services/start.ts";

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "x402m-registry-"));
const record = (pid: number) => ({
  pid,
  url: "http://127.0.0.1:1",
  public_url: "https://reports.test",
  started_at: "2026-01-01T00:00:00.000Z",
});

describe("the report service record", () => {
  it("is read back whole and leaves no temporary file beside it", () => {
    const dir = tempDir();
    writeServiceRecord(dir, record(process.pid));
    writeServiceRecord(dir, { ...record(process.pid), url: "http://127.0.0.1:2" });
    expect(readServiceRecord(dir)).toEqual({ ...record(process.pid), url: "http://127.0.0.1:2" });
    expect(fs.readdirSync(dir)).toEqual(["report-service.json"]);
  });

  it("is ignored when its process is gone, or when it is not a record", () => {
    const dir = tempDir();
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    writeServiceRecord(dir, record(gone));
    expect(readServiceRecord(dir)).toBeUndefined();
    fs.writeFileSync(path.join(dir, "report-service.json"), '{"pid": 1, "url": ');
    expect(readServiceRecord(dir)).toBeUndefined();
    expect(readServiceRecord(tempDir())).toBeUndefined();
  });

  it("is removed only by the process it names", () => {
    const dir = tempDir();
    writeServiceRecord(dir, record(process.pid));
    removeServiceRecord(dir, process.pid + 1);
    expect(readServiceRecord(dir)?.pid).toBe(process.pid);
    removeServiceRecord(dir, process.pid);
    expect(fs.existsSync(path.join(dir, "report-service.json"))).toBe(false);
  });

  it("names a loopback address for a service listening on every interface", () => {
    expect(reachableUrl("http://0.0.0.0:8402")).toBe("http://127.0.0.1:8402");
    expect(reachableUrl("http://[::]:8402")).toBe("http://[::1]:8402");
    expect(reachableUrl("http://10.0.0.2:8402")).toBe("http://10.0.0.2:8402");
  });

  it("is written by the composition root once the reports answer, and removed when they stop", async () => {
    const dir = tempDir();
    const lifecycle = new Lifecycle();
    onTestFinished(() => lifecycle.close());
    const config = loadConfig({ env: { X402M_DATA: dir, PORT: "0", X402M_METRICS_PORT: "0" } });
    const services = await startServices({ config, lifecycle, reports: {} });
    const recorded = readServiceRecord(dir);
    expect(recorded).toMatchObject({ pid: process.pid, url: services.urls.reports });
    expect(recorded?.public_url).toBe(services.urls.reports);
    expect((await fetch(`${recorded?.url}/healthz`)).status).toBe(200);
    await lifecycle.close();
    expect(fs.existsSync(path.join(dir, "report-service.json"))).toBe(false);
  });
});
