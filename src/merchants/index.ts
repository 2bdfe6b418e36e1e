/**
 * The merchant hosts this program can serve, by their configuration name: each builds its `Merchant`
 * (catalogue, wallet, public URL) from the host's wallet and address and its slice of the configuration.
 */
import type { MerchantHost } from "../config/ports.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import { allowListPolicy } from "../merchant-kit/index.ts";
import { inferenceMerchant } from "./inference/catalogue.ts";

export { OFFLINE_SETTINGS } from "./inference/catalogue.ts";

import type { MerchantsSettings } from "./settings.ts";
import { socialMerchant, socialProxyMerchant } from "./social/catalogue.ts";
import { socialSetup } from "./social/setup.ts";
import { UTILITY_ALIAS_PATHS, utilityAliasMerchant, utilityMerchant } from "./utility/catalogue.ts";

/** Where a host is reached and paid. */
export interface HostAddress {
  payTo: `0x${string}`;
  /** Public base URL, no trailing slash. */
  publicUrl: string;
}

export type MerchantBuilder = (host: HostAddress, config: MerchantsSettings) => Merchant;

const utilityOptions = (config: MerchantsSettings) => ({
  dns: { servers: config.dnsServers },
  providers: config.providers,
  fetchPolicy: allowListPolicy(config.fetchAllow),
  pageBudget: config.pageBudget,
  workBudget: config.workBudget,
});

export const MERCHANTS: Record<MerchantHost, MerchantBuilder> = {
  utility: (host, config) => utilityMerchant({ ...host, ...utilityOptions(config) }),
  "utility-alias": (host, config) => utilityAliasMerchant({ ...host, ...utilityOptions(config) }),
  inference: (host, config) => inferenceMerchant(host, config.inference),
  social: (host, config) => socialMerchant(host, socialSetup(config.social)),
  "social-proxy": (host, config) => socialProxyMerchant(host, socialSetup(config.social)),
};

/** What an alias host lists of its source (docs/http.md, "The merchant hosts"), by host name. */
export const ALIAS_PATHS: Partial<Record<MerchantHost, { source: MerchantHost; paths: readonly string[] }>> =
  {
    "utility-alias": { source: "utility", paths: UTILITY_ALIAS_PATHS },
  };
