/**
 * The merchant hosts this program can serve, by their configuration name: each builds its `Merchant`
 * (catalogue, wallet, public URL) for the platform.
 */
import type { MerchantHost } from "../config/config.ts";
import type { Merchant } from "../merchant-kit/catalogue.ts";
import { type UtilityHost, utilityAliasMerchant, utilityMerchant } from "./utility/catalogue.ts";

/** What a host needs beyond its catalogue; `dns` comes from the configuration's `dnsServers`. */
export type MerchantBuilder = (host: UtilityHost) => Merchant;

export const MERCHANTS: Record<MerchantHost, MerchantBuilder> = {
  utility: utilityMerchant,
  "utility-alias": utilityAliasMerchant,
};
