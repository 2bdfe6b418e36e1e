/** What the demo tells its user to open (`demoUrls`). */
export interface DemoUrls {
  leaderboard: string;
  rpc: string;
  facilitator: string;
  utility: string;
  utilityAlias: string;
  inference: string;
  social: string;
  socialProxy: string;
  shops: string;
  /** The operator's `/metrics` (docs/metrics.md), unless X402M_METRICS_PORT is off. */
  metrics?: string;
}

/** The base URLs of the services the demo starts, by name. */
export type ServiceUrls = Record<
  "facilitator" | "utility" | "utility-alias" | "inference" | "social" | "social-proxy" | "shops" | "reports",
  string
>;

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
    utility: urls.utility,
    utilityAlias: urls["utility-alias"],
    inference: urls.inference,
    social: urls.social,
    socialProxy: urls["social-proxy"],
    shops: urls.shops,
    ...(metrics && { metrics }),
  };
}
