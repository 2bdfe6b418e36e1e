import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Analytics } from "../../../src/analytics/duckdb.ts";
import { bumpDataVersion } from "../../../src/analytics/migrations.ts";
import { BatchWriter } from "../../../src/indexer/writer.ts";
import { reportRoutes } from "../../../src/reports/serve/http.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, analyticsWith, END, payment, repeat, timeOf, txHash } from "../../helpers/data.ts";

const m1 = addr("m1");
const m2 = addr("m2");
const PUBLIC = "https://reports.test";
let analytics: Analytics;
let service: ReportService;
let app: ReturnType<typeof reportRoutes>;
let writer: BatchWriter;
/** The indexer's own connection, as the service gives it (src/services/reports.ts). */
let indexer: Analytics;
/** The indexer's checkpoint: each commit follows it, as a follower's batches do. */
let head = END;

const cursor = (block: number) => ({
  block,
  hash: `0x${block.toString(16).padStart(64, "0")}`,
  time: timeOf(block),
});

/** One indexer commit of the next `blocks` blocks, a payment to m1 in the last (m1 is known: no new merchant). */
async function commitHead(blocks = 5): Promise<void> {
  const from = head + 1;
  const to = head + blocks;
  const pay = {
    tx: txHash(),
    logIndex: 0,
    block: to,
    time: timeOf(to),
    facilitator: addr("f"),
    scheme: "exact" as const,
    method: "eip3009" as const,
  };
  await writer.commit(
    {
      from,
      to,
      end: cursor(to),
      payments: [{ ...pay, payer: addr("late buyer"), payTo: m1, amount: 2_000_000n }],
      candidates: [],
      transfers: [],
      hashes: [cursor(to)],
    },
    { startBlock: END, previous: cursor(head), reorgDepth: 64 },
  );
  head = to;
}

/** When the stored reports of the window ending at `end` were built (each build has its own time). */
async function builtAt(end: number): Promise<string | undefined> {
  const row = await analytics.one<{ generated_at: string }>(
    "SELECT generated_at::VARCHAR AS generated_at FROM report_windows WHERE end_block = $end",
    { end },
  );
  return row?.generated_at;
}

beforeAll(async () => {
  analytics = await analyticsWith([
    { type: "merchant", address: m1, name: "one.example" },
    { type: "merchant", address: m2, name: "two.example" },
    payment({ payer: addr("a"), payTo: m1, amount: 3_000_000 }),
    payment({ payer: addr("b"), payTo: m2, amount: 1_000_000 }),
    ...repeat(10, { payer: addr("farm"), payTo: m2, amount: 100 }),
  ]);
  // A build a second: every build of a window has a generated_at of its own.
  let builds = 0;
  const now = () => new Date(Date.UTC(2026, 10, 26) + 1_000 * builds++);
  service = new ReportService(analytics, { publicUrl: PUBLIC, now });
  app = reportRoutes(service, { notice: async () => "SAMPLE DATA" });
  indexer = await analytics.fork();
  writer = new BatchWriter(indexer);
});
afterAll(() => analytics.close());

const KINDS = [
  (a: string) => `/v1/reports/base/${a}`,
  (a: string) => `/v1/reports/base/${a}/evidence`,
  (a: string) => `/reports/base/${a}`,
  (a: string) => `/reports/base/${a}/evidence`,
  (a: string) => `/badges/base/${a}.svg`,
  () => "/v1/leaderboard/base",
  () => "/",
];

describe("answers kept per indexed head", () => {
  it("renders each kind once per head, and answers the same bytes until the head moves", async () => {
    const reads = [
      vi.spyOn(service, "report"),
      vi.spyOn(service, "evidence"),
      vi.spyOn(service, "leaderboard"),
    ];
    const calls = () => reads.reduce((n, spy) => n + spy.mock.calls.length, 0);
    try {
      const first = await Promise.all(KINDS.map(async (kind) => (await app.request(kind(m1))).text()));
      const rendered = calls();
      expect(rendered).toBe(KINDS.length);
      const again = await Promise.all(KINDS.map(async (kind) => (await app.request(kind(m1))).text()));
      expect(again).toEqual(first);
      expect(calls()).toBe(rendered);
      await commitHead();
      await service.latestBuilt();
      await Promise.all(KINDS.map((kind) => app.request(kind(m1))));
      expect(calls()).toBe(rendered + KINDS.length);
    } finally {
      for (const spy of reads) spy.mockRestore();
    }
  });

  it("makes readers of one thing that is not rendered yet wait for one rendering", async () => {
    await commitHead();
    await service.latestBuilt();
    const report = vi.spyOn(service, "report");
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => app.request(`/badges/base/${m2}.svg`)),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(new Set(await Promise.all(answers.map((a) => a.text()))).size).toBe(1);
      expect(report).toHaveBeenCalledTimes(1);
    } finally {
      report.mockRestore();
    }
  });

  it("serves a new head once its window is built, the previous head whole meanwhile, with the figures a fresh build gives", async () => {
    await service.latestBuilt();
    const before = await (await app.request(`/v1/reports/base/${m1}`)).text();
    const { tx } = JSON.parse(before) as { tx: number };
    await commitHead();
    // Its build started with the commit: until it is done, readers get the previous head's answer, whole.
    const meanwhile = await (await app.request(`/v1/reports/base/${m1}`)).text();
    await service.latestBuilt();
    const res = await app.request(`/v1/reports/base/${m1}`);
    const body = await res.text();
    const after = JSON.parse(body) as { tx: number; window: { end_block: number } };
    expect(after.window.end_block).toBe(head);
    expect(after.tx).toBe(tx + 1);
    expect([before, body]).toContain(meanwhile);
    // Another service on the same store, nothing kept: the same bytes, since the stored window is current.
    const fresh = reportRoutes(new ReportService(analytics, { publicUrl: PUBLIC }), {
      notice: async () => "SAMPLE DATA",
    });
    for (const kind of KINDS) {
      const [kept, built] = await Promise.all([app.request(kind(m1)), fresh.request(kind(m1))]);
      expect(await kept.text(), kind(m1)).toBe(await built.text());
    }
  });

  it("never builds a closed window again while the indexer moves on, for any of its merchants", async () => {
    const closed = `?end_block=${END}`;
    const first = await (await app.request(`/v1/reports/base/${m1}${closed}`)).text();
    const built = await builtAt(END);
    const latest = await builtAt(head);
    for (let i = 0; i < 3; i++) await commitHead();
    await service.latestBuilt();
    expect(await (await app.request(`/v1/reports/base/${m1}${closed}`)).text()).toBe(first);
    // Not asked before: read from the stored window, still current, not built again.
    const other = (await (await app.request(`/reports/base/${m2}${closed}`)).text()).length;
    expect(other).toBeGreaterThan(0);
    expect(await builtAt(END)).toBe(built);
    // The latest is built for each new head meanwhile.
    expect(latest).toBeDefined();
    expect(await builtAt(head)).toBeDefined();
  });

  it("builds a closed window again when a write reaches into it", async () => {
    const closed = `/v1/reports/base/${m2}?end_block=${END}`;
    const before = JSON.parse(await (await app.request(closed)).text()) as { tx: number };
    const built = await builtAt(END);
    // A late payment inside the week, as an import or a deep reorg would write it.
    await indexer.transaction(async () => {
      await indexer.run(
        `INSERT INTO payments SELECT * REPLACE ($tx AS tx_hash, block_number - 7 AS block_number)
         FROM payments WHERE pay_to = $m LIMIT 1`,
        { tx: txHash(), m: m2 },
      );
      await bumpDataVersion(indexer, END - 7);
    });
    const after = JSON.parse(await (await app.request(closed)).text()) as { tx: number };
    expect(after.tx).toBe(before.tx + 1);
    expect(await builtAt(END)).not.toBe(built);
  });
});

