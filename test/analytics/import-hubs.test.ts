/**
 * `hub` records: the operator's labels of known exchange and bridge wallets on Base, imported beside the
 * repository's list (src/chain/base-hubs.json) into `hub_labels`, which the report's clusters read.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import { dataVersion } from "../../src/analytics/migrations.ts";
import { runImport } from "../../src/cli/import.ts";
import { addr, checkpoint, ndjsonFile, payment, tempAnalytics } from "../helpers/data.ts";

let analytics: Analytics | undefined;
const dirs: string[] = [];
afterEach(() => {
  analytics?.close();
  analytics = undefined;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const hub = (address: string, label: string, kind = "exchange") => ({
  type: "hub",
  chain: "base",
  address,
  label,
  kind,
  source: "https://basescan.org/accounts/label/exchange",
});

const upper = (address: string) => `0x${address.slice(2).toUpperCase()}`;

const labels = (s: Analytics) =>
  s.all<{ chain: string; address: string; label: string; kind: string; source: string }>(
    "SELECT * FROM hub_labels ORDER BY address",
  );

describe("hub records", () => {
  it("import alone, lower case, the last line of a wallet winning, counted, and bump the data version", async () => {
    analytics = await tempAnalytics();
    const before = await dataVersion(analytics);
    const counts = await importNdjson(
      analytics,
      ndjsonFile([
        hub(upper(addr("x1")), "Example Exchange 1"),
        "",
        hub(addr("b1"), "Example Bridge", "Bridge"),
        { ...hub(addr("x1"), "Example Exchange 1 (hot wallet)"), source: "http://example.com/wallets" },
      ]),
    );
    expect(counts.hub).toEqual({ read: 3, added: 2 });
    expect(counts.payment).toEqual({ read: 0, added: 0 });
    expect(await dataVersion(analytics)).toBe(before + 1n);
    expect(await labels(analytics)).toEqual(
      [
        {
          chain: "base",
          address: addr("x1"),
          label: "Example Exchange 1 (hot wallet)",
          kind: "exchange",
          source: "http://example.com/wallets",
        },
        {
          chain: "base",
          address: addr("b1"),
          label: "Example Bridge",
          kind: "bridge",
          source: "https://basescan.org/accounts/label/exchange",
        },
      ].sort((a, b) => a.address.localeCompare(b.address)),
    );
    // Nothing else was written: a hub is not a merchant.
    expect(await analytics.one("SELECT count(*) AS n FROM merchants")).toEqual({ n: 0n });

    // A later file replaces a wallet's label and adds none; the version counts the write.
    const again = await importNdjson(analytics, ndjsonFile([hub(addr("b1"), "Example Bridge v2", "bridge")]));
    expect(again.hub).toEqual({ read: 1, added: 0 });
    expect(await dataVersion(analytics)).toBe(before + 2n);
    expect(await analytics.one("SELECT label FROM hub_labels WHERE address = $a", { a: addr("b1") })).toEqual(
      {
        label: "Example Bridge v2",
      },
    );
  });

  it("go in beside payments, the bulk way and the exact way alike", async () => {
    for (const repeat of [false, true]) {
      const s = await tempAnalytics();
      try {
        const p = payment({ payer: addr("p"), payTo: addr("m"), amount: 1000 });
        const counts = await importNdjson(
          s,
          ndjsonFile([
            p,
            hub(addr("x1"), "first"),
            ...(repeat ? [p] : []),
            hub(addr("x1"), "last"),
            checkpoint(),
          ]),
        );
        expect(counts.payment.added).toBe(1);
        expect(counts.hub).toEqual({ read: 2, added: 1 });
        expect((await labels(s)).map((r) => r.label)).toEqual(["last"]);
      } finally {
        s.close();
      }
    }
  });

  it("refuse a bad field, naming its line, and keep nothing", async () => {
    const ok = hub(addr("x1"), "Example Exchange");
    const refused = async (line: object) => {
      analytics?.close();
      analytics = await tempAnalytics();
      const file = ndjsonFile([ok, "", line]);
      const error = await importNdjson(analytics, file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ImportError);
      const { message, reason, line: n } = error as ImportError;
      expect(message).toBe(`${file}:${n}: ${reason}`);
      expect(message).not.toContain("\n");
      expect(await labels(analytics)).toEqual([]);
      return `line ${n}: ${reason}`;
    };
    expect(await refused({ ...ok, chain: "ethereum" })).toBe(
      'line 3: "chain" must be one of "base", "polygon", "arbitrum", "solana"',
    );
    expect(await refused({ ...ok, chain: undefined })).toBe('line 3: missing field "chain"');
    expect(await refused({ ...ok, address: "0x12" })).toMatch(/^line 3: "address" must be an address/);
    expect(await refused({ ...ok, address: undefined })).toBe('line 3: missing field "address"');
    expect(await refused({ ...ok, label: undefined })).toBe('line 3: missing field "label"');
    expect(await refused({ ...ok, label: "" })).toMatch(/^line 3: "label" must be a name/);
    expect(await refused({ ...ok, label: "   " })).toMatch(/^line 3: "label" must be a name/);
    expect(await refused({ ...ok, kind: "mixer" })).toBe('line 3: "kind" must be one of exchange, bridge');
    expect(await refused({ ...ok, kind: undefined })).toBe('line 3: missing field "kind"');
    expect(await refused({ ...ok, source: undefined })).toBe('line 3: missing field "source"');
    for (const source of ["basescan", "ftp://example.com/x", "https://", "https://a b.example/"]) {
      expect(await refused({ ...ok, source })).toMatch(/^line 3: "source" must be a full http\(s\) URL/);
    }
  });

  it("are printed by the import command with the other counts", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-hubs-"));
    dirs.push(dir);
    const file = ndjsonFile([hub(addr("x1"), "Example Exchange"), hub(addr("x2"), "Example Exchange 2")]);
    const written: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await runImport([file], { data: dir })).toBe(0);
    } finally {
      write.mockRestore();
    }
    const printed = JSON.parse(written.join(""));
    expect(printed.rows).toBe(2);
    expect(printed.hub).toEqual({ read: 2, added: 2 });
  });
});

describe("migration 14", () => {
  it("adds hub_labels to an analytics database made before it, which then takes hub records", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-analytics-"));
    dirs.push(dir);
    let s = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    await importNdjson(s, ndjsonFile([payment({ payer: addr("p"), payTo: addr("m"), amount: 1000 })]));
    // Back to the schema before migration 14, the data kept.
    await s.run("DROP TABLE hub_labels");
    await s.run("DELETE FROM schema_migrations WHERE version = 14");
    s.close();
    s = await Analytics.open({ dataDir: dir, memoryLimit: "256MB", threads: 1 });
    analytics = s;
    expect(await s.one("SELECT name FROM schema_migrations WHERE version = 14")).toEqual({
      name: "hub labels",
    });
    expect(await s.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 1n });
    expect(await labels(s)).toEqual([]);
    const counts = await importNdjson(s, ndjsonFile([hub(upper(addr("x1")), "Example Exchange")]));
    expect(counts.hub).toEqual({ read: 1, added: 1 });
    expect((await labels(s)).map((r) => r.address)).toEqual([addr("x1")]);
  });
});
