import { describe, expect, it } from "vitest";
import { checkReports } from "../../src/demo/check.ts";
import type { TruthRecord } from "../../src/demo/truth.ts";
import type { Report } from "../../src/reports/index.ts";

const A = `0x${"a".repeat(40)}`;
const B = `0x${"b".repeat(40)}`;
const window = { start_block: 100, end_block: 1_000 };
const rec = (
  pay_to: string,
  amount: number,
  behaviour: TruthRecord["behaviour"],
  block = 500,
): TruthRecord => ({
  tx_hash: `0x${block}`,
  block_number: block,
  payer: `0x${"c".repeat(40)}`,
  pay_to,
  amount: String(amount),
  behaviour,
  merchant: "m",
  endpoint: "GET /x",
});
const report = (address: string, usd: number, real_usd: number) =>
  ({ address, name: `${address.slice(2, 6)}.localhost`, usd, real_usd, tx: 1 }) as unknown as Report;

describe("checkReports", () => {
  it("passes real revenue within 5% of genuine demand and a reported total equal to what was paid", () => {
    const truth = [
      rec(A, 10_000_000, "agent"),
      rec(A, 2_000_000, "self_payment"),
      rec(A, 5_000_000, "agent", 50),
    ];
    const [row] = checkReports(truth, [report(A, 12, 9.7)], window);
    expect(row).toMatchObject({
      truth_usd: 12,
      genuine_usd: 10,
      real_usd: 9.7,
      error: -0.03,
      genuine_lost: 0.03,
      ok: true,
    });
  });

  it("fails a merchant whose screens took genuine demand or let abuse through", () => {
    const truth = [rec(A, 10_000_000, "agent"), rec(B, 10_000_000, "agent"), rec(B, 5_000_000, "tiny_farm")];
    const rows = checkReports(truth, [report(A, 10, 9.4), report(B, 15, 15)], window);
    expect(rows.find((r) => r.address === A)).toMatchObject({
      ok: false,
      reason: "screens took away genuine demand",
    });
    expect(rows.find((r) => r.address === B)).toMatchObject({
      ok: false,
      reason: "screens let simulated abuse through",
    });
  });

  it("fails a merchant whose reported total misses a payment (the indexer lost it) or has no report", () => {
    const truth = [rec(A, 10_000_000, "agent"), rec(A, 1_000_000, "agent"), rec(B, 1_000_000, "agent")];
    const rows = checkReports(truth, [report(A, 10, 10)], window);
    expect(rows.find((r) => r.address === A)?.reason).toMatch(
      /reported \$10.00 but the simulator paid \$11.00/,
    );
    expect(rows.find((r) => r.address === B)?.reason).toMatch(/no report/);
  });

  it("treats half a cent as rounding, and a merchant with only abuse as passing at $0 real", () => {
    const truth = [rec(A, 30_000, "agent"), rec(B, 20_000, "self_payment")];
    const rows = checkReports(truth, [report(A, 0.03, 0.03), report(B, 0.02, 0)], window);
    expect(rows.every((r) => r.ok)).toBe(true);
    expect(rows.find((r) => r.address === B)?.error).toBeNull();
  });
});
