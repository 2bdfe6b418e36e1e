/**
 * The utility API (docs/platform.md, "The utility API's endpoints"). Its prices are one table, `prices.ts`, in the price list's order; each endpoint's
 * description and schemas are written once, in its family's folder (`data/`, `lookup/`, `state/`,
 * `calc.ts`); this file assembles them in the price list's order, and the platform builds the routes, the OpenAPI
 * document, the reference page, `/.well-known/x402` and the listings from the result.
 */

import type { FetchPolicy } from "../../merchant-kit/index.ts";
import { type AnyEndpoint, aliasOf, type Merchant, withChannels } from "../../merchant-kit/index.ts";
import type { WorkBudget } from "../work-budget.ts";
import { calc } from "./calc.ts";
import { dataEndpoints } from "./data/index.ts";
import { UTILITY_ALIAS_GUIDANCE, UTILITY_GUIDANCE } from "./guidance.ts";
import { ICON_ENDPOINTS } from "./icons/index.ts";
import { type DnsOptions, lookupEndpoints } from "./lookup/index.ts";
import { type PageBudget, pageEndpoints } from "./pages/index.ts";
import { SPEC_ORDER, specPathOf } from "./prices.ts";
import { probeEndpoints } from "./probes/index.ts";
import { type ProviderSettings, providerEndpoints, providersFromSettings } from "./providers/index.ts";
import { type StateOptions, stateEndpoints } from "./state/index.ts";
import { type VectorizerAiSettings, vectorizeEndpoints } from "./vectorize/index.ts";

export const UTILITY_TITLE = "Utility API";

export { SPEC_ORDER, specPathOf };

/** The paths the alias host lists under its own name, same description and price (docs/http.md, "The merchant hosts"). */
export const UTILITY_ALIAS_PATHS: readonly string[] = ["/api/geo", "/api/scrape"];

export interface UtilityOptions {
  /** Resolvers of `/api/dns` and `/api/email/verify` (config `dnsServers`); default the system's. */
  dns?: DnsOptions;
  /**
   * Upstreams of the provider endpoints and the hosted vectorizer (config `providers`); default none: the
   * provider endpoints answer 503 and `/api/vectorize` traces locally.
   */
  providers?: ProviderSettings & { vectorizer?: VectorizerAiSettings | null };
  /**
   * How callers' URLs are fetched (pages, probes, vectorize): default the strict policy, public addresses
   * only; the operator's `X402M_FETCH_ALLOW` opens more.
   */
  fetchPolicy?: FetchPolicy;
  /** What a page endpoint's call may spend reading its page, per $0.001 (config `pageBudget`). */
  pageBudget?: PageBudget;
  /** What a data conversion may spend, per $0.001 (config `workBudget`); default 2 CPU-s and 200 MB. */
  workBudget?: WorkBudget;
  /** `/api/store` and `/api/scratchpad`'s quota and clock: default 50 MB a wallet, the real clock (tests shrink it). */
  state?: StateOptions;
}

/** Every endpoint of the utility API that exists, in the price list's order. */
export function utilityEndpoints(options: UtilityOptions = {}): readonly AnyEndpoint[] {
  const all = [
    calc,
    ...dataEndpoints(options.workBudget),
    ...ICON_ENDPOINTS,
    ...lookupEndpoints({ dns: options.dns }),
    ...pageEndpoints({ fetchPolicy: options.fetchPolicy, budget: options.pageBudget }),
    ...probeEndpoints({ policy: options.fetchPolicy }),
    ...providerEndpoints(options.providers ? providersFromSettings(options.providers) : {}),
    ...stateEndpoints(options.state),
    ...vectorizeEndpoints({
      hostedSettings: options.providers?.vectorizer ?? null,
      fetchPolicy: options.fetchPolicy,
    }),
  ];
  const rank = (path: string) => {
    const i = SPEC_ORDER.indexOf(specPathOf(path) ?? "");
    if (i < 0) throw new Error(`${path} is not a path of the utility API's price list`);
    return i;
  };
  // A stable sort keeps each family's own order within one spec path.
  return [...all].sort((a, b) => rank(a.path) - rank(b.path));
}

export interface UtilityHost extends UtilityOptions {
  payTo: `0x${string}`;
  publicUrl: string;
}

export function utilityMerchant(host: UtilityHost): Merchant {
  // Every option goes to the endpoints, none onto the merchant: the page and work budgets were once left in
  // `rest`, so an operator's X402M_PAGE_CPU_MS and X402M_WORK_CPU_MS reached no endpoint.
  const { dns, providers, fetchPolicy, state, pageBudget, workBudget, ...rest } = host;
  return {
    name: "utility",
    title: UTILITY_TITLE,
    guidance: UTILITY_GUIDANCE,
    // Every call may also be paid through a payment channel: many small calls, one deposit (issue 53).
    endpoints: withChannels(utilityEndpoints({ dns, providers, fetchPolicy, state, pageBudget, workBudget })),
    ...rest,
  };
}

export function utilityAliasMerchant(host: UtilityHost): Merchant {
  const {
    dns: _dns,
    providers: _providers,
    fetchPolicy: _fetchPolicy,
    state: _state,
    pageBudget: _pageBudget,
    workBudget: _workBudget,
    ...rest
  } = host;
  return {
    ...aliasOf(utilityMerchant(host), { name: "utility-alias", paths: UTILITY_ALIAS_PATHS, ...rest }),
    guidance: UTILITY_ALIAS_GUIDANCE,
  };
}
