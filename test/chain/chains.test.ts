/**
 * Chains as data (issue 67 item 1): each record agrees with `@x402/evm`'s own tables, Base's record gives the
 * constants the project always had, and a fourth EVM chain is a record and two lists, resolved everywhere the
 * registry is read.
 */
import {
  BATCH_SETTLEMENT_ADDRESS,
  DEFAULT_ASSETS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS as SDK_PERMIT2,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyAddress,
} from "@x402/evm";
import { describe, expect, it } from "vitest";
import * as base from "../../src/chain/base.ts";
import {
  BASE_RECORD,
  CHAIN_RECORDS,
  type ChainRecord,
  chainByCaip2,
  chainBySlug,
  chainRegistry,
  chains,
  X402_CONTRACTS,
} from "../../src/chain/chains.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { hubsOf, KNOWN_HUBS } from "../../src/chain/hubs.ts";
import { USDC_EIP712_NAME, USDC_EIP712_VERSION } from "../../src/chain/usdc.ts";

describe("the chain records", () => {
  it("are Base, Polygon PoS and Arbitrum One, by slug and by CAIP-2", () => {
    expect(chains.list.map((c) => [c.slug, c.caip2])).toEqual([
      ["base", "eip155:8453"],
      ["polygon", "eip155:137"],
      ["arbitrum", "eip155:42161"],
    ]);
    for (const c of CHAIN_RECORDS) {
      expect(chainBySlug(c.slug)).toBe(c);
      expect(chainByCaip2(c.caip2)).toBe(c);
    }
    expect(() => chainBySlug("solana")).toThrow('unknown chain "solana" (known: base, polygon, arbitrum)');
    expect(() => chainByCaip2("eip155:1")).toThrow('unknown network "eip155:1"');
  });

  it.each(CHAIN_RECORDS.map((c) => [c.slug, c] as const))(
    "%s: USDC and its EIP-712 domain are @x402/evm's",
    (_, c) => {
      const sdk = DEFAULT_ASSETS[c.caip2]?.[0];
      expect(sdk).toBeDefined();
      expect(c.usdc).toEqual({
        address: sdk?.asset.toLowerCase(),
        name: sdk?.name,
        version: sdk?.version,
        decimals: sdk?.decimals,
      });
    },
  );

  it("name native USDC on Polygon, not the bridged USDC.e", () => {
    expect(chainBySlug("polygon").usdc.address).toBe("0x3c499c542cef5e3811e1192ce70d8cc03d5c3359");
    expect(chainBySlug("arbitrum").usdc.address).toBe("0xaf88d065e77c8cc2239327c5edb3a432268e5831");
  });

  it("carry x402's contracts at the addresses @x402/evm settles through", () => {
    expect(X402_CONTRACTS.permit2).toBe(SDK_PERMIT2);
    expect(X402_CONTRACTS.exactProxy).toBe(x402ExactPermit2ProxyAddress);
    expect(X402_CONTRACTS.uptoProxy).toBe(x402UptoPermit2ProxyAddress);
    expect(X402_CONTRACTS.batchSettlement).toBe(BATCH_SETTLEMENT_ADDRESS);
    expect(X402_CONTRACTS.erc3009DepositCollector).toBe(ERC3009_DEPOSIT_COLLECTOR_ADDRESS);
    for (const c of CHAIN_RECORDS) expect(c.contracts).toEqual(X402_CONTRACTS);
  });

  it("each have a facilitator list and a hub list of their own chain, every entry sourced", () => {
    for (const c of CHAIN_RECORDS) {
      const file = c.facilitators as { chain: string; chain_id: number; about: string };
      expect([file.chain, file.chain_id]).toEqual([c.slug, c.chainId]);
      expect(file.about).not.toBe("");
      FacilitatorRegistry.forChain(c);
      for (const hub of hubsOf(c)) expect(hub.source).toMatch(/^https:\/\//);
    }
    const polygon = chainBySlug("polygon").facilitators as {
      facilitators: { id: string; source?: string }[];
    };
    expect(polygon.facilitators.map((f) => f.id)).toEqual(["corbits", "thirdweb", "x402rs"]);
    for (const f of polygon.facilitators)
      expect(f.source).toMatch(/^https:\/\/github\.com\/Merit-Systems\/x402scan\//);
    expect(FacilitatorRegistry.forChain(chainBySlug("polygon")).addresses()).toHaveLength(3);
    expect(FacilitatorRegistry.forChain(chainBySlug("arbitrum")).addresses()).toEqual([]);
  });

  it("refuse a facilitator list given for another chain", () => {
    expect(() => FacilitatorRegistry.parse(BASE_RECORD.facilitators, chainBySlug("polygon"))).toThrow(
      "a facilitator registry of base (chain 8453) given for polygon (chain 137)",
    );
  });
});

describe("Base's record", () => {
  it("gives the constants Base always had", () => {
    expect(base.BASE_CHAIN).toBe("base");
    expect(base.BASE_CHAIN_ID).toBe(8453);
    expect(base.BASE_CAIP2).toBe("eip155:8453");
    expect(base.BASE_USDC).toBe("0x833589fcd6edb6e08f4c7c32d4f71b54bda02913");
    expect([base.USDC_DECIMALS, base.USDC_UNIT]).toEqual([6, 1_000_000n]);
    expect([USDC_EIP712_NAME, USDC_EIP712_VERSION]).toEqual(["USD Coin", "2"]);
    expect([base.BLOCK_SECONDS, base.BASE_GENESIS_TIME, base.WEEK_BLOCKS]).toEqual([
      2, 1_686_789_347, 302_400,
    ]);
    expect(base.PERMIT2_ADDRESS).toBe("0x000000000022D473030F116dDEE9F6B43aC78BA3");
    expect(base.X402_EXACT_PROXY_ADDRESS).toBe("0x402085c248EeA27D92E8b30b2C58ed07f9E20001");
    expect(base.X402_UPTO_PROXY_ADDRESS).toBe("0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002");
    expect(base.X402_BATCH_SETTLEMENT_ADDRESS).toBe("0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003");
    expect(base.ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe("0x4020806089470a89826cB9fB1f4059150b550004");
    expect(base.PERMIT2_DEPOSIT_COLLECTOR_ADDRESS).toBe("0x4020425FAf3B746C082C2f942b4E5159887B0005");
    expect(base.MULTICALL3_ADDRESS).toBe("0xcA11bde05977b3631167028862bE2a173976CA11");
    expect(KNOWN_HUBS).toEqual(hubsOf(BASE_RECORD));
    expect(FacilitatorRegistry.base().list()).toEqual(FacilitatorRegistry.forChain(BASE_RECORD).list());
  });
});

describe("a fourth EVM chain", () => {
  const signer = "0x1111111111111111111111111111111111111111";
  const hub = "0x2222222222222222222222222222222222222222";
  // A record and two lists, in the formats of Base's: nothing else.
  const celo: ChainRecord = {
    slug: "celo",
    name: "Celo",
    chainId: 42220,
    caip2: "eip155:42220",
    usdc: { address: "0xceba9300f2b948710d2653dd7b07f33a8b32118c", name: "USDC", version: "2", decimals: 6 },
    coin: "CELO",
    contracts: X402_CONTRACTS,
    facilitators: {
      chain: "celo",
      chain_id: 42220,
      about: "test signers",
      facilitators: [
        {
          id: "example",
          name: "Example",
          urls: [],
          source: "https://example.com/signers",
          addresses: [{ address: signer, since: "2026-01-01" }],
        },
      ],
    },
    hubs: {
      description: "test hubs",
      entries: [
        { address: hub, label: "Example exchange", kind: "exchange", source: "https://example.com/hub" },
      ],
    },
    clock: { kind: "stamped", aboutSeconds: 1 },
  };

  it("is resolved by slug and CAIP-2, and its signers and hubs are read, with no code", () => {
    const registry = chainRegistry([...CHAIN_RECORDS, celo]);
    expect(registry.list.map((c) => c.slug)).toEqual(["base", "polygon", "arbitrum", "celo"]);
    const found = registry.chainBySlug("celo");
    expect(registry.chainByCaip2("eip155:42220")).toBe(found);
    const signers = FacilitatorRegistry.forChain(found);
    expect(signers.judge(signer, Date.parse("2026-02-01T00:00:00Z") / 1000)).toMatchObject({ known: true });
    expect(signers.judge(signer, Date.parse("2025-12-01T00:00:00Z") / 1000)).toMatchObject({
      reason: "before_since",
    });
    expect(hubsOf(found).map((h) => h.address)).toEqual([hub]);
    // Base's answers do not move for it.
    expect(registry.chainBySlug("base")).toBe(BASE_RECORD);
  });

  it("is refused when malformed or given twice", () => {
    expect(() => chainRegistry([...CHAIN_RECORDS, { ...celo, caip2: "eip155:1" }])).toThrow(
      'chain record "celo": CAIP-2 "eip155:1" is not eip155:42220',
    );
    expect(() => chainRegistry([...CHAIN_RECORDS, { ...celo, slug: "base" }])).toThrow(
      'chain slug "base" given twice',
    );
    expect(() =>
      chainRegistry([
        ...CHAIN_RECORDS,
        { ...celo, usdc: { ...celo.usdc, address: "0xCEBA9300f2b948710d2653dd7B07f33A8B32118C" } },
      ]),
    ).toThrow("is not a lower-case address");
  });
});