describe("readers side by side", () => {
  it("answers a report while another reader's evidence is held in the store", async () => {
    // A store of its own: nothing else of this file reads or builds on it meanwhile.
    const store = await analyticsWith([
      payment({ payer: addr("a"), payTo: m1, amount: 3_000_000 }),
      payment({ payer: addr("b"), payTo: m2, amount: 1_000_000 }),
    ]);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let hold = true;
    const fork = store.fork.bind(store);
    vi.spyOn(store, "fork").mockImplementation(async () => {
      const db = await fork();
      const read = db.allPrepared.bind(db);
      // The evidence's first read of the store waits until released, as a long evidence build would. Its read, by
      // its merchant: both calls begin with the same statement, and which of them reads first is a race (a hold
      // of the report's read instead would wait for ever, the release coming only once the report is answered).
      db.allPrepared = async (sql, params) => {
        if (hold && JSON.stringify(params ?? null).includes(m2)) {
          hold = false;
          await held;
        }
        return read(sql, params);
      };
      return db;
    });
    try {
      const readers = new ReportService(store, { publicUrl: PUBLIC });
      let evidenceDone = false;
      const evidence = readers.evidence(m2, END).then((e) => {
        evidenceDone = true;
        return e;
      });
      const { report } = await readers.report(m1, END);
      expect(report.address).toBe(m1);
      expect(evidenceDone).toBe(false);
      release();
      expect((await evidence).address).toBe(m2);
    } finally {
      release();
      store.close();
    }
  });
});

describe("conditional requests", () => {
  it("answers 304 to a reader that holds the answer, by ETag or by date, and 200 once the head moved", async () => {
    for (const kind of KINDS) {
      const path = kind(m1);
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      const etag = res.headers.get("etag") as string;
      const lastModified = res.headers.get("last-modified") as string;
      expect(etag, path).toMatch(/^"[\w-]+"$/);
      expect(new Date(lastModified).getTime(), path).toBeGreaterThan(0);
      expect(res.headers.get("cache-control"), path).toBe("public, max-age=2");

      const byTag = await app.request(path, { headers: { "If-None-Match": `W/"other", ${etag}` } });
      expect(byTag.status, path).toBe(304);
      expect(await byTag.text()).toBe("");
      expect(byTag.headers.get("etag")).toBe(etag);
      const byDate = await app.request(path, { headers: { "If-Modified-Since": lastModified } });
      expect(byDate.status, path).toBe(304);
      // A validator that does not match wins over a date that would.
      const both = await app.request(path, {
        headers: { "If-None-Match": '"other"', "If-Modified-Since": lastModified },
      });
      expect(both.status, path).toBe(200);
    }
    const badge = `/badges/base/${m1}.svg`;
    const etag = (await app.request(badge)).headers.get("etag") as string;
    await commitHead();
    await service.latestBuilt();
    const moved = await app.request(badge, { headers: { "If-None-Match": etag } });
    expect(moved.status).toBe(200);
    expect(moved.headers.get("etag")).not.toBe(etag);
  });

  it("lets readers keep a window asked for by its end block longer than the latest", async () => {
    const res = await app.request(`/badges/base/${m1}.svg?end_block=${END}`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
  });

  it("keeps no refusal: a bad address is a 400 each time, a page of it an error page", async () => {
    for (let i = 0; i < 2; i++) {
      const res = await app.request("/v1/reports/base/0x12");
      expect(res.status).toBe(400);
      expect(res.headers.get("etag")).toBeNull();
    }
    const page = await app.request("/reports/base/0x12");
    expect(page.status).toBe(400);
    expect(await page.text()).toMatch(/not an address/);
  });
});
