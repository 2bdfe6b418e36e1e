import { chainBySlug } from "../chain/chains.ts";
import type { MerchantHost } from "../config/ports.ts";
import { OFFLINE_SETTINGS } from "../merchants/index.ts";
import type { Config } from "../services/index.ts";
import { solanaPayToOf } from "./solana-plan.ts";
import type { MerchantKeys } from "./wallets.ts";

/**
 * The configuration the demo serves with: `config`, with every merchant paid into its demo wallet, on Base
 * and on each chain of `further` (its slug and its devnet's RPC), with that chain's USDC; and on Solana too
 * when `solanaRpc` is the local Solana's, into its demo wallet there (solana-plan.ts).
 */
export function demoConfig(
  config: Config,
  keys: MerchantKeys,
  further: readonly { slug: string; rpc: string }[] = [],
  solanaRpc?: string,
): Config {
  const walletOf = (name: string) => keys.hosts[name as MerchantHost].address.toLowerCase() as `0x${string}`;
  const first = config.payments.networks[0] ?? {
    network: config.payments.network,
    asset: config.payments.asset,
    rpcUrl: config.payments.rpcUrl,
  };
  return {
    ...config,
    merchants: Object.fromEntries(
      Object.entries(config.merchants).map(([name, host]) => [
        name,
        {
          ...host,
          payTo: walletOf(name),
          ...(solanaRpc && { solanaPayTo: solanaPayToOf(name as MerchantHost) }),
        },
      ]),
    ),
    payments: {
      ...config.payments,
      ...(solanaRpc && { solanaRpcUrl: solanaRpc }),
      networks: [
        first,
        ...further.map(({ slug, rpc }) => {
          const { caip2, usdc } = chainBySlug(slug);
          return {
            network: caip2,
            asset: { address: usdc.address, name: usdc.name, version: usdc.version, decimals: usdc.decimals },
            rpcUrl: rpc,
          };
        }),
      ],
    },
    // The inference API answers on its offline engine, the social-data API from its archive: the demo
    // needs no model, no X account and no network.
    inference: OFFLINE_SETTINGS,
    social: { ...config.social, provider: "archive" },
  };
}
