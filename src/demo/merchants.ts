/**
 * The demo's merchants as the operator names them: a `merchant` record each for the reports (a report's
 * name is a host name and the shops share one host, so each gets its own under .localhost), and the
 * pages each has.
 */
import type { DevnetAccount } from "../chain/devnet/index.ts";
import type { Merchant } from "../merchant-kit/endpoint.ts";
import type { Services } from "../services/index.ts";
import type { ServiceUrls } from "./urls.ts";
import type { MerchantKeys } from "./wallets.ts";

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
  return [
    {
      id: "utility",
      name: "utility.localhost",
      title: "Utility API",
      key: keys.utility,
      merchant: services.merchants.utility as Merchant,
      api: `${urls.utility}/docs`,
    },
    {
      id: "inference",
      name: "inference.localhost",
      title: "Inference API",
      key: keys.inference,
      merchant: services.merchants.inference as Merchant,
      api: `${urls.inference}/docs`,
    },
    {
      id: "social",
      name: "social.localhost",
      title: "Social-data API",
      key: keys.social,
      merchant: services.merchants.social as Merchant,
      api: `${urls.social}/docs`,
    },
    {
      id: "social-proxy",
      name: "social-proxy.localhost",
      title: "Social-data API (paid proxy)",
      key: keys.socialProxy,
      merchant: services.merchants["social-proxy"] as Merchant,
      api: `${urls["social-proxy"]}/docs`,
    },
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

/** The `merchant` records the analytics database imports (NDJSON): each merchant's wallet and name. */
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
