/**
 * A running process's admin paths on loopback, for the commands that cannot open its PGlite directory
 * beside it (PGlite allows one process per directory): the process writes a record (`<data>/<name>-admin.json`,
 * readable by its own user only) with its address, pid and a token, and answers `/admin/*` to loopback
 * callers that send the token. The facilitator's keys (facilitator-admin.ts) and the merchants' channels
 * (channel-admin.ts) use it; apart from both, so that a merchant host loads nothing of the facilitator.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { type Context, Hono } from "hono";
import { errorBody } from "../common/errors.ts";
import { type Fetch, isLoopback } from "../common/listen.ts";
import { processAlive } from "../common/process.ts";
import { plainAddress, remoteAddressOf } from "../common/rate-limit.ts";

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
