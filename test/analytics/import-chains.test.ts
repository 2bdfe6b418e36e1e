import { afterEach, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import { POLYGON_RECORD } from "../../src/chain/chains.ts";
import { addr, ndjsonFile, payment, tempAnalytics, transfer } from "../helpers/data.ts";

/**
 * Lines of a chain whose blocks say their own time (Polygon PoS): stored under it, each at its own time, held to
 * one time per block and to times that never go back, one chain a file, and beside another chain's in a store.
 */
let analytics: Analytics;
afterEach(() => analytics?.close());

const T0 = 1_790_000_000;
/** Polygon's blocks: about 2 s apart, not exactly, and sometimes two sharing a second. */
const times: Record<number, number> = { 100: T0, 101: T0 + 2, 102: T0 + 5, 103: T0 + 5, 104: T0 + 7 };

const onPolygon = <T extends { block_number: number }>(line: T) => ({
  ...line,
  chain: "polygon",
  block_time: times[line.block_number],
});
const polygonPayment = (block: number, amount = 1_000) =>
  onPolygon(payment({ payer: addr("buyer"), payTo: addr("shop"), amount, block }));
const polygonTransfer = (block: number) => onPolygon(transfer(addr("funder"), addr("buyer"), 5_000, block));
const polygonCheckpoint = (block: number) => ({
  type: "checkpoint",
  chain: "polygon",
  block_number: block,
  block_time: times[block],
});

async function refusal(lines: object[], store?: Analytics): Promise<string> {
  analytics = store ?? (await tempAnalytics());
  const error = await importNdjson(analytics, ndjsonFile(lines)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  const { line, reason } = error as ImportError;
  return `line ${line}: ${reason}`;
}

describe("import of a stamped chain's lines", () => {
  it("stores them under their chain at their own times, asset Polygon's USDC, whichever way the import takes", async () => {
    // A clean file takes the bulk way; the same lines with one repeated take the exact way.
    for (const repeat of [false, true]) {
      analytics = await tempAnalytics();
      const lines = [polygonTransfer(100), polygonPayment(101), polygonPayment(102), polygonPayment(103)];
      const counts = await importNdjson(
        analytics,
        ndjsonFile([...lines, ...(repeat ? [lines[1] as object] : []), polygonCheckpoint(104)]),
      );
      expect(counts.payment.added).toBe(3);
      const rows = await analytics.all<{ chain: string; block: bigint; t: bigint; asset: string }>(
        `SELECT chain, block_number AS block, epoch(block_time)::BIGINT AS t, asset FROM payments ORDER BY block`,
      );
      expect(rows.map((r) => [r.chain, Number(r.block), Number(r.t), r.asset])).toEqual(
        [101, 102, 103].map((b) => ["polygon", b, times[b], POLYGON_RECORD.usdc.address]),
      );
      const chains = await analytics.all<{ chain: string }>(
        "SELECT DISTINCT chain FROM (SELECT chain FROM transfers UNION ALL SELECT chain FROM checkpoints)",
      );
      expect(chains).toEqual([{ chain: "polygon" }]);
      analytics.close();
    }
  });

  it("refuses a block with two times, and a time before a lower block's, naming the line", async () => {
    const twice = { ...polygonPayment(102), block_time: T0 + 6 };
    expect(await refusal([polygonPayment(101), polygonPayment(102), twice])).toBe(
      `line 3: block 102 has time ${T0 + 6}, but ${T0 + 5} before: on Polygon PoS a block has one time`,
    );
    const back = { ...polygonPayment(104), block_time: T0 + 1 };
    expect(await refusal([polygonPayment(101), polygonPayment(102), back])).toBe(
      `line 3: block 104 has time ${T0 + 1}, before a lower block's ${T0 + 5}: on Polygon PoS times never go back`,
    );
  });

  it("holds a file to one chain, and keeps each chain's rows apart in one store", async () => {
    const base = payment({ payer: addr("buyer"), payTo: addr("shop"), amount: 1_000 });
    expect(await refusal([polygonPayment(101), base])).toBe(
      'line 2: "chain" is "base", but line 1 is of polygon: one chain a file (split it by chain, and import each)',
    );
    analytics.close();
    // Polygon's times follow no rule of Base's: Base's lines are held to Base's stored rows only, and a block
    // number of one chain says nothing of the other's.
    analytics = await tempAnalytics();
    await importNdjson(
      analytics,
      ndjsonFile([polygonPayment(101), polygonPayment(102), polygonCheckpoint(104)]),
    );
    await importNdjson(analytics, ndjsonFile([base, { ...base, tx_hash: `0x${"ab".repeat(32)}` }]));
    await importNdjson(analytics, ndjsonFile([polygonPayment(103)]));
    const rows = await analytics.all<{ chain: string; n: bigint; asset: string }>(
      "SELECT chain, count(*) AS n, any_value(asset) AS asset FROM payments GROUP BY chain ORDER BY chain",
    );
    expect(rows).toEqual([
      { chain: "base", n: 2n, asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913" },
      { chain: "polygon", n: 3n, asset: POLYGON_RECORD.usdc.address },
    ]);
  });
});
