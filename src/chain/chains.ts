/**
 * The chains x402 settles on, as data: one record each (docs/chains.md gives every fact's source). A record
 * names its chain (slug and CAIP-2 id), its USDC (address and EIP-712 domain), x402's contracts there, its
 * facilitator signer registry and labelled hubs (two lists, each entry with its public source) and its clock.
 * Adding another EVM chain is one more record here and its two lists beside it; everything that reads a chain
 * reads it from `chains` (by slug or by CAIP-2), and Base's constants (`base.ts`) are read from Base's record.
 *
 * The USDC addresses and domains are `@x402/evm`'s `DEFAULT_ASSETS` (2.27) and a test holds them to it; they are
 * written here rather than imported because this library is loaded by every command (the indexer, the import,
 * the reports), and none of those otherwise loads the SDK.
 */
import arbitrumFacilitators from "./arbitrum-facilitators.json" with { type: "json" };
import arbitrumHubs from "./arbitrum-hubs.json" with { type: "json" };
import baseFacilitators from "./base-facilitators.json" with { type: "json" };
import baseHubs from "./base-hubs.json" with { type: "json" };
import polygonFacilitators from "./polygon-facilitators.json" with { type: "json" };
import polygonHubs from "./polygon-hubs.json" with { type: "json" };
import {
  ASSOCIATED_TOKEN_PROGRAM,
  PAYMENT_CHANNELS_PROGRAM,
  SOLANA_ADDRESS,
  SOLANA_NETWORK,
  SOLANA_SLUG,
  SOLANA_USDC_DECIMALS,
  SOLANA_USDC_MINT,
  SPL_TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
} from "./solana/constants.ts";
import solanaFacilitators from "./solana-facilitators.json" with { type: "json" };
import solanaHubs from "./solana-hubs.json" with { type: "json" };

export type Address = `0x${string}`;

/** USDC on a chain: the address (lower-case, as the analytics database keeps every address) and its EIP-712 domain. */
export interface ChainUsdc {
  address: Address;
  /** EIP-712 domain name and version, as x402 buyers sign them (`extra.name`, `extra.version`). */
  name: string;
  version: string;
  decimals: number;
}

/**
 * x402's EVM contracts, and the two it relies on. x402's are deployed through Arachnid's CREATE2 deployer, so
 * each has one address on every EVM chain (x402's `contracts/evm/README.md`); Permit2 and Multicall3 too.
 */
export interface X402Contracts {
  permit2: Address;
  exactProxy: Address;
  uptoProxy: Address;
  batchSettlement: Address;
  erc3009DepositCollector: Address;
  permit2DepositCollector: Address;
  multicall3: Address;
}

/**
 * x402's batch-settlement escrow and its deposit collectors, lower-case: USDC moving into or out of them is a
 * channel's money, not a wallet's. A deposit goes from the payer into the escrow, straight (Permit2's collector)
 * or through the ERC-3009 collector, which passes it on; the escrow pays the receivers what they claimed
 * (`settle`) and the payers what comes back (refunds, timed withdrawals). The indexer stores none of those
 * transfers (the escrow's events say more) and the import reads them as the channels' moves.
 */
export function escrowWallets(contracts: X402Contracts): { escrow: string; collectors: readonly string[] } {
  return {
    escrow: contracts.batchSettlement.toLowerCase(),
    collectors: [contracts.erc3009DepositCollector, contracts.permit2DepositCollector].map((a) =>
      a.toLowerCase(),
    ),
  };
}

/**
 * How a chain's blocks keep time. `fixed`: a block every `blockSeconds` exactly, so a block's time follows from
 * its number (Base); `upgrade`, when set, is one from whose activation time on a block comes every
 * `intervalMs` instead (Base's Denim: 200 ms), the activation block being the first of the old cadence at or
 * after that time. `stamped`: only each block's own timestamp says when it was (`aboutSeconds` is the typical
 * gap, for estimates only: Polygon PoS about 2 s, Arbitrum One about 0.25 s with shared timestamps).
 */
