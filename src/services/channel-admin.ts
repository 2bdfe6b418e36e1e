/**
 * `x402-merchants channels list|claim|refund` (docs/platform.md, "Channels operated"): the merchants' open
 * payment channels, a claim now, a payer's refund, on the merchants' state database. With a PostgreSQL server
 * the command opens it itself, as a tool beside a running server does; on PGlite, which one process holds, the
 * running `serve` (or `devnet`, the demo) does it for the command, through the same loopback admin paths and
 * token record as `facilitator keys` (services/admin.ts), here `<data>/merchants-admin.json`.
 * A claim or refund goes as the schedule's do: through the merchants' facilitators, signed by a merchant's own
 * authorizer key where its channels name it.
 */
import type { Context } from "hono";
import { formatUnits, isAddress } from "viem";
import type { Database } from "../common/db/index.ts";
import { errorBody } from "../common/errors.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import type { Merchant } from "../merchant-kit/index.ts";
import { type ChannelSchedule, openChannels, walletSchedules } from "../merchant-kit/index.ts";
import { withAdmin, writeAdminRecord } from "./admin.ts";
import { listenOn } from "./listen.ts";

/** The record a running process on PGlite writes for `channels` (`adminRecordFile(dir, MERCHANTS_ADMIN)`). */
export const MERCHANTS_ADMIN = "merchants";

/** A wallet whose channels the operator acts on: the hosts paid to it and its claim schedule. */
export interface ChannelTarget {
  names: string[];
  receiver: `0x${string}`;
  schedule: ChannelSchedule;
}

/** What `channels` asks: the merchants it names (host names; every one without), and for a refund the payer. */
export interface ChannelRequest {
  merchants?: readonly string[];
  payer?: string;
}

/** One target per wallet of `merchants`, with a schedule built as the running one is (not started). */
export function channelTargets(
  merchants: readonly Pick<Merchant, "name" | "payTo" | "channelAuthorizer">[],
  options: Parameters<typeof walletSchedules>[1],
): ChannelTarget[] {
  const names = new Map<string, string[]>();
  for (const m of merchants) {
    const receiver = m.payTo.toLowerCase();
    names.set(receiver, [...(names.get(receiver) ?? []), m.name]);
  }
  return walletSchedules(merchants, options).map((schedule) => ({
    names: names.get(schedule.receiver) ?? [],
    receiver: schedule.receiver,
    schedule,
  }));
}

/** A refusal of what was asked, in one line (400 over the admin path, exit 2 on the command line). */
export class ChannelRequestError extends Error {}

function chosen(targets: readonly ChannelTarget[], request: ChannelRequest): ChannelTarget[] {
  const wanted = request.merchants ?? [];
  const unknown = wanted.filter((name) => !targets.some((t) => t.names.includes(name)));
  if (unknown.length > 0) {
    const known = targets.flatMap((t) => t.names).join(", ") || "none";
    throw new ChannelRequestError(
      `no merchant ${unknown.join(", ")} with a wallet here (merchants with a wallet: ${known})`,
    );
  }
  return wanted.length === 0 ? [...targets] : targets.filter((t) => t.names.some((n) => wanted.includes(n)));
}

/** The three actions, each a list of JSON lines, on the merchants' database and their facilitators. */
export function channelActions(db: Database, targets: readonly ChannelTarget[], decimals: number) {
  const money = (atomic: bigint) => formatUnits(atomic, decimals);
  const severalNetworks = new Set(targets.map((t) => t.schedule.network)).size > 1;
  return {
    async list(request: ChannelRequest) {
      const of = chosen(targets, request);
      const now = Date.now();
      const channels = await openChannels(
        db,
        request.merchants?.length ? of.map((t) => t.receiver) : undefined,
      );
      return channels.map((c) => ({
        merchant: targets.find((t) => t.receiver === c.receiver)?.names.join(",") ?? null,
        receiver: c.receiver,
        channel: c.channel,
        payer: c.payer,
        balance: money(c.balance),
        charged: money(c.charged),
        claimed: money(c.claimed),
        unclaimed: money(c.unclaimed),
        withdrawing: c.withdrawing,
        withdrawalEndsInSeconds:
          c.withdrawalEndsMs === null ? null : Math.floor((c.withdrawalEndsMs - now) / 1000),
      }));
    },
    async claim(request: ChannelRequest) {
      const lines = [];
      for (const target of chosen(targets, request)) {
        const report = await target.schedule.claimNow();
        if (report.error)
          throw new Error(`claiming ${target.names.join(",")}'s channels failed: ${report.error}`);
        lines.push({
          merchant: target.names.join(","),
          receiver: target.receiver,
          // Where a host is paid on several networks, a line per network.
          ...(severalNetworks && { network: target.schedule.network }),
          ...(report.idle === "leased" && {
            busy: "its claim schedule is claiming now: ask again in a minute",
          }),
          channels: report.claimed?.channels ?? [],
          transactions: report.claimed?.transactions ?? [],
        });
      }
      return lines;
    },
    async refund(request: ChannelRequest) {
      const payer = request.payer;
      if (!payer || !isAddress(payer, { strict: false }))
        throw new ChannelRequestError(`--payer must be a wallet address, not "${payer ?? ""}"`);
      const lines = [];
      for (const target of chosen(targets, request)) {
        const outcome = await target.schedule.refundPayer(payer);
        if (outcome.idle === "nothing") continue;
        lines.push({
          merchant: target.names.join(","),
          receiver: target.receiver,
          // Where a host is paid on several networks, a line per network.
          ...(severalNetworks && { network: target.schedule.network }),
          payer: payer.toLowerCase(),
          refunded: outcome.refunded,
          ...(outcome.idle === "leased" && {
            busy: "its claim schedule is claiming now: ask again in a minute",
          }),
          ...(outcome.busy.length > 0 && { busyChannels: outcome.busy }),
        });
      }
      if (lines.length === 0) throw new ChannelRequestError(`payer ${payer} has no open channel here`);
      return lines;
    },
  };
}

export type ChannelActions = ReturnType<typeof channelActions>;

/**
 * On PGlite, the admin paths `channels` asks through: a listener of its own on loopback (never beside the
 * merchants' public ports), and the record that says where, removed on the way out.
 */
export async function serveChannelAdmin(
  dataDir: string,
  actions: ChannelActions,
  lifecycle: Lifecycle,
): Promise<void> {
  const answer = async (c: Context, run: (request: ChannelRequest) => Promise<unknown[]>) => {
    try {
      const body = c.req.method === "GET" ? {} : ((await c.req.json().catch(() => ({}))) as ChannelRequest);
      const merchants = c.req.queries("merchant") ?? body.merchants;
      return c.json(await run({ ...body, merchants }));
    } catch (error) {
      if (error instanceof ChannelRequestError) return c.json(errorBody("bad_request", error.message), 400);
      return c.json(errorBody("channel_action_failed", (error as Error).message), 502);
    }
  };
  const admin = withAdmin(undefined, (app) => {
    app.get("/admin/channels", (c) => answer(c, actions.list));
    app.post("/admin/channels/claim", (c) => answer(c, actions.claim));
    app.post("/admin/channels/refund", (c) => answer(c, actions.refund));
  });
  const server = await listenOn("merchants admin", admin.fetch, "127.0.0.1", 0);
  lifecycle.add("merchants admin http", () => server.close());
  const remove = writeAdminRecord(
    dataDir,
    { pid: process.pid, url: `http://127.0.0.1:${server.port}`, token: admin.token },
    MERCHANTS_ADMIN,
  );
  lifecycle.add("merchants admin record", () => remove());
}
