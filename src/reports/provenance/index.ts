/**
 * Where the money that paid a merchant came from, what the week's aggregates (week/aggregates.ts) take of
 * it: the clusters of wallets that act as one (`clusters.ts`, with the hubs not followed) and the
 * merchant_funded pass (`funded-pass.ts`: FIFO attribution over the transfers, `provenance-ledger.ts`).
 */
export { CLUSTER_TABLES, clusters } from "./clusters.ts";
export { PROVENANCE_TABLES, provenance } from "./funded-pass.ts";