export type ChainClock =
  | {
      kind: "fixed";
      blockSeconds: number;
      genesisTime: number;
      upgrade?: { name: string; activationTime: number; intervalMs: number };
    }
  | { kind: "stamped"; aboutSeconds: number };

export interface ChainRecord {
  /** Set on none of the EVM records; what tells them from Solana's (`kind: "solana"`) in an `AnyChainRecord`. */
  kind?: "evm";
  slug: string;
  /** The chain's name in sentences ("Base", "Polygon PoS"). */
  name: string;
  chainId: number;
  /** CAIP-2: `eip155:<chainId>`. */
  caip2: `eip155:${number}`;
  usdc: ChainUsdc;
  /** The coin gas is paid in, 18 decimals: ETH on Base and Arbitrum, POL on Polygon PoS. */
  coin: string;
  contracts: X402Contracts;
  /** The facilitator signer registry, in `base-facilitators.json`'s format (its `chain` and `chain_id` this chain's). */
  facilitators: unknown;
  /** The labelled exchange and bridge wallets, in `base-hubs.json`'s format. */
  hubs: unknown;
  clock: ChainClock;
  /**
   * Circle's CCTP domain of the chain (developers.circle.com, "Supported chains and domains"): a bridge message
   * names its source and destination by domain, and the screens follow a burn to its mint on the chain of that
   * domain (src/reports/provenance/bridges.ts). Absent where CCTP does not run.
   */
  cctpDomain?: number;
  /**
   * Circle's CCTP contracts on the chain, by version: the indexer reads a burn (TokenMessenger's
   * `DepositForBurn` after the MessageTransmitter's `MessageSent`) and a mint (`MintAndWithdraw` before
   * `MessageReceived`) from them (src/indexer/cctp-logs.ts). Absent where CCTP does not run; a devnet's
   * stand-ins are named by a record of its own (`{ ...BASE_RECORD, cctp: { v2: ... } }`).
   */
  cctp?: CctpDeployment;
}

/** One version of Circle's CCTP on a chain: the contract a burn starts at, and the one that carries its message. */
export interface CctpContracts {
  tokenMessenger: Address;
  messageTransmitter: Address;
}

/** CCTP v1 (a message nonce of 8 bytes, counted by the source chain) and v2 (32 bytes, given by Circle's attesters). */
export interface CctpDeployment {
  v1?: CctpContracts;
  v2?: CctpContracts;
}

/**
 * CCTP v2's contracts, one address on every EVM chain (CREATE2): developers.circle.com/cctp/evm-smart-contracts,
 * "Mainnet contract addresses" (TokenMessengerV2, MessageTransmitterV2).
 */
export const CCTP_V2: CctpContracts = {
  tokenMessenger: "0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d",
  messageTransmitter: "0x81D40F21F12A8F0E3252Bccb954D722d4c464B64",
};

/** The same on every EVM chain (CREATE2); the sources are in docs/chains.md. */
export const X402_CONTRACTS = {
  permit2: "0x000000000022D473030F116dDEE9F6B43aC78BA3",
  exactProxy: "0x402085c248EeA27D92E8b30b2C58ed07f9E20001",
  uptoProxy: "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002",
  batchSettlement: "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003",
  erc3009DepositCollector: "0x4020806089470a89826cB9fB1f4059150b550004",
  permit2DepositCollector: "0x4020425FAf3B746C082C2f942b4E5159887B0005",
  multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
} as const satisfies X402Contracts;

