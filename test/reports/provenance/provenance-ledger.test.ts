import { describe, expect, it } from "vitest";
import { ProvenanceLedger } from "../../../src/reports/provenance/provenance-ledger.ts";

const M = "merchant";
const M2 = "merchant-2";
let tx = 0;
const t = (from: string, to: string, amount: number, block = 1) => ({
  from,
  to,
  amount: BigInt(amount),
  block,
  tx: `0x${(++tx).toString(16)}`,
});
const pay = (payer: string, payTo: string, amount: number, block = 1) => ({
  payer,
  payTo,
  amount: BigInt(amount),
  block,
  tx: `0x${(++tx).toString(16)}`,
});

describe("the FIFO provenance ledger", () => {
  it("spends the oldest money first", () => {
    const l = new ProvenanceLedger(new Set([M]));
    l.transfer(t("savings", "p", 100));
    l.transfer(t(M, "p", 100));
    expect(l.payment(pay("p", M, 60)).own).toBe(0n);
    expect(l.payment(pay("p", M, 60)).own).toBe(20n);
    expect(l.payment(pay("p", M, 80)).own).toBe(80n);
  });

  it("carries the merchant's label through any number of wallets, and gives the way back", () => {
    const l = new ProvenanceLedger(new Set([M]));
    const chain = ["a", "b", "c", "d", "e", "f", "g"];
    l.transfer(t(M, "a", 1_000, 1));
    for (let i = 1; i < chain.length; i++)
      l.transfer(t(chain[i - 1] as string, chain[i] as string, 1_000, i + 1));
    const { own, way } = l.payment(pay("g", M, 500, 20));
    expect(own).toBe(500n);
    const hops: string[] = [];
    for (let h = way; h; h = h.prev) hops.unshift(`${h.from}>${h.to}`);
    expect(hops.slice(-7)).toEqual(["merchant>a", "a>b", "b>c", "c>d", "d>e", "e>f", "f>g"]);
  });

  it("treats a transfer back of what the wallet paid as a refund, the rest as the merchant's money", () => {
    const l = new ProvenanceLedger(new Set([M]));
    l.payment(pay("p", M, 30));
    l.transfer(t(M, "p", 50));
    // 30 refund (the customer's own), then 20 of the merchant's.
    expect(l.payment(pay("p", M, 30)).own).toBe(0n);
    expect(l.payment(pay("p", M, 20)).own).toBe(20n);
    // Paid 80, given back 30: a transfer of 60 is 50 of refund, then 10 of the merchant's money.
    l.transfer(t(M, "p", 60));
    expect(l.payment(pay("p", M, 50)).own).toBe(0n);
    expect(l.payment(pay("p", M, 10)).own).toBe(10n);
  });

  it("labels what a merchant sends with every merchant the money has been through", () => {
    const l = new ProvenanceLedger(new Set([M, M2]));
    l.transfer(t(M, M2, 100));
    l.transfer(t(M2, "p", 100));
    expect(l.payment(pay("p", M, 50)).own).toBe(50n);
    expect(l.payment(pay("p", M2, 50)).own).toBe(50n);
  });

  it("counts money sent beyond what was seen to arrive as of unknown origin", () => {
    const l = new ProvenanceLedger(new Set([M]));
    l.transfer(t(M, "p", 10));
    expect(l.payment(pay("p", M, 40)).own).toBe(10n);
  });

  it("trims to a stored balance from the front, and puts a shortfall in front", () => {
    const trimmed = new ProvenanceLedger(new Set([M]));
    trimmed.transfer(t(M, "p", 50));
    trimmed.transfer(t("savings", "p", 30));
    trimmed.balance("p", 30n);
    expect(trimmed.payment(pay("p", M, 30)).own).toBe(0n);

    const topped = new ProvenanceLedger(new Set([M]));
    topped.transfer(t(M, "p", 50));
    topped.balance("p", 1_000n);
    expect(topped.payment(pay("p", M, 950)).own).toBe(0n);
    expect(topped.payment(pay("p", M, 50)).own).toBe(50n);
  });

  it("does not follow opaque wallets: what they receive is lost, what they send is of unknown origin", () => {
    const l = new ProvenanceLedger(new Set([M]), new Set(["hub"]));
    l.transfer(t(M, "hub", 100));
    l.transfer(t("hub", "p", 100));
    expect(l.payment(pay("p", M, 100)).own).toBe(0n);
  });

  it("passes lots on with x402 payments: the payee's queue holds what it was paid with", () => {
    const l = new ProvenanceLedger(new Set([M, M2]));
    l.transfer(t(M, "p", 100));
    l.payment(pay("p", M2, 100));
    l.transfer(t(M2, "q", 100));
    expect(l.payment(pay("q", M, 100)).own).toBe(100n);
  });

  it("keeps the order across thousands of lots spent one by one", () => {
    const l = new ProvenanceLedger(new Set([M]));
    // Alternating lots of the merchant's money and the wallet's own, each from its own transfer.
    for (let i = 0; i < 5_000; i++) l.transfer(t(i % 2 === 0 ? M : "savings", "p", 10, i));
    let own = 0n;
    for (let i = 0; i < 5_000; i++) {
      const paid = l.payment(pay("p", M, 10, 10_000 + i)).own;
      expect(paid).toBe(i % 2 === 0 ? 10n : 0n);
      own += paid;
    }
    expect(own).toBe(25_000n);
    expect(l.payment(pay("p", M, 10, 20_000)).own).toBe(0n);
  });
});

