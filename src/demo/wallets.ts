/**
 * The demo's devnet wallets: one for each merchant (the utility API and its alias share one) and one for
 * each wallet of the simulated population, each derived from the devnet's mnemonic at an index of its own.
 */
import { type DevnetAccount, derive } from "../chain/devnet/index.ts";
import type { Mix } from "./mix.ts";
import { merchantWallet, populationWallets, type WalletId } from "./plan.ts";
import { DEMO_SHOPS } from "./shops/index.ts";

/** Derivation indices of the demo's merchant wallets (the devnet uses 0 and 1, its buyers 2 on). */
const MERCHANT_KEY_BASE = 100;
/** The inference API's wallet: apart from the shops' (`MERCHANT_KEY_BASE + 1` on), whatever their number. */
const INFERENCE_KEY = 99;
/** The social-data API's wallet, apart from the others likewise. */
const SOCIAL_KEY = 98;
/** Its paid proxy's own wallet: the proxy is a merchant of its own on the leaderboard. */
const SOCIAL_PROXY_KEY = 97;
/** The key that attests the demo's weeks on its devnet (src/reports/attest/): no merchant's, no buyer's. */
export const ATTESTER_KEY = 96;
const POPULATION_KEY_BASE = 1_000;

/** The wallet each merchant is paid into. */
export interface MerchantKeys {
  utility: DevnetAccount;
  inference: DevnetAccount;
  social: DevnetAccount;
  socialProxy: DevnetAccount;
  /** By the shop's place in `DEMO_SHOPS`. */
  shops: DevnetAccount[];
}

export function merchantKeys(): MerchantKeys {
  return {
    utility: derive(MERCHANT_KEY_BASE),
    inference: derive(INFERENCE_KEY),
    social: derive(SOCIAL_KEY),
    socialProxy: derive(SOCIAL_PROXY_KEY),
    shops: DEMO_SHOPS.map((_, i) => derive(MERCHANT_KEY_BASE + 1 + i)),
  };
}

/** The wallet of the configured merchant host `name`: the utility API's for the utility and its alias. */
export function hostKey(keys: MerchantKeys, name: string): DevnetAccount {
  return (
    { inference: keys.inference, social: keys.social, "social-proxy": keys.socialProxy }[name] ?? keys.utility
  );
}

/** The simulator's keys: each merchant's wallet (`merchant:<id>`), then the population's. */
export function simulatedKeys(
  merchants: readonly { id: string; key: DevnetAccount }[],
  mix: Mix,
): Map<WalletId, DevnetAccount> {
  const wallets = new Map<WalletId, DevnetAccount>();
  for (const m of merchants) wallets.set(merchantWallet(m.id), m.key);
  populationWallets(mix).forEach((id, i) => {
    wallets.set(id, derive(POPULATION_KEY_BASE + i));
  });
  return wallets;
}