/** Base mainnet: the chain every report is about today. */
export const BASE_RECORD = {
  slug: "base",
  name: "Base",
  chainId: 8453,
  caip2: "eip155:8453",
  usdc: {
    address: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
    name: "USD Coin",
    version: "2",
    decimals: 6,
  },
  coin: "ETH",
  contracts: X402_CONTRACTS,
  facilitators: baseFacilitators,
  hubs: baseHubs,
  cctpDomain: 6,
  // CCTP v1's: developers.circle.com/cctp/v1/evm-smart-contracts, "Mainnet contract addresses".
  cctp: {
    v1: {
      tokenMessenger: "0x1682Ae6375C4E4A97e4B583BC394c861A46D8962",
      messageTransmitter: "0xAD09780d193884d503182aD4588450C416D6F9D4",
    },
    v2: CCTP_V2,
  },
  clock: {
    kind: "fixed",
    blockSeconds: 2,
    genesisTime: 1_686_789_347,
    // Denim, on Base Mainnet 2026-11-05 18:00 UTC (docs.base.org's Denim overview): 200 ms blocks from then on.
    upgrade: { name: "Denim", activationTime: 1_793_901_600, intervalMs: 200 },
  },
} as const satisfies ChainRecord;

export const POLYGON_RECORD: ChainRecord = {
  slug: "polygon",
  name: "Polygon PoS",
  chainId: 137,
  caip2: "eip155:137",
  // Circle's native USDC, not the bridged USDC.e (0x2791bca1f2de4661ed88a30c99a7a9449aa84174).
  usdc: {
    address: "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
    name: "USD Coin",
    version: "2",
    decimals: 6,
  },
  coin: "POL",
  contracts: X402_CONTRACTS,
  facilitators: polygonFacilitators,
  hubs: polygonHubs,
  cctpDomain: 7,
  cctp: {
    v1: {
      tokenMessenger: "0x9daF8c91AEFAE50b9c0E69629D3F6Ca40cA3B3FE",
      messageTransmitter: "0xF3be9355363857F3e001be68856A2f96b4C39Ba9",
    },
    v2: CCTP_V2,
  },
  clock: { kind: "stamped", aboutSeconds: 2 },
};

export const ARBITRUM_RECORD: ChainRecord = {
  slug: "arbitrum",
  name: "Arbitrum One",
  chainId: 42161,
  caip2: "eip155:42161",
  usdc: {
    address: "0xaf88d065e77c8cc2239327c5edb3a432268e5831",
    name: "USD Coin",
    version: "2",
    decimals: 6,
  },
  coin: "ETH",
  contracts: X402_CONTRACTS,
  facilitators: arbitrumFacilitators,
  hubs: arbitrumHubs,
  cctpDomain: 3,
  cctp: {
    v1: {
      tokenMessenger: "0x19330d10D9Cc8751218eaf51E8885D058642E08A",
      messageTransmitter: "0xC30362313FBBA5cf9163F0bb16a0e01f01A896ca",
    },
    v2: CCTP_V2,
  },
  clock: { kind: "stamped", aboutSeconds: 0.25 },
};

export const CHAIN_RECORDS: readonly ChainRecord[] = [BASE_RECORD, POLYGON_RECORD, ARBITRUM_RECORD];

/**
 * Solana (docs/chains.md, "Solana"): not an EVM chain, so not a `ChainRecord`. Its addresses are base58 public keys,
 * kept as they are written (case matters: never lower-cased); a payment moves USDC between token accounts, and the
 * store's buyer and merchant are those accounts' owners. Its blocks are slots, about 400 ms apart, some skipped
 * (a slot no leader filled has no block): only each block's own time (`blockTime`) says when it was, a `stamped`
 * clock, and a slot number gives no time. Its facilitators are fee payers (the account that signs first and pays
 * the fee of the buyer's transaction), listed in `solana-facilitators.json`; its hubs in `solana-hubs.json`.
 */
