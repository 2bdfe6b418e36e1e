/**
 * Solana as data (issue 86 item 1): its record agrees with `@x402/svm`'s constants, it sits in the store's
 * registry beside the EVM chains but not among the chains that settle (all EVM), its fee payers and hubs are read
 * through the same functions Base's go through, and its base58 keys keep their case everywhere.
 */
import { SOLANA_MAINNET_CAIP2, USDC_MAINNET_ADDRESS } from "@x402/svm";
import { describe, expect, it } from "vitest";
import {
  BASE_RECORD,
  chainRegistry,
  chains,
  SOLANA_RECORD,
  type SolanaRecord,
  storeAddress,
  storeChains,
} from "../../src/chain/chains.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { hubsOf } from "../../src/chain/hubs.ts";

describe("Solana's record", () => {
  it("is @x402/svm's network and USDC mint, with a stamped clock", () => {
    expect(SOLANA_RECORD.caip2).toBe(SOLANA_MAINNET_CAIP2);
    expect(SOLANA_RECORD.usdc).toEqual({ address: USDC_MAINNET_ADDRESS, decimals: 6 });
    expect(SOLANA_RECORD.clock).toEqual({ kind: "stamped", aboutSeconds: 0.4 });
  });

  it("is in the store's registry, by slug and CAIP-2, and not among the chains that settle", () => {
    expect(storeChains.chainBySlug("solana")).toBe(SOLANA_RECORD);
    expect(storeChains.chainByCaip2(SOLANA_MAINNET_CAIP2)).toBe(SOLANA_RECORD);
    expect(storeChains.chainBySlug("base")).toBe(BASE_RECORD);
    expect(storeChains.list.map((c) => c.slug)).toEqual(["base", "polygon", "arbitrum", "solana"]);
    expect(chains.bySlug.has("solana")).toBe(false);
  });

  it("is refused when malformed", () => {
    const bad = (patch: Partial<SolanaRecord>) => () =>
      chainRegistry<SolanaRecord>([{ ...SOLANA_RECORD, ...patch }]);
    expect(bad({ caip2: "solana:short" })).toThrow('CAIP-2 "solana:short" is not solana:<genesis hash>');
    expect(bad({ usdc: { address: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", decimals: 6 } })).toThrow(
      "is not a base58 public key",
    );
    expect(bad({ clock: { kind: "stamped", aboutSeconds: 0 } })).toThrow("aboutSeconds above 0");
  });

  it("reads its fee payers case-sensitively, each facilitator with its source", () => {
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD);
    const payai = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
    expect(registry.signer(payai)?.name).toBe("PayAI");
    expect(registry.signer(payai.toLowerCase())).toBeUndefined();
    expect(registry.judge(payai, Date.parse("2025-07-02") / 1000).known).toBe(true);
    expect(registry.judge(payai, Date.parse("2025-06-30") / 1000)).toEqual({
      known: false,
      reason: "before_since",
    });
    expect(registry.list().map((s) => s.facilitator)).toEqual(
      expect.arrayContaining(["coinbase", "dexter", "corbits"]),
    );
    for (const f of (SOLANA_RECORD.facilitators as { facilitators: { source: string }[] }).facilitators)
      expect(f.source).toMatch(/^https:\/\/github\.com\/Merit-Systems\/x402scan\/blob\/[0-9a-f]{40}\//);
    const given = registry.withSigners(["DEXVS3su4dZQWTvvPnLDJLRK1CeeKG6K3QqdzthgAkNX"]);
    expect(given.signer("DEXVS3su4dZQWTvvPnLDJLRK1CeeKG6K3QqdzthgAkNX")?.facilitator).toBe("operator");
    expect(() => registry.withSigners(["0x70997970c51812dc3a010c7d01b50e0d17dc79c8"])).toThrow(
      "not an address",
    );
    // A Solana list given for Base is refused, as another chain's list is.
    expect(() => FacilitatorRegistry.parse(SOLANA_RECORD.facilitators, BASE_RECORD)).toThrow(
      "a facilitator registry of solana",
    );
  });

  it("has labelled hubs with sources, base58 as written", () => {
    const hubs = hubsOf(SOLANA_RECORD);
    expect(hubs.length).toBeGreaterThan(0);
    for (const h of hubs) {
      expect(storeAddress(SOLANA_RECORD, h.address)).toBe(h.address);
      expect(h.source).toMatch(/^https:\/\//);
    }
  });

  it("keeps a base58 address as written and an EVM one lower-cased, each only on its chain", () => {
    const key = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    expect(storeAddress(SOLANA_RECORD, key)).toBe(key);
    expect(storeAddress(SOLANA_RECORD, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")).toBeUndefined();
    expect(storeAddress(BASE_RECORD, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")).toBe(
      "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
    );
    expect(storeAddress(BASE_RECORD, key)).toBeUndefined();
    // 0, O, I and l are not base58.
    expect(storeAddress(SOLANA_RECORD, "0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toBeUndefined();
  });
});