describe("the haircut of a wallet that pays out more than the data saw it receive", () => {
  it("spreads the merchant's deposit over the payouts at the visible share, the unknown part first", () => {
    // The data saw $300 arrive ($100 of it the merchant's) and $3,000 leave: each payout is 10% visible.
    const l = new ProvenanceLedger(new Set([M]), new Set(), new Map([["cex", { seen: 300n, paid: 3_000n }]]));
    l.transfer(t("depositor", "cex", 200, 1));
    l.transfer(t(M, "cex", 100, 2));
    for (let i = 0; i < 30; i++) l.transfer(t("cex", `customer-${i}`, 100, 3 + i));
    // Customers 0-19 carried the depositor's $200 ($10 each), 20-29 the merchant's $100, $10 each, last.
    expect(l.payment(pay("customer-25", M, 90, 40)).own).toBe(0n);
    expect(l.payment(pay("customer-25", M, 10, 41)).own).toBe(10n);
    expect(l.payment(pay("customer-5", M, 100, 42)).own).toBe(0n);
  });

  it("stays FIFO where the data saw everything the wallet paid arrive", () => {
    const l = new ProvenanceLedger(new Set([M]), new Set(), new Map());
    l.transfer(t(M, "w", 100, 1));
    l.transfer(t("w", "p", 100, 2));
    expect(l.payment(pay("p", M, 100, 3)).own).toBe(100n);
  });
});

describe("money read back out of a hub that is not followed", () => {
  const H = "exchange";
  const returns = (shares: { payout: string; deposit: string; amount: number }[]) => ({
    deposits: new Map(
      shares.map((s) => [
        s.deposit,
        BigInt(shares.filter((x) => x.deposit === s.deposit).reduce((a, x) => a + x.amount, 0)),
      ]),
    ),
    payouts: new Map(
      shares.map((s) => [
        s.payout,
        shares
          .filter((x) => x.payout === s.payout)
          .map((x) => ({ deposit: x.deposit, amount: BigInt(x.amount), spanMs: 600_000, chance: 1e-12 })),
      ]),
    ),
  });

  it("holds back what comes back of a deposit and gives it to the payout, after the hub's own money, the way through both", () => {
    const l = new ProvenanceLedger(
      new Set([M]),
      new Set([H]),
      new Map(),
      returns([{ payout: "p", deposit: "d", amount: 15 }]),
    );
    l.transfer({ ...t(M, H, 20, 1), key: "d" });
    // A payout the read did not name is the hub's money, of unknown origin.
    l.transfer({ ...t(H, "other", 20, 2), key: "o" });
    l.transfer({ ...t(H, "w", 20, 3), key: "p" });
    expect(l.payment(pay("other", M, 20, 4)).own).toBe(0n);
    // The payout's $5 of the hub's own money first, then the deposit's $15.
    expect(l.payment(pay("w", M, 5, 5)).own).toBe(0n);
    const { own, way } = l.payment(pay("w", M, 15, 6));
    expect(own).toBe(15n);
    expect([way?.prev?.from, way?.prev?.to, way?.from, way?.to]).toEqual([M, H, H, "w"]);
    expect(way?.hubReturn).toEqual({ spanMs: 600_000, chance: 1e-12 });
    expect(way?.prev?.hubReturn).toBeUndefined();
  });

  it("gives no payout more of a deposit than it held: the deposit's money is spent once", () => {
    const l = new ProvenanceLedger(
      new Set([M]),
      new Set([H]),
      new Map(),
      returns([
        { payout: "p1", deposit: "d", amount: 8 },
        { payout: "p2", deposit: "d", amount: 8 },
      ]),
    );
    l.transfer({ ...t(M, H, 10, 1), key: "d" });
    l.transfer({ ...t(H, "w1", 8, 2), key: "p1" });
    l.transfer({ ...t(H, "w2", 8, 3), key: "p2" });
    expect(l.payment(pay("w1", M, 8, 4)).own).toBe(8n);
    expect(l.payment(pay("w2", M, 8, 5)).own).toBe(2n);
  });

  it("carries no label the deposit did not: a wallet of the merchant's cluster depositing its own money", () => {
    const l = new ProvenanceLedger(
      new Set([M]),
      new Set([H]),
      new Map(),
      returns([{ payout: "p", deposit: "d", amount: 10 }]),
    );
    l.transfer(t("savings", "own", 10, 1));
    l.transfer({ ...t("own", H, 10, 2), key: "d" });
    l.transfer({ ...t(H, "w", 10, 3), key: "p" });
    expect(l.payment(pay("w", M, 10, 4)).own).toBe(0n);
  });
});