export interface SolanaRecord {
  kind: "solana";
  slug: typeof SOLANA_SLUG;
  name: string;
  /** CAIP-2: `solana:` and the first 32 characters of the genesis hash. */
  caip2: `solana:${string}`;
  /** USDC's mint (base58) and its decimals. */
  usdc: { address: string; decimals: number };
  coin: "SOL";
  /** The programs a payment goes through: SPL Token (and Token-2022), the associated token accounts, channels. */
  programs: { token: string; token2022: string; associatedToken: string; paymentChannels: string };
  /** The fee-payer registry, in `solana-facilitators.json`'s format. */
  facilitators: unknown;
  /** The labelled exchange wallets, in `base-hubs.json`'s format with base58 addresses. */
  hubs: unknown;
  clock: ChainClock;
}

/** Any chain the store keeps rows of: an EVM chain's record or Solana's. */
export type AnyChainRecord = ChainRecord | SolanaRecord;

export const isSolana = (chain: Pick<AnyChainRecord, "slug">): boolean => chain.slug === SOLANA_SLUG;

export const SOLANA_RECORD: SolanaRecord = {
  kind: "solana",
  slug: SOLANA_SLUG,
  name: "Solana",
  caip2: SOLANA_NETWORK as `solana:${string}`,
  usdc: { address: SOLANA_USDC_MINT, decimals: SOLANA_USDC_DECIMALS },
  coin: "SOL",
  programs: {
    token: SPL_TOKEN_PROGRAM,
    token2022: TOKEN_2022_PROGRAM,
    associatedToken: ASSOCIATED_TOKEN_PROGRAM,
    paymentChannels: PAYMENT_CHANNELS_PROGRAM,
  },
  facilitators: solanaFacilitators,
  hubs: solanaHubs,
  // Slots are about 400 ms apart (Solana's docs, "Slot"), some skipped: a slot's time is its block's blockTime.
  clock: { kind: "stamped", aboutSeconds: 0.4 },
};

/** Chains by slug and by CAIP-2. */
export interface ChainRegistry<R extends { slug: string; caip2: string } = ChainRecord> {
  readonly list: readonly R[];
  readonly bySlug: ReadonlyMap<string, R>;
  readonly byCaip2: ReadonlyMap<string, R>;
  /** The chain of a slug (`base`); throws on one it does not know, naming those it does. */
  chainBySlug(slug: string): R;
  /** The chain of a CAIP-2 id (`eip155:8453`); throws on one it does not know. */
  chainByCaip2(caip2: string): R;
}

const SLUG = /^[a-z][a-z0-9-]*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Why Solana's record is malformed, or undefined. */
function solanaFault(r: SolanaRecord): string | undefined {
  if (!/^solana:[1-9A-HJ-NP-Za-km-z]{32}$/.test(r.caip2))
    return `CAIP-2 "${r.caip2}" is not solana:<genesis hash>`;
  const keys = [r.usdc.address, ...Object.values(r.programs)];
  const bad = keys.find((k) => !SOLANA_ADDRESS.test(k));
  if (bad !== undefined) return `"${bad}" is not a base58 public key`;
  return clockFault(r.clock);
}

/** Why a record is malformed, or undefined. */
function recordFault(r: AnyChainRecord): string | undefined {
  if (!SLUG.test(r.slug)) return `slug "${r.slug}" is not lower-case letters, digits and dashes`;
  if ("kind" in r && r.kind === "solana") return solanaFault(r);
  return evmFault(r as ChainRecord);
}

function evmFault(r: ChainRecord): string | undefined {
  if (!Number.isSafeInteger(r.chainId) || r.chainId < 1)
    return `chain id ${r.chainId} is not a positive integer`;
  if (r.caip2 !== `eip155:${r.chainId}`) return `CAIP-2 "${r.caip2}" is not eip155:${r.chainId}`;
  if (!/^0x[0-9a-f]{40}$/.test(r.usdc.address)) return `USDC "${r.usdc.address}" is not a lower-case address`;
  if (!r.usdc.name || !r.usdc.version) return "USDC's EIP-712 domain needs a name and a version";
  for (const [name, address] of Object.entries(r.contracts)) {
    if (!ADDRESS.test(address)) return `contract ${name} "${address}" is not an address`;
  }
  return clockFault(r.clock);
}

