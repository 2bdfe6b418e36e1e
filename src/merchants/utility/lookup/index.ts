/**
 * The lookup endpoints of the utility API (docs/platform.md, "The utility API's endpoints"): IP geolocation, time zone at a point, DNS report
 * and e-mail verification. See README.md for parameters, decisions and the DNS resolver setting.
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import { dnsEndpoint } from "./dns.ts";
import type { DnsOptions } from "./dns-resolver.ts";
import { emailVerifyEndpoint } from "./email.ts";
import { geo } from "./geo.ts";
import { timezoneEndpoint } from "./timezone.ts";

export type { DnsOptions } from "./dns-resolver.ts";

export interface LookupOptions {
  /** Resolvers for `/api/dns` and `/api/email/verify`; default the system's. */
  dns?: DnsOptions;
  /** The clock of `/api/timezone`; default the real one. */
  clock?: () => Date;
}

/** The four endpoints in the price list's order (timezone, geo, dns, email/verify). */
export function lookupEndpoints(options: LookupOptions = {}): readonly AnyEndpoint[] {
  return [timezoneEndpoint(options.clock), geo, dnsEndpoint(options.dns), emailVerifyEndpoint(options.dns)];
}

export const LOOKUP_ENDPOINTS: readonly AnyEndpoint[] = lookupEndpoints();
