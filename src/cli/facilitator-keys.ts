/**
 * `x402-merchants facilitator keys add|list|revoke`: the API keys of the facilitator's own database (PGlite
 * in `<data>/facilitator-postgres`, or DATABASE_URL: the one `facilitator` opens). See docs/facilitator.md,
 * "Access control".
 *
 * - `add --payee ADDR[,ADDR]... | --any-payee --gas-budget-eth-per-day N [--rate N] [--name LABEL]` prints
 *   one JSON line with the key, the only time it is shown (the database keeps its SHA-256).
 * - `list` prints one JSON line per key, revoked ones too: never the key.
 * - `revoke ID` revokes it at once.
 *
 * They work while the facilitator runs: on a PostgreSQL server as any tool beside a server does, on PGlite
 * through the running facilitator (services/facilitator-admin.ts).
 */
import { isAddress, parseEther } from "viem";
import { chains } from "../chain/chains.ts";
import { type Database, DatabaseBusyError, migrate, openDatabase } from "../common/db/index.ts";
import { UsageError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import { FACILITATOR_MIGRATIONS } from "../facilitator/index.ts";
import type { AdminRecord, KeySpec } from "../services/index.ts";
import { adminCaller, adminJson } from "./admin-client.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

/** Settlements a minute when `--rate` is not given: one a second on average, a minute's worth at once. */
export const DEFAULT_RATE_PER_MINUTE = 60;
/** The most `--rate` takes: beyond it a key is no limit at all. */
const MAX_RATE_PER_MINUTE = 100_000;

const KEYS_USAGE =
  "facilitator keys add (--payee ADDR[,ADDR]... | --any-payee) --gas-budget-eth-per-day N [--chain-gas-budget CHAIN=N]... [--rate N] [--name LABEL] | keys list | keys revoke ID";

export async function runFacilitatorKeys(args: string[], flags: Flags): Promise<number> {
  const [action, ...rest] = args;
  const print = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
  switch (action) {
    case "add": {
      if (rest.length > 0) throw new UsageError("facilitator keys add takes no arguments, only flags");
      const spec = parseAdd(flags);
      return withKeys(flags, async (keys) => {
        print(await keys.add(spec));
        process.stderr.write(
          "x402-merchants facilitator keys: the key is shown this once (the database keeps only its hash): store it now\n",
        );
        return 0;
      });
    }
    case "list":
      if (rest.length > 0) throw new UsageError("facilitator keys list takes no arguments");
      return withKeys(flags, async (keys) => {
        for (const line of await keys.list()) print(line);
        return 0;
      });
    case "revoke": {
      const [id, ...extra] = rest;
      if (!id || extra.length > 0)
        throw new UsageError("facilitator keys revoke takes one key id (from keys list)");
      return withKeys(flags, async (keys) => {
        const line = await keys.revoke(id);
        if (!line) throw new UsageError(`no key ${id} (keys list shows them)`);
        print(line);
        return 0;
      });
    }
    default:
      throw new UsageError(`usage: x402-merchants ${KEYS_USAGE}`);
  }
}

/** The three actions, on the database or through the running facilitator. */
interface Keys {
  add(spec: KeySpec): Promise<unknown>;
  list(): Promise<unknown[]>;
  revoke(id: string): Promise<unknown | undefined>;
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
    gasBudgetWei: parseEther(budget).toString(),
    ...(flags["chain-gas-budget"] && { chainGasBudgetsWei: chainBudgets(flags["chain-gas-budget"]) }),
    ratePerMinute: Number(rate),
  };
}

/** `--chain-gas-budget polygon=20 ...`: each chain's own budget, by its CAIP-2 network, in wei of its coin. */
function chainBudgets(given: readonly string[]): Record<string, string> {
  const budgets: Record<string, string> = {};
  for (const pair of given) {
    const [slug = "", amount = ""] = pair.split("=").map((part) => part.trim());
    const chain = chains.list.find((c) => c.slug === slug);
    if (!chain)
      throw new UsageError(
        `--chain-gas-budget takes CHAIN=N with CHAIN one of ${chains.list.map((c) => c.slug).join(", ")}, not "${pair}"`,
      );
    if (!/^\d+(\.\d{1,18})?$/.test(amount) || parseEther(amount) === 0n)
      throw new UsageError(
        `--chain-gas-budget ${slug}= takes ${chain.coin} above 0, such as 20, not "${amount}"`,
      );
    budgets[chain.caip2] = parseEther(amount).toString();
  }
  return budgets;
}

/**
 * The facilitator's keys: its database, opened as `facilitator` opens it and migrated, closed after `fn`; or,
 * where a running facilitator holds its PGlite directory, that facilitator's `/admin/keys` on loopback
 * (services/facilitator-admin.ts).
 */
async function withKeys(flags: Flags, fn: (keys: Keys) => Promise<number>): Promise<number> {
  const config = configFrom({ ...flags, port: undefined });
  const { keyActions, readAdminRecord } = await import("../services/index.ts");
  let db: Database;
  try {
    db = await openDatabase({
      pgliteDir: dataLayout(config.dataDir).pglite.facilitator,
      databaseUrl: config.databaseUrl,
    });
  } catch (error) {
    const running = error instanceof DatabaseBusyError ? readAdminRecord(config.dataDir) : undefined;
    if (!running) throw error;
    return fn(adminKeys(running));
  }
  try {
    await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
    return await fn({
      add: (spec) => keyActions.add(db, spec),
      list: () => keyActions.list(db),
      revoke: (id) => keyActions.revoke(db, id),
    });
  } finally {
    await db.close();
  }
}

/** The actions through a running facilitator's `/admin/keys`. */
function adminKeys(running: AdminRecord): Keys {
  const call = adminCaller(running, "facilitator");
  const json = (answer: Response) => adminJson(answer, "facilitator");
  return {
    add: async (spec) => json(await call("POST", "/admin/keys", spec)),
    list: async () => (await json(await call("GET", "/admin/keys"))) as unknown[],
    revoke: async (id) => {
      const answer = await call("POST", `/admin/keys/${encodeURIComponent(id)}/revoke`);
      if (answer.status === 404) return undefined;
      return json(answer);
    },
  };
}
