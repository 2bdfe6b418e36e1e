/** What the demo tells its user to open (`demoUrls`). */
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
}

/** The base URLs of the services the demo starts, by name. */
export type ServiceUrls = Record<"facilitator" | MerchantHost | "shops" | "reports", string>;

/** What the demo tells its user to open: the leaderboard at `publicUrl`, and every service. */
export function demoUrls(
  publicUrl: string,
  rpc: string,
  urls: ServiceUrls,
  metrics: string | undefined,
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
  };
}
