/**
 * `x402-merchants channels list|claim|refund`: the merchants' open payment channels, for an operator
 * (docs/platform.md, "Channels operated"). Each prints JSON lines.
 *
 * - `list [--merchant NAME]...`: per open channel its payer, balance, what was charged, claimed and not yet
 *   claimed, and the seconds until a withdrawal could take the unclaimed money;
 * - `claim [--merchant NAME]...`: claims every channel that owes now, as the schedule does;
 * - `refund --payer ADDR [--merchant NAME]...`: refunds that payer's channels (what they hold beyond their charges).
 *
 * On the merchants' database (PGlite in `<data>`, or DATABASE_URL: the one `serve` opens); while a running
 * `serve` holds its PGlite directory, through that process (services/channel-admin.ts).
 */
import { isAddress } from "viem";
import { type Database, DatabaseBusyError, migrate, openDatabase } from "../common/db/index.ts";
import { UsageError } from "../common/errors.ts";
import { dataLayout } from "../config/layout.ts";
import type { ChannelActions, ChannelRequest } from "../services/index.ts";
import { adminCaller, adminJson } from "./admin-client.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";

type Action = "list" | "claim" | "refund";

export async function runChannels(args: string[], flags: Flags): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "list" && action !== "claim" && action !== "refund")
    throw new UsageError(
      "usage: x402-merchants channels list | claim | refund --payer ADDR [--merchant NAME]",
    );
  if (rest.length > 0) throw new UsageError(`channels ${action} takes no arguments, only flags`);
  const merchants = (flags.merchant ?? []).flatMap((m) =>
    m
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean),
  );
  // `--merchant ,` names no merchant, which would read as every merchant (args.ts refuses `--merchant ""`).
  if (flags.merchant !== undefined && merchants.length === 0)
    throw new UsageError(`--merchant names no merchant: "${flags.merchant.join(",")}"`);
  const request: ChannelRequest = { ...(merchants.length > 0 && { merchants }) };
  if (action === "refund") {
    if (!flags.payer) throw new UsageError("channels refund needs the payer: --payer ADDR");
    if (!isAddress(flags.payer, { strict: false }))
      throw new UsageError(`--payer must be a wallet address, not "${flags.payer}"`);
    request.payer = flags.payer;
  }
  const lines = await withChannels(flags, action, request);
  for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
  return 0;
}

/** `action` on the merchants' database, or through the process holding its PGlite directory. */
async function withChannels(flags: Flags, action: Action, request: ChannelRequest): Promise<unknown[]> {
  const config = configFrom({ ...flags, port: undefined });
  const services = await import("../services/index.ts");
  let db: Database;
  try {
    db = await openDatabase({
      pgliteDir: dataLayout(config.dataDir).pglite.merchants,
      databaseUrl: config.databaseUrl,
    });
  } catch (error) {
    const running =
      error instanceof DatabaseBusyError
        ? services.readAdminRecord(config.dataDir, services.MERCHANTS_ADMIN)
        : undefined;
    if (!running) throw error;
    const call = adminCaller(running, "merchants");
    const answer =
      action === "list"
        ? await call("GET", `/admin/channels${query(request)}`)
        : await call("POST", `/admin/channels/${action}`, request);
    if (answer.status === 400) {
      const refusal = (await answer.json()) as { error: { message: string } };
      throw new UsageError(refusal.error.message);
    }
    return (await adminJson(answer, "merchants")) as unknown[];
  }
  try {
    // As `serve` migrates it: a store older than its channels' table is brought to it, never read half-made.
    const { KIT_MIGRATIONS, KIT_MODULE } = await import("../merchant-kit/migrations.ts");
    await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
    const actions: ChannelActions = services.configuredChannelActions(config, db);
    return await actions[action](request);
  } catch (error) {
    if (error instanceof services.ChannelRequestError) throw new UsageError(error.message);
    throw error;
  } finally {
    await db.close();
  }
}

function query(request: ChannelRequest): string {
  const merchants = request.merchants ?? [];
  return merchants.length === 0
    ? ""
    : `?${merchants.map((m) => `merchant=${encodeURIComponent(m)}`).join("&")}`;
}
