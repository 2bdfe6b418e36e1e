/**
 * The probe endpoints of the utility API (docs/platform.md, "The utility API's endpoints"): `/api/ping` and `/api/uptime/report`. Both reach a
 * caller's URL under the platform's SSRF rules (src/merchant-kit/fetch). See README.md.
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import { type ProbeOptions, resolveProbeOptions } from "./options.ts";
import { pingEndpoint } from "./ping.ts";
import { uptimeEndpoint } from "./uptime.ts";

export type { ProbeOptions, ServerLocation } from "./options.ts";

/**
 * The two endpoints in the price list's order, built with a fetch policy (tests: `allowAddresses`, `lookup`,
 * `ca`, `timeoutMs`) and a server locator.
 *
 * @example
 * const endpoints = probeEndpoints({ policy: { allowAddresses: ["127.0.0.1"], timeoutMs: 2_000 } });
 */
export function probeEndpoints(options: ProbeOptions = {}): readonly AnyEndpoint[] {
  const resolved = resolveProbeOptions(options);
  return [pingEndpoint(resolved), uptimeEndpoint(resolved)];
}

/** Production endpoints: the default policy (public addresses only, 10 s) and the geo engine. */
export const PROBE_ENDPOINTS: readonly AnyEndpoint[] = probeEndpoints();
