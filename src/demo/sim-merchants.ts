/**
 * The merchants as the simulator sees them: each one's wallet, URL and the endpoints the simulated buyers
 * call, with the input each call sends.
 */
import { isMeteredOnly, offersChannels } from "../merchant-kit/index.ts";
import { sizedChat, tinyChat } from "./chat-work.ts";
import type { NamedMerchant } from "./merchants.ts";
import type { PlanEndpoint } from "./plan-types.ts";

/**
 * A merchant as the simulator sees it. Here, where they are made, not in simulator.ts: the simulator's
 * parts (payment.ts, mcp-faces.ts, channel-refund.ts) read it, and simulator.ts runs them.
 */
export interface SimMerchant {
  id: string;
  /** Base URL the endpoints' paths are appended to. */
  url: string;
  payTo: string;
  endpoints: readonly PlanEndpoint[];
}

/**
 * Utility endpoints the simulated buyers call: those that answer offline from their catalogue example.
 * The others need the network or an upstream (scrape, dns, the language model) and would only fail.
 */
const SIMULATED_UTILITY_PATHS = [
  "/api/calc",
  "/api/a11y/contrast",
  "/api/timezone",
  "/api/geo",
  "/api/icon/search",
  "/api/data/convert",
  "/api/qr",
];

/**
 * Whether the simulated buyers call an endpoint: the utility API's that answer offline, the inference
 * API's chat routes (its audio routes need Debian's speech programs, which a machine may lack), the
 * social-data API's and its proxy's that have an input from its archive, every shop's.
 */
function simulated(merchant: string, path: string, socialInputs: Record<string, unknown>): boolean {
  if (merchant === "utility") return SIMULATED_UTILITY_PATHS.includes(path);
  if (merchant === "inference") return path.startsWith("/v1/chat/");
  if (merchant === "social" || merchant === "social-proxy") return Object.hasOwn(socialInputs, path);
  return true;
}

/** The named merchants for the simulator; the social-data APIs' inputs come from `socialInputs`, by path. */
export function simMerchants(
  named: readonly NamedMerchant[],
  socialInputs: Record<string, unknown>,
): SimMerchant[] {
  return named.map((m) => ({
    id: m.id,
    url: m.merchant.publicUrl,
    payTo: m.key.address,
    endpoints: m.merchant.endpoints
      .filter((e) => simulated(m.id, e.path, socialInputs))
      .map((e): PlanEndpoint => {
        const input = (m.id.startsWith("social") ? socialInputs[e.path] : e.example.input) as Record<
          string,
          unknown
        >;
        // Endpoints that offer exact too are bought at their listed price.
        const metered = isMeteredOnly(e);
        return {
          method: e.method,
          path: e.path,
          price: Number(e.price),
          input,
          ...(metered ? { scheme: "upto" as const } : {}),
          ...(metered && "messages" in input ? { sized: sizedChat(input) } : {}),
          ...(metered && "messages" in input && tinyChat(input) ? { tiny: tinyChat(input) } : {}),
          ...(offersChannels(e) ? { channels: true as const } : {}),
          ...(e.exactTransfers?.includes("permit2") ? { permit2: true as const } : {}),
        };
      }),
  }));
}