function clockFault(clock: ChainClock): string | undefined {
  if (clock.kind === "fixed" && !(clock.blockSeconds > 0)) return "a fixed clock needs blockSeconds above 0";
  if (
    clock.kind === "fixed" &&
    clock.upgrade &&
    !(clock.upgrade.intervalMs > 0 && clock.upgrade.activationTime > clock.genesisTime)
  )
    return "a clock's upgrade needs intervalMs above 0 and an activation after genesis";
  if (clock.kind === "stamped" && !(clock.aboutSeconds > 0))
    return "a stamped clock needs aboutSeconds above 0";
  return undefined;
}

/** A registry of `records`; throws on a malformed record or a slug or CAIP-2 id given twice. */
export function chainRegistry<R extends AnyChainRecord = ChainRecord>(
  records: readonly R[],
): ChainRegistry<R> {
  const bySlug = new Map<string, R>();
  const byCaip2 = new Map<string, R>();
  for (const r of records) {
    const fault = recordFault(r);
    if (fault) throw new Error(`chain record "${r.slug}": ${fault}`);
    if (bySlug.has(r.slug)) throw new Error(`chain slug "${r.slug}" given twice`);
    if (byCaip2.has(r.caip2)) throw new Error(`chain ${r.caip2} given twice`);
    bySlug.set(r.slug, r);
    byCaip2.set(r.caip2, r);
  }
  const known = () => [...bySlug.keys()].join(", ");
  return {
    list: [...records],
    bySlug,
    byCaip2,
    chainBySlug(slug) {
      const r = bySlug.get(slug);
      if (!r) throw new Error(`unknown chain "${slug}" (known: ${known()})`);
      return r;
    },
    chainByCaip2(caip2) {
      const r = byCaip2.get(caip2);
      if (!r) throw new Error(`unknown network "${caip2}" (known: ${[...byCaip2.keys()].join(", ")})`);
      return r;
    },
  };
}

/** The chains this project knows. */
export const chains: ChainRegistry = chainRegistry(CHAIN_RECORDS);
export const chainBySlug = (slug: string): ChainRecord => chains.chainBySlug(slug);
export const chainByCaip2 = (caip2: string): ChainRecord => chains.chainByCaip2(caip2);

/**
 * Every chain the store keeps rows of: the EVM chains and Solana. What reads and writes the store by chain (the
 * import, the indexer's `--chain`, the reports, their pages and datasets) looks chains up here; what settles or
 * signs (the facilitator, the merchants, the attester) keeps to `chains`, whose records are all EVM.
 */
export const storeChains: ChainRegistry<AnyChainRecord> = chainRegistry<AnyChainRecord>([
  ...CHAIN_RECORDS,
  SOLANA_RECORD,
]);

/** An address as the store keeps it, of either form: `0x` and 40 lower-case hex digits, or a base58 key as written. */
export const STORED_ADDRESS = /^(?:0x[0-9a-f]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;

/**
 * A reader's address (a merchant's, a wallet's) of either form, in the store's form; undefined when it is neither.
 * A base58 key is never mistaken for an EVM address: no base58 text starts with `0`.
 */
export function anyStoreAddress(raw: string): string | undefined {
  return ADDRESS.test(raw) ? raw.toLowerCase() : SOLANA_ADDRESS.test(raw) ? raw : undefined;
}

/**
 * A store address of `chain` as the store keeps it: an EVM address lower-cased, a base58 key as written (its
 * case is part of it). Undefined when it is not an address of that chain's form.
 */
export function storeAddress(chain: Pick<AnyChainRecord, "slug">, raw: string): string | undefined {
  if (isSolana(chain)) return SOLANA_ADDRESS.test(raw) ? raw : undefined;
  return ADDRESS.test(raw) ? raw.toLowerCase() : undefined;
}
