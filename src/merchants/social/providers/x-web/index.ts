/** The social provider over X's web GraphQL API (`x-web`). */
export type { XAccount } from "./accounts.ts";
export type { XWebOptions } from "./client.ts";
export { DEFAULT_QUERY_IDS, type Operation } from "./operations.ts";
export { xWebProvider } from "./provider.ts";
