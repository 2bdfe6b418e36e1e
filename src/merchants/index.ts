/**
 * The merchant hosts this program can serve, by their configuration name: each builds its `Merchant`
 * (catalogue, wallet, public URL) for the platform.
 */
import type { MerchantHost } from "../config/config.ts";
import type { Merchant } from "../platform/catalogue.ts";
import { utilityAliasMerchant, utilityMerchant } from "./utility/catalogue.ts";

export type MerchantBuilder = (host: { payTo: `0x${string}`; publicUrl: string }) => Merchant;

export const MERCHANTS: Record<MerchantHost, MerchantBuilder> = {
  utility: utilityMerchant,
  "utility-alias": utilityAliasMerchant,
};
