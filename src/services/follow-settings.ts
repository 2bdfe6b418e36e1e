/**
 * The chains `serve` follows besides the one `--rpc` names (issue 67, item 3): one JSON-RPC per chain,
 * `X402M_RPC_URL_<SLUG>` (X402M_RPC_URL_BASE, X402M_RPC_URL_POLYGON, X402M_RPC_URL_ARBITRUM; a chain added
 * to src/chain/chains.ts gets its own). Each gets its indexer into the one analytics database, and its reports
 * stay current under its slug. `X402M_RPC_URL` alone is the merchants' chain for payers' balances, as before:
 * it starts no indexer.
 */
import { z } from "zod";
import { chains } from "../chain/chains.ts";
import type { Section } from "../config/section.ts";
import { chainRpcVariable } from "../config/values.ts";

/** The variable that gives `slug`'s RPC to follow (the merchants' further networks read it too). */
export const followVariable = chainRpcVariable;

const FollowSchema = z.object({
  follow: z.object({
    /** A JSON-RPC URL by chain slug, for each chain given one. */
    rpc: z.record(z.string(), z.url({ protocol: /^https?$/, error: "an http(s) JSON-RPC URL" })),
  }),
});

export type FollowSettings = z.infer<typeof FollowSchema>["follow"];

export const followSection: Section<typeof FollowSchema> = {
  schema: FollowSchema,
  read: ({ env }) => ({
    follow: {
      rpc: Object.fromEntries(
        chains.list.flatMap((chain) => {
          const url = env[followVariable(chain.slug)]?.trim();
          return url ? [[chain.slug, url]] : [];
        }),
      ),
    },
  }),
  settingOf: ([head, second, slug]) =>
    head === "follow" && second === "rpc" && slug ? followVariable(slug) : undefined,
};
