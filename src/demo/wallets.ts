/**
 * The demo's devnet wallets: one for each merchant (the utility API and its alias share one) and one for
 * each wallet of the simulated population, each derived from the devnet's mnemonic at an index of its own.
 */
import { type DevnetAccount, derive } from "../chain/devnet/index.ts";
import { MERCHANT_HOST_NAMES, type MerchantHost } from "../config/ports.ts";
import { ALIAS_PATHS } from "../merchants/index.ts";
import type { Mix } from "./mix.ts";
import { populationWallets } from "./plan.ts";
import { merchantWallet, type WalletId } from "./plan-types.ts";
import { DEMO_SHOPS } from "./shops/index.ts";

/**
 * Derivation indices of the demo's merchant wallets (the devnet uses 0 and 1, its buyers 2 on): the first
 * merchant host's, its shops' above it (`MERCHANT_KEY_BASE + 1` on, whatever their number), the other hosts'
 * below it, one each down from 99 in `MERCHANT_HOSTS`' order (inference 99, social 98, its paid proxy 97).
 */
const MERCHANT_KEY_BASE = 100;
/** The key that attests the demo's weeks on its devnet (src/reports/attest/): no merchant's, no buyer's. */
export const ATTESTER_KEY = 96;
const POPULATION_KEY_BASE = 1_000;

/**
 * The hosts with a wallet of their own: every one but an alias, which lists its source's endpoints and is
 * paid into its wallet. The paid proxy has its own: it is a merchant of its own on the leaderboard.
 */
export const WALLET_HOSTS = MERCHANT_HOST_NAMES.filter((name) => !ALIAS_PATHS[name]);
if (MERCHANT_KEY_BASE - WALLET_HOSTS.length < ATTESTER_KEY) {
  throw new Error("the demo's merchant hosts would take the attester's key: move ATTESTER_KEY down");
}

/** The wallet each merchant is paid into. */
export interface MerchantKeys {
  /** Every merchant host's, an alias's being its source's. */
  hosts: Record<MerchantHost, DevnetAccount>;
  /** By the shop's place in `DEMO_SHOPS`. */
  shops: DevnetAccount[];
}

export function merchantKeys(): MerchantKeys {
  const own = new Map(WALLET_HOSTS.map((name, i) => [name, derive(MERCHANT_KEY_BASE - i)]));
  const hosts = Object.fromEntries(
    MERCHANT_HOST_NAMES.map((name) => [name, own.get(ALIAS_PATHS[name]?.source ?? name) as DevnetAccount]),
  ) as Record<MerchantHost, DevnetAccount>;
  return { hosts, shops: DEMO_SHOPS.map((_, i) => derive(MERCHANT_KEY_BASE + 1 + i)) };
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
