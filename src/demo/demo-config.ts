import type { MerchantHost } from "../config/ports.ts";
import { OFFLINE_SETTINGS } from "../merchants/index.ts";
import type { Config } from "../services/index.ts";
import type { MerchantKeys } from "./wallets.ts";

/** The configuration the demo serves with: `config`, with every merchant paid into its demo wallet. */
export function demoConfig(config: Config, keys: MerchantKeys): Config {
  const walletOf = (name: string) => keys.hosts[name as MerchantHost].address.toLowerCase() as `0x${string}`;
  return {
    ...config,
    merchants: Object.fromEntries(
      Object.entries(config.merchants).map(([name, host]) => [name, { ...host, payTo: walletOf(name) }]),
    ),
    // The inference API answers on its offline engine, the social-data API from its archive: the demo
    // needs no model, no X account and no network.
    inference: OFFLINE_SETTINGS,
    social: { ...config.social, provider: "archive" },
  };
}
