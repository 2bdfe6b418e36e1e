/**
 * CCTP messages (src/reports/provenance/bridges.ts): a mint is money from its burner, a burn money to its recipient
 * on the other chain, so the merchant's money is followed through a bridge and back; without the message, or from
 * a burner the merchant's money never reached, a mint is what it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridge, DAY, MINUTE, spend, USD } from "../../../bench/escapes/world.ts";
import { addr, START, transfer } from "../../helpers/data.ts";
import { listing } from "../../helpers/scenarios.ts";
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

/** The buyers' $1 each spent at M, with the given funding; what of it was flagged. */
async function flagged(funding: object[]): Promise<number> {
  const analytics = await shared.with([
    ...funding,
    ...buyers.flatMap((w, i) => spend(w, M, 20, 50_000, at + 2_000 + i, 10 * MINUTE)),
  ]);
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
});
