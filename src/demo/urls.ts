/** What the demo tells its user to open (`demoUrls`). */
import { SOLANA_NETWORK } from "../chain/solana/constants.ts";
import { MERCHANT_HOST_NAMES, type MerchantHost } from "../config/ports.ts";

export interface DemoUrls {
  leaderboard: string;
  rpc: string;
  facilitator: string;
  /** Every merchant host's base URL, by its name. */
  merchants: Record<MerchantHost, string>;
  shops: string;
  /** The operator's `/metrics` (docs/metrics.md), unless X402M_METRICS_PORT is off. */
  metrics?: string;
  /** The chains played beside Base: each one's devnet and leaderboard page. */
  chains?: { chain: string; chain_id: number; rpc: string; leaderboard: string }[];
  /**
   * The local Solana, while this start plays its week (a later start does not start it again: solana-week.ts):
   * its JSON-RPC, its network, its leaderboard page.
   */
  solana?: { rpc: string; network: string; leaderboard: string };
  /** With chains beside Base: the leaderboard of every chain, a merchant ranked by its sum. */
  leaderboard_all?: string;
}

/** The base URLs of the services the demo starts, by name. */
export type ServiceUrls = Record<"facilitator" | MerchantHost | "shops" | "reports", string>;

/** What the demo tells its user to open: the leaderboard at `publicUrl`, and every service. */
export function demoUrls(
  publicUrl: string,
  rpc: string,
  urls: ServiceUrls,
  metrics: string | undefined,
  further: readonly { slug: string; devnet: { rpc: string; chainId: number } }[] = [],
  solanaRpc?: string,
): DemoUrls {
  return {
    leaderboard: `${publicUrl}/`,
    rpc,
    facilitator: urls.facilitator,
    merchants: Object.fromEntries(
      MERCHANT_HOST_NAMES.map((name) => [name, urls[name]]),
    ) as DemoUrls["merchants"],
    shops: urls.shops,
    ...(metrics && { metrics }),
    ...(further.length > 0 && {
      chains: further.map(({ slug, devnet }) => ({
        chain: slug,
        chain_id: devnet.chainId,
        rpc: devnet.rpc,
        leaderboard: `${publicUrl}/chains/${slug}`,
      })),
    }),
    ...(solanaRpc && {
      solana: { rpc: solanaRpc, network: SOLANA_NETWORK, leaderboard: `${publicUrl}/chains/solana` },
    }),
    ...((further.length > 0 || solanaRpc) && { leaderboard_all: `${publicUrl}/chains/all` }),
  };
}
