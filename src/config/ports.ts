/**
 * Which port each service and merchant host listens on unless told otherwise, and which setting changes it:
 * every port in one place, so that no two defaults collide.
 */

/**
 * Every service's default port, in one place: anvil's usual 8545 for the devnet, then the service's own
 * from 8402 up. The merchant hosts' follow in `MERCHANT_HOSTS`.
 */
export const DEFAULT_PORTS = {
  reports: 8402,
  facilitator: 8403,
  shops: 8406,
  devnet: 8545,
  /** The demo's second chain (Arbitrum One's id and USDC): anvil's next port. */
  devnetArbitrum: 8546,
  /** `devnet --chain solana`: a Solana validator's usual RPC port. */
  solanaDevnet: 8899,
  /** The demo's local Solana (its third chain): the same port, as the demo's Base devnet takes `devnet`'s. */
  devnetSolana: 8899,
  /** The operator's metrics listener: the OpenTelemetry Prometheus exporter's usual port. */
  metrics: 9464,
} as const;
export const DEFAULT_PORT = DEFAULT_PORTS.reports;
export const DEFAULT_PUBLIC_URL = `http://127.0.0.1:${DEFAULT_PORT}`;
/** The devnet's facilitator (`bin/x402-merchants devnet`). */
export const DEFAULT_FACILITATOR_URL = `http://127.0.0.1:${DEFAULT_PORTS.facilitator}`;

/**
 * The merchant hosts and their default ports. An alias host (docs/http.md, "The merchant hosts") lists some endpoints of another
 * merchant under its own host name; its wallet defaults to that merchant's.
 */
export const MERCHANT_HOSTS = {
  utility: { port: 8404, payToFrom: null },
  "utility-alias": { port: 8405, payToFrom: "utility" },
  /** 8406 is the demo's shops (`DEFAULT_PORTS.shops`). */
  inference: { port: 8407, payToFrom: null },
  social: { port: 8408, payToFrom: null },
  /** The paid proxy (docs/social.md; docs/http.md, "The merchant hosts"): `/pay/<agent_id>`, paid to the social-data API's wallet unless set. */
  "social-proxy": { port: 8409, payToFrom: "social" },
} as const satisfies Record<string, { port: number; payToFrom: string | null }>;

export type MerchantHost = keyof typeof MERCHANT_HOSTS;

/** Every merchant host, in `MERCHANT_HOSTS`' order: the roster the services, the CLI and the demo list. */
export const MERCHANT_HOST_NAMES = Object.keys(MERCHANT_HOSTS) as MerchantHost[];

/** `utility-alias` -> `X402M_UTILITY_ALIAS_`: the prefix of a host's environment variables. */
export function merchantEnvPrefix(host: string): string {
  return `X402M_${host.toUpperCase().replace(/-/g, "_")}_`;
}

/** Where a service's port is set, for messages such as "port 8404 is in use: set ...". */
export function portSetting(service: string): string {
  switch (service) {
    case "reports":
      return "PORT or --port";
    case "devnetArbitrum":
      return "X402M_DEVNET_ARBITRUM_PORT";
    case "devnetSolana":
      return "X402M_DEVNET_SOLANA_PORT";
    case "facilitator":
    case "devnet":
    case "shops":
    case "metrics":
      return `X402M_${service.toUpperCase()}_PORT`;
    default:
      return `${merchantEnvPrefix(service)}PORT`;
  }
}
