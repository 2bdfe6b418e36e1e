/**
 * `facilitator keys add|list|revoke` while the facilitator runs (docs/facilitator.md, "API keys"). With a
 * PostgreSQL server (DATABASE_URL) the command opens the database itself, as any tool beside a running server
 * does. PGlite allows one process per directory, so there the running facilitator (`facilitator`, `devnet`)
 * does it for the command: it answers `/admin/keys` to loopback callers that send the admin token it wrote,
 * with its address and pid, to `<data>/facilitator-admin.json` (readable by its own user only); the command
 * finds the directory held, reads that record and asks. What it prints is the same either way.
 *
 * `withAdmin` and the record are the same for the merchants' state (`channels`, services/channel-admin.ts):
 * another record name, other paths.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type Context, Hono } from "hono";
import { formatEther } from "viem";
import type { Database } from "../common/db/index.ts";
import { errorBody } from "../common/errors.ts";
import { type Fetch, isLoopback } from "../common/listen.ts";
import { processAlive } from "../common/process.ts";
import { plainAddress, remoteAddressOf } from "../common/rate-limit.ts";
import { type ApiKey, addKey, listKeys, revokeKey } from "../facilitator/index.ts";

/** A new key as the command asks for it, in JSON (the budget in wei, as a decimal string). */
export interface KeySpec {
  name: string;
  payees: readonly string[] | null;
  gasBudgetWei: string;
  ratePerMinute: number;
}

/** A key as `add` and `list` print it: never the key itself. */
function described(key: ApiKey) {
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

/** What the three actions print, each line a JSON object: from the database itself. */
export const keyActions = {
  async add(db: Database, spec: KeySpec) {
    const newKey: Parameters<typeof addKey>[1] = { ...spec, gasBudgetWei: BigInt(spec.gasBudgetWei) };
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
      },
    }));
  },
  async revoke(db: Database, id: string) {
    const outcome = await revokeKey(db, id);
    return outcome === "unknown" ? undefined : { id, revoked: true, already: outcome === "already revoked" };
  },
};

/**
 * Where a running process on PGlite says how to reach its admin paths: `facilitator-admin.json` for the
 * facilitator's keys, `merchants-admin.json` for the merchants' channels.
 */
export function adminRecordFile(dataDir: string, name = "facilitator"): string {
  return path.join(dataDir, `${name}-admin.json`);
}

export interface AdminRecord {
  pid: number;
  url: string;
  token: string;
}

/**
 * `fetch` (404 without one) with the paths `mount` adds to `/admin/*` in front: for loopback callers with the
 * admin token only (a 404 for others, as if there were none). Returns the fetch and the token.
 */
export function withAdmin(
  fetch: Fetch | undefined,
  mount: (admin: Hono) => void,
): { fetch: Fetch; token: string } {
  const token = crypto.randomBytes(32).toString("base64url");
  const admin = new Hono();
  const allowed = (c: Context) => {
    const peer = remoteAddressOf(c);
    const address = peer === undefined ? undefined : plainAddress(peer);
    const sent = c.req.header("authorization") ?? "";
    const expected = `Bearer ${token}`;
    return (
      address !== undefined &&
      isLoopback(address) &&
      sent.length === expected.length &&
      crypto.timingSafeEqual(Buffer.from(sent), Buffer.from(expected))
    );
  };
  admin.use("/admin/*", async (c, next) => {
    if (!allowed(c)) return c.json(errorBody("not_found", `${c.req.path}: no such path`), 404);
    return next();
  });
  mount(admin);
  admin.all("*", (c) =>
    fetch ? fetch(c.req.raw, c.env) : c.json(errorBody("not_found", `${c.req.path}: no such path`), 404),
  );
  return { fetch: (request, env) => admin.fetch(request, env), token };
}

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

/** Writes the record, readable by this user only; returns how to remove it (if still this process's). */
export function writeAdminRecord(dataDir: string, record: AdminRecord, name = "facilitator"): () => void {
  const file = adminRecordFile(dataDir, name);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return () => {
    if (readAdminRecord(dataDir, name)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
}

/** The running process's record `name` of `dataDir`, or undefined (none, or its process is gone). */
export function readAdminRecord(dataDir: string, name = "facilitator"): AdminRecord | undefined {
  let record: AdminRecord;
  try {
    record = JSON.parse(fs.readFileSync(adminRecordFile(dataDir, name), "utf8")) as AdminRecord;
  } catch {
    return undefined;
  }
  return processAlive(record.pid) ? record : undefined;
}
