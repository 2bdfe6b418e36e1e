/**
 * The services the demo runs on its devnet: the facilitator, the merchant hosts and the shops, and the
 * report service whose indexer follows the chain.
 */
import type { Devnet, DevnetAccount } from "../chain/devnet/index.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { MERCHANT_HOST_NAMES } from "../config/ports.ts";
import type { IndexerEvent } from "../indexer/index.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import {
  type AttestOptions,
  type Config,
  devnetFacilitatorOptions,
  type Services,
  startServices,
} from "../services/index.ts";
import { shopsApp } from "./shops/host.ts";
import { DEMO_SHOPS, shopMerchant } from "./shops/index.ts";

export const DEMO_NOTICE =
  "DEVNET DEMO: simulated buyers paying real x402 endpoints on a local chain (anvil as Base, chain id 8453). The wallets, merchants and figures are not Base mainnet's.";

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
}

/** Starts the services; resolves with them and the shops once every one listens. */
export async function startDemoServices(
  options: DemoServicesOptions,
): Promise<{ services: Services; shops: { merchant: Merchant; name: string }[] }> {
  const { config, devnet } = options;
  let shops: { merchant: Merchant; name: string }[] = [];
  const services = await startServices({
    config,
    lifecycle: options.lifecycle,
    // Receipts polled every 50 ms: while catching up, blocks come every few milliseconds.
    facilitator: devnetFacilitatorOptions(devnet, 50),
    merchants: MERCHANT_HOST_NAMES,
    notice: DEMO_NOTICE,
    hosts: [
      {
        name: "shops",
        port: config.ports.shops,
        build: async (url, kit) => {
          shops = DEMO_SHOPS.map((shop, i) => ({
            name: shop.name,
            merchant: shopMerchant(
              shop,
              (options.shopKeys[i] as DevnetAccount).address.toLowerCase() as `0x${string}`,
              `${url}/${shop.slug}`,
            ),
          }));
          return { fetch: (await shopsApp(shops, kit)).fetch, merchants: shops.map((s) => s.merchant) };
        },
      },
    ],
    reports: {
      follow: (started) => ({
        rpc: { url: devnet.rpc, rps: 0 },
        registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
        fromBlock: options.fromBlock,
        follow: true,
        pollMs: 500,
        fundingLookback: options.fundingLookback,
        // Often: the week is ready once the listings were read after it was played (week-progress.ts).
        discovery: { url: `${started.facilitator}/discovery/resources`, refreshMs: 5_000 },
        onEvent: options.onIndexerEvent,
      }),
      attest: options.attest,
    },
  });
  return { services, shops };
}
