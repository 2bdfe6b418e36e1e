/**
 * `facilitator keys add|list|revoke` while the facilitator runs (docs/facilitator.md, "API keys"). With a
 * PostgreSQL server (DATABASE_URL) the command opens the database itself, as any tool beside a running server
 * does. PGlite allows one process per directory, so there the running facilitator (`facilitator`, `devnet`)
 * does it for the command: it answers `/admin/keys` to loopback callers that send the admin token it wrote,
 * with its address and pid, to `<data>/facilitator-admin.json` (readable by its own user only); the command
 * finds the directory held, reads that record and asks. What it prints is the same either way.
 *
 * `withAdmin` and the record (admin.ts) are the same for the merchants' state (`channels`,
 * services/channel-admin.ts): another record name, other paths.
 */
import { formatEther } from "viem";
import type { Database } from "../common/db/index.ts";
import { errorBody } from "../common/errors.ts";
import type { Fetch } from "../common/listen.ts";
import { type ApiKey, addKey, listKeys, revokeKey } from "../facilitator/index.ts";
import { withAdmin } from "./admin.ts";

/** A new key as the command asks for it, in JSON (the budget in wei, as a decimal string). */
export interface KeySpec {
  name: string;
  payees: readonly string[] | null;
  gasBudgetWei: string;
  /** Another budget on some chains: CAIP-2 network -> wei of that chain's coin. */
  chainGasBudgetsWei?: Record<string, string>;
  ratePerMinute: number;
}

/** A key as `add` and `list` print it: never the key itself. */
function described(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    payees: key.payees ?? "*",
    gasBudgetEthPerDay: formatEther(key.gasBudgetWei),
    // A chain's own budget, in its coin (POL on Polygon), where one was given.
    ...(Object.keys(key.chainGasBudgetsWei).length > 0 && {
      chainGasBudgetsPerDay: Object.fromEntries(
        Object.entries(key.chainGasBudgetsWei).map(([network, wei]) => [network, formatEther(wei)]),
      ),
    }),
    ratePerMinute: key.ratePerMinute,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

/** What the three actions print, each line a JSON object: from the database itself. */
export const keyActions = {
  async add(db: Database, spec: KeySpec) {
    const newKey: Parameters<typeof addKey>[1] = {
      ...spec,
      gasBudgetWei: BigInt(spec.gasBudgetWei),
      chainGasBudgetsWei: Object.fromEntries(
        Object.entries(spec.chainGasBudgetsWei ?? {}).map(([network, wei]) => [network, BigInt(wei)]),
      ),
    };
    const { key, apiKey } = await addKey(db, newKey);
    return { ...described(apiKey), key };
  },
  async list(db: Database) {
    return (await listKeys(db)).map((usage) => ({
      ...described(usage),
      today: {
        day: usage.day,
        spentEth: formatEther(usage.spentWei),
        reservedEth: formatEther(usage.reservedWei),
        settlements: Number(usage.settlements),
        // Each chain's day apart, in its own coin, where the key settled on any: the sum above mixes coins.
        chains: Object.fromEntries(
          Object.entries(usage.chains).map(([network, day]) => [
            network,
            {
              spent: formatEther(day.spentWei),
              reserved: formatEther(day.reservedWei),
              settlements: Number(day.settlements),
            },
          ]),
        ),
      },
    }));
  },
  async revoke(db: Database, id: string) {
    const outcome = await revokeKey(db, id);
    return outcome === "unknown" ? undefined : { id, revoked: true, already: outcome === "already revoked" };
  },
};

/** The facilitator's fetch with `/admin/keys` in front (`withAdmin`), on `db`. */
export function withKeyAdmin(fetch: Fetch, db: Database): { fetch: Fetch; token: string } {
  return withAdmin(fetch, (admin) => {
    admin.get("/admin/keys", async (c) => c.json(await keyActions.list(db)));
    admin.post("/admin/keys", async (c) => c.json(await keyActions.add(db, (await c.req.json()) as KeySpec)));
    admin.post("/admin/keys/:id/revoke", async (c) => {
      const line = await keyActions.revoke(db, c.req.param("id"));
      return line
        ? c.json(line)
        : c.json(errorBody("unknown_key", `no key ${c.req.param("id")} (keys list shows them)`), 404);
    });
  });
}
