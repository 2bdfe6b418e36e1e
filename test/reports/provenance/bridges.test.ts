/**
 * CCTP messages (src/reports/provenance/bridges.ts): a mint is money from its burner, a burn money to its recipient
 * on the other chain, so the merchant's money is followed through a bridge and back, and through wallets of the
 * other chain between the burns (src/reports/provenance/bridge-relays.ts), never through a hub there; without the
 * message, or from a burner the merchant's money never reached, a mint is what it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridge, DAY, MINUTE, on, spend, USD } from "../../../bench/escapes/world.ts";
import { EvidenceDocumentSchema } from "../../../src/reports/serve/document-schemas.ts";
import { ReportService } from "../../../src/reports/serve/service.ts";
import { addr, END, START, transfer } from "../../helpers/data.ts";
import { listing, wallets } from "../../helpers/scenarios.ts";
import { dispose, SharedStore, windowFlags } from "../../helpers/window-flags.ts";

const M = addr("bridges-merchant");
const AWAY = addr("bridges-arbitrum-wallet");
const STRANGER = addr("bridges-stranger");
const buyers = [0, 1, 2].map((i) => addr(`bridges-buyer-${i}`));
const at = START + DAY;

let shared: SharedStore;
beforeAll(async () => {
  shared = await SharedStore.of([listing(M, "item", 0.05)]);
}, 60_000);
afterAll(() => shared?.remove());

/** The buyers' $1 each spent at M. */
const spent = buyers.flatMap((w, i) => spend(w, M, 20, 50_000, at + 2_000 + i, 10 * MINUTE));

/** The buyers' spending, with the given funding; what of it was flagged. */
async function flagged(funding: object[]): Promise<number> {
  const analytics = await shared.with([...funding, ...spent]);
  try {
    const f = (await windowFlags(analytics))({ wallets: buyers, merchant: M });
    expect(f.paid).toBe(3 * USD);
    return f.flagged / f.paid;
  } finally {
    dispose(analytics);
  }
}

describe("money through a CCTP bridge", () => {
  it("follows the merchant's burn to a wallet on Arbitrum and that wallet's burns back to the buyers", async () => {
    const out = bridge({ from: "base", to: "arbitrum" }, M, AWAY, 3 * USD, at);
    const back = buyers.flatMap((w, i) =>
      bridge({ from: "arbitrum", to: "base" }, AWAY, w, USD, at + 100 + i),
    );
    expect(await flagged([...out, ...back])).toBe(1);
    // Base's side alone names both wallets: the store need not hold Arbitrum's.
    const baseOnly = (rs: object[]) => rs.filter((r) => (r as { chain: string }).chain === "base");
    expect(await flagged([...baseOnly(out), ...baseOnly(back)])).toBe(1);
  }, 60_000);

  it("reads a mint without its message, or from a burner the merchant's money never reached, as before", async () => {
    const out = bridge({ from: "base", to: "arbitrum" }, M, AWAY, 3 * USD, at);
    const plain = buyers.map((w, i) =>
      transfer("0x0000000000000000000000000000000000000000", w, USD, at + 700 + i),
    );
    expect(await flagged([...out, ...plain])).toBe(0);
    const stranger = buyers.flatMap((w, i) =>
      bridge({ from: "arbitrum", to: "base" }, STRANGER, w, USD, at + 100 + i),
    );
    expect(await flagged([...out, ...stranger])).toBe(0);
  }, 60_000);

  it("follows the merchant's money through wallets on Arbitrum between its burn and the burns back", async () => {
    const [h1, h2] = wallets("bridges-arbitrum-hop", 2) as [string, string];
    const out = bridge({ from: "base", to: "arbitrum" }, M, AWAY, 3 * USD, at, 30);
    const hops = [
      on("arbitrum", transfer(AWAY, h1, 3 * USD, at + 40)),
      on("arbitrum", transfer(h1, h2, 3 * USD, at + 50)),
    ];
    const back = buyers.flatMap((w, i) =>
      bridge({ from: "arbitrum", to: "base" }, h2, w, USD, at + 60 + i, 30),
    );
    expect(await flagged([...out, ...hops, ...back])).toBe(1);
    // Without Arbitrum's transfers between them, the store cannot tell.
    expect(await flagged([...out, ...back])).toBe(0);
    // The way shows every hop, Arbitrum's by that chain's transaction.
    const analytics = await shared.with([...out, ...hops, ...back, ...spent]);
    try {
      const evidence = await new ReportService(analytics, { publicUrl: "https://reports.test" }).evidence(
        M,
        END,
      );
      expect(EvidenceDocumentSchema.safeParse(evidence).error).toBeUndefined();
      const w = evidence.flags.find((f) => f.kind === "merchant_funded")?.wallets[0];
      const there = (a: string) => `${a}@arbitrum`;
      expect(w?.funding_path?.map((h) => [h.from, h.to])).toEqual([
        [M, there(AWAY)],
        [there(AWAY), there(h1)],
        [there(h1), there(h2)],
        [there(h2), w?.wallet],
      ]);
      const hop = hops[0] as { tx_hash: string; block_time: number };
      expect(w?.funding_path?.[1]?.tx_hash).toBe(hop.tx_hash);
      expect(w?.funding_path?.[1]?.time).toBe(
        new Date(hop.block_time * 1000).toISOString().replace(".000", ""),
      );
    } finally {
      dispose(analytics);
    }
  }, 60_000);

  it("does not follow it through a wallet fifty parties feed there, weighed by money, as on Base", async () => {
    const hub = addr("bridges-arbitrum-hub");
    const out = bridge({ from: "base", to: "arbitrum" }, M, AWAY, 3 * USD, at, 30);
    const back = buyers.flatMap((w, i) =>
      bridge({ from: "arbitrum", to: "base" }, hub, w, USD, at + 200 + i, 30),
    );
    // The merchant's $3 first in the wallet, the parties' after it: first in first out, the payouts are its.
    const fed = (each: number) =>
      wallets("bridges-arbitrum-party", 50).map((p, i) =>
        on("arbitrum", transfer(p, hub, each, at + 100 + i)),
      );
    const deposit = on("arbitrum", transfer(AWAY, hub, 3 * USD, at + 40));
    expect(await flagged([...out, deposit, ...fed(USD), ...back])).toBe(0);
    // A cent from each is no hub: followed, the payouts are the merchant's money.
    expect(await flagged([...out, deposit, ...fed(10_000), ...back])).toBe(1);
  }, 60_000);
});
