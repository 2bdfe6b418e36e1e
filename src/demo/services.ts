/**
 * The services the demo runs on its devnet: the facilitator, the merchant hosts and the shops, and the
 * report service whose indexer follows the chain.
 */
import { chainBySlug } from "../chain/chains.ts";
import type { Devnet, DevnetAccount } from "../chain/devnet/index.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { MERCHANT_HOST_NAMES } from "../config/ports.ts";
import { DEFAULT_REORG_DEPTH, type IndexerEvent } from "../indexer/index.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import {
  type AttestOptions,
  type Config,
  devnetChainOptions,
  devnetFacilitatorOptions,
  type Services,
  startServices,
} from "../services/index.ts";
import { shopsApp } from "./shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "./shops/index.ts";
import { solanaMerchantKey } from "./solana-plan.ts";

/** The banner over every page of the demo: its chains are anvil's (and litesvm's), its money not real. */
export function demoNotice(
  further: readonly { slug: string; devnet: { chainId: number } }[],
  solana = false,
): string {
  const others = further.map(({ slug, devnet }) => `, and as ${chainBySlug(slug).name}, ${devnet.chainId}`);
  const svm = solana ? "; litesvm as Solana" : "";
  return `DEVNET DEMO: simulated buyers paying real x402 endpoints on ${further.length > 0 || solana ? "local chains" : "a local chain"} (anvil as Base, chain id 8453${others.join("")}${svm}). The wallets, merchants and figures are not mainnet's.`;
}

export interface DemoServicesOptions {
  /** The demo's configuration (demo-config.ts). */
  config: Config;
  lifecycle: Lifecycle;
  devnet: Devnet;
  /** The shops' wallets, by their place in `DEMO_SHOPS`. */
  shopKeys: readonly DevnetAccount[];
  /** The chain's first block, where the indexer starts. */
  fromBlock: number;
  fundingLookback?: number;
  onIndexerEvent: (event: IndexerEvent) => void;
  /** The attester of the demo's weeks. */
  attest: AttestOptions;
  /** The chains played beside Base, each its devnet and its indexer's listener. */
  further?: readonly FurtherDevnet[];
  /**
   * The local Solana, when the demo plays it: the facilitator settles `exact` there with its fee payer, and
   * every shop is paid there into its demo wallet (solana-plan.ts). Its indexer is the week's one pass
   * (solana-week.ts), not a follower.
   */
  solana?: { rpc: string; feePayerKey: string };
}

/** A chain the demo plays beside Base: its slug, its devnet, what its indexer tells. */
export interface FurtherDevnet {
  slug: string;
  devnet: Devnet;
  onIndexerEvent: (event: IndexerEvent) => void;
}

/** Starts the services; resolves with them and the shops once every one listens. */
export async function startDemoServices(
  options: DemoServicesOptions,
): Promise<{ services: Services; shops: { merchant: Merchant; name: string }[] }> {
  const { config, devnet } = options;
  const further = options.further ?? [];
  // Each chain's indexer follows its devnet, its facilitator's signer known, asking for the head every 500 ms.
  const follow = (d: Devnet, registry: FacilitatorRegistry, onEvent: (event: IndexerEvent) => void) => ({
    rpc: { url: d.rpc, rps: 0 },
    registry: registry.withSigners([d.facilitatorAccount.address]),
    follow: true,
    pollMs: 500,
    fundingLookback: options.fundingLookback,
    onEvent,
  });
  let shops: { merchant: Merchant; name: string }[] = [];
  const services = await startServices({
    config,
    lifecycle: options.lifecycle,
    // Receipts polled every 50 ms: while catching up, blocks come every few milliseconds. One facilitator
    // settles on every chain, each with its devnet's signer.
    facilitator: {
      ...devnetFacilitatorOptions(devnet, 50),
      more: further.map(({ slug, devnet: d }) => ({
        ...devnetChainOptions(d),
        assets: [d.usdc.toLowerCase()],
        slug,
      })),
      ...(options.solana && { solana: options.solana }),
    },
    merchants: MERCHANT_HOST_NAMES,
    notice: demoNotice(further, options.solana !== undefined),
    hosts: [
      {
        name: "shops",
        port: config.ports.shops,
        build: async (url, kit) => {
          shops = DEMO_SHOPS.map((shop, i) => {
            const merchant = shopMerchant(
              shop,
              (options.shopKeys[i] as DevnetAccount).address.toLowerCase() as `0x${string}`,
              `${url}/${shop.slug}`,
            );
            const solanaPayTo = options.solana && solanaMerchantKey(shop.slug).address;
            return { name: shop.name, merchant: solanaPayTo ? { ...merchant, solanaPayTo } : merchant };
          });
          return { fetch: (await shopsApp(shops, kit)).fetch, merchants: shops.map((s) => s.merchant) };
        },
      },
    ],
    reports: {
      follow: (started) => [
        {
          ...follow(devnet, FacilitatorRegistry.base(), options.onIndexerEvent),
          fromBlock: options.fromBlock,
          // Often: the week is ready once the listings were read after it was played (week-progress.ts).
          discovery: { url: `${started.facilitator}/discovery/resources`, refreshMs: 5_000 },
        },
        ...further.map(({ slug, devnet: d, onIndexerEvent }) => {
          const chain = chainBySlug(slug);
          // No discovery: Base's indexer reads the listings, which are every chain's, for all (as `index`
          // with several RPCs does); a second reader every 5 s was the same work again.
          return {
            ...follow(d, FacilitatorRegistry.forChain(chain), onIndexerEvent),
            chain,
            fromBlock: 0,
            // Base's devnet depth, not 128 s of Arbitrum's blocks (512): a devnet does not reorg, and the
            // demo's chain mines a block a second when idle (sim-chain.ts), so 512 would hold its payments
            // back for minutes.
            reorgDepth: DEFAULT_REORG_DEPTH,
          };
        }),
      ],
      attest: options.attest,
    },
  });
  return { services, shops };
}
