/**
 * The demo's merchants as the operator names them: a `merchant` record each for the reports (a report's
 * name is a host name and the shops share one host, so each gets its own under .localhost), and the
 * pages each has.
 */
import type { DevnetAccount } from "../chain/devnet/index.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import type { Services } from "../services/index.ts";
import type { ServiceUrls } from "./urls.ts";
import { type MerchantKeys, WALLET_HOSTS } from "./wallets.ts";

/** A merchant as the demo shows it to its user: its report, badge and API (`demoMerchants`). */
export interface DemoMerchant {
  id: string;
  /** The host name its reports carry, and what people call it. */
  name: string;
  title: string;
  address: string;
  /** The merchant's report page, badge and API reference. */
  report: string;
  badge: string;
  api: string;
}

export interface NamedMerchant {
  id: string;
  /** The host name its reports carry. */
  name: string;
  title: string;
  /** The wallet it is paid into. */
  key: DevnetAccount;
  merchant: Merchant;
  /** Its API reference. */
  api: string;
}

/** The started merchant hosts and shops, named. */
export function nameMerchants(
  services: Pick<Services, "merchants">,
  urls: ServiceUrls,
  keys: MerchantKeys,
  shops: readonly { merchant: Merchant; name: string }[],
): NamedMerchant[] {
  // Each merchant host with a wallet of its own (an alias is its source's merchant on the leaderboard).
  const hosts = WALLET_HOSTS.map((id) => {
    const merchant = services.merchants[id] as Merchant;
    return {
      id,
      name: `${id}.localhost`,
      title: merchant.title,
      key: keys.hosts[id],
      merchant,
      api: `${urls[id]}/docs`,
    };
  });
  return [
    ...hosts,
    ...shops.map((s, i) => ({
      id: s.merchant.name,
      name: `${s.merchant.name}.localhost`,
      title: s.name,
      key: keys.shops[i] as DevnetAccount,
      merchant: s.merchant,
      api: `${s.merchant.publicUrl}/docs`,
    })),
  ];
}

/**
 * The `merchant` records the analytics database imports (NDJSON): each merchant's wallet and name. Not its Solana
 * wallet's: a `merchant` line names no chain, and a base58 key named so is reported in every chain's week, with
 * nothing paid, where Base's week cannot seal it (its leaf is an EVM address's), so Base's attestation would stop.
 */
export function merchantRecords(named: readonly NamedMerchant[]): string {
  return named
    .map(
      (m) => `${JSON.stringify({ type: "merchant", address: m.key.address.toLowerCase(), name: m.name })}\n`,
    )
    .join("");
}

/** The merchants as the demo reports them: each with its report page and badge under `publicUrl`. */
export function demoMerchants(named: readonly NamedMerchant[], publicUrl: string): DemoMerchant[] {
  return named.map((m) => {
    const address = m.key.address.toLowerCase();
    return {
      id: m.id,
      name: m.name,
      title: m.title,
      address,
      report: `${publicUrl}/reports/base/${address}`,
      badge: `${publicUrl}/badges/base/${address}.svg`,
      api: m.api,
    };
  });
}
