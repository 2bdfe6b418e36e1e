/**
 * `x402-merchants facilitator keys add|list|revoke`: the API keys of the facilitator's own database (PGlite
 * in `<data>/facilitator-postgres`, or DATABASE_URL: the one `facilitator` opens). See docs/facilitator.md,
 * "Access control".
 *
 * - `add --payee ADDR[,ADDR]... | --any-payee --gas-budget-eth-per-day N [--rate N] [--name LABEL]` prints
 *   one JSON line with the key, the only time it is shown (the database keeps its SHA-256).
 * - `list` prints one JSON line per key, revoked ones too: never the key.
 * - `revoke ID` revokes it at once.
 */
import { formatEther, isAddress, parseEther } from "viem";
import { type Database, migrate, openDatabase } from "../common/db/index.ts";
import { UsageError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import { type ApiKey, addKey, FACILITATOR_MIGRATIONS, listKeys, revokeKey } from "../facilitator/index.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/** Settlements a minute when `--rate` is not given: one a second on average, a minute's worth at once. */
export const DEFAULT_RATE_PER_MINUTE = 60;
/** The most `--rate` takes: beyond it a key is no limit at all. */
const MAX_RATE_PER_MINUTE = 100_000;

const KEYS_USAGE =
  "facilitator keys add (--payee ADDR[,ADDR]... | --any-payee) --gas-budget-eth-per-day N [--rate N] [--name LABEL] | keys list | keys revoke ID";

export async function runFacilitatorKeys(args: string[], flags: Flags): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case "add": {
      if (rest.length > 0) throw new UsageError("facilitator keys add takes no arguments, only flags");
      const spec = parseAdd(flags);
      return withDatabase(flags, async (db) => {
        const { key, apiKey } = await addKey(db, spec);
        process.stdout.write(`${JSON.stringify({ ...describe(apiKey), key })}\n`);
        process.stderr.write(
          "x402-merchants facilitator keys: the key is shown this once (the database keeps only its hash): store it now\n",
        );
        return 0;
      });
    }
    case "list":
      if (rest.length > 0) throw new UsageError("facilitator keys list takes no arguments");
      return withDatabase(flags, async (db) => {
        for (const usage of await listKeys(db)) {
          process.stdout.write(
            `${JSON.stringify({
              ...describe(usage),
              today: {
                day: usage.day,
                spentEth: formatEther(usage.spentWei),
                reservedEth: formatEther(usage.reservedWei),
                settlements: Number(usage.settlements),
              },
            })}\n`,
          );
        }
        return 0;
      });
    case "revoke": {
      const [id, ...extra] = rest;
      if (!id || extra.length > 0)
        throw new UsageError("facilitator keys revoke takes one key id (from keys list)");
      return withDatabase(flags, async (db) => {
        const outcome = await revokeKey(db, id);
        if (outcome === "unknown") throw new UsageError(`no key ${id} (keys list shows them)`);
        process.stdout.write(
          `${JSON.stringify({ id, revoked: true, already: outcome === "already revoked" })}\n`,
        );
        return 0;
      });
    }
    default:
      throw new UsageError(`usage: x402-merchants ${KEYS_USAGE}`);
  }
}

/** A key as `add` and `list` print it: never the key itself. */
function describe(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    payees: key.payees ?? "*",
    gasBudgetEthPerDay: formatEther(key.gasBudgetWei),
    ratePerMinute: key.ratePerMinute,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

function parseAdd(flags: Flags) {
  const listed = (flags.payee ?? []).flatMap((p) =>
    p
      .split(",")
      .map((a) => a.trim())
      .filter(Boolean),
  );
  if (listed.includes("*")) {
    throw new UsageError("--payee takes addresses; a key for any payee is --any-payee, said on purpose");
  }
  const bad = listed.find((a) => !isAddress(a, { strict: false }));
  if (bad) throw new UsageError(`--payee must be a wallet address, not "${bad}"`);
  if (flags["any-payee"] && listed.length > 0) throw new UsageError("give --payee or --any-payee, not both");
  if (!flags["any-payee"] && listed.length === 0) {
    throw new UsageError(
      "a key needs the payees it settles for: --payee ADDR (repeat it, or separate with commas), or --any-payee on purpose",
    );
  }
  const budget = flags["gas-budget-eth-per-day"];
  if (budget === undefined) {
    throw new UsageError(
      "a key needs its gas budget: --gas-budget-eth-per-day N, in ETH (e.g. 0.005: the most its settlements may cost the facilitator in a UTC day)",
    );
  }
  if (!/^\d+(\.\d{1,18})?$/.test(budget) || parseEther(budget) === 0n) {
    throw new UsageError(`--gas-budget-eth-per-day takes ETH above 0, such as 0.005, not "${budget}"`);
  }
  const rate = flags.rate ?? String(DEFAULT_RATE_PER_MINUTE);
  if (!/^\d+$/.test(rate) || Number(rate) < 1 || Number(rate) > MAX_RATE_PER_MINUTE) {
    throw new UsageError(`--rate takes settlements a minute, 1 to ${MAX_RATE_PER_MINUTE}, not "${rate}"`);
  }
  return {
    name: flags.name ?? "",
    payees: flags["any-payee"] ? null : [...new Set(listed.map((a) => a.toLowerCase()))],
    gasBudgetWei: parseEther(budget),
    ratePerMinute: Number(rate),
  };
}

/** The facilitator's database, opened as `facilitator` opens it, migrated, closed after `fn`. */
async function withDatabase(flags: Flags, fn: (db: Database) => Promise<number>): Promise<number> {
  const config = configFrom({ ...flags, port: undefined });
  const db = await openDatabase({
    pgliteDir: dataLayout(config.dataDir).pglite.facilitator,
    databaseUrl: config.databaseUrl,
  });
  try {
    await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
    return await fn(db);
  } finally {
    await db.close();
  }
}
