/**
 * Liveness apart from readiness, on every service (docs/observability-logs-health.md):
 *
 * - `GET /livez`: 200 `{"status": "ok"}` whenever the process answers; nothing else is asked. A supervisor
 *   restarts a process that stops answering it.
 * - `GET /readyz`: 200 `{"status": "ready", "checks": {...}}` when the service can do its job, 503
 *   `{"status": "not_ready", ...}` when one of its checks fails, each check `{"ok": true, ...}` or
 *   `{"ok": false, "reason": "..."}`. A load balancer sends no traffic to a service that is not ready: a
 *   merchant host whose facilitator is down is live, and not ready, and says why.
 *
 * Checks are cheap to ask often: each runs its probe at most once per `keepMs`, callers meanwhile share its
 * answer, and a probe that has not answered within `waitMs` leaves the last answer standing (a PGlite
 * database busy with a settlement's transaction is not a database that is down) until its own `timeoutMs`
 * fails it. Registered before the unpaid limit, they are never refused as unpaid traffic.
 */
import type { Hono } from "hono";
import { abortable } from "./abortable.ts";
import { AppError } from "./errors.ts";
import { log } from "./log.ts";
import { timeoutSignal } from "./timeout-signal.ts";

/** One check's answer: ok, or why not; details beside (a block number, a lag). */
export interface Check {
  ok: boolean;
  reason?: string;
  [detail: string]: unknown;
}

export type CheckFn = () => Promise<Check>;

export interface Readiness {
  status: "ready" | "not_ready";
  checks: Record<string, Check>;
}

export interface CheckOptions {
  /** How long an answer is reused. Default 5 s. */
  keepMs?: number;
  /** How long a caller waits for a probe under way before the last answer is given instead. Default 2 s. */
  waitMs?: number;
  /** When a probe that has not answered fails. Default 10 s. */
  timeoutMs?: number;
}

/**
 * A check made of `probe`, which resolves with details when the dependency answers and throws why it does
 * not (its signal aborts at the time-out). A change of state is logged, with the whole reason (`warn` when
 * it starts failing, `info` when it is ok again).
 *
 * @example
 *   const database = cachedCheck("database", async () => { await db.query("SELECT 1"); });
 *   healthRoutes(app, { database });
 */
export function cachedCheck(
  name: string,
  probe: (signal: AbortSignal) => Promise<unknown>,
  options: CheckOptions = {},
): CheckFn {
  const keepMs = options.keepMs ?? 5_000;
  const waitMs = options.waitMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let last: Check | undefined;
  let running: Promise<Check> | undefined;
  let answeredAt = Number.NEGATIVE_INFINITY;

  const run = async (): Promise<Check> => {
    const signal = timeoutSignal(timeoutMs);
    let check: Check;
    let failure: unknown;
    try {
      const details = await abortable(probe(signal), signal).catch((error: unknown) => {
        throw signal.aborted ? new Error(`no answer within ${timeoutMs} ms`) : error;
      });
      check = { ok: true, ...(typeof details === "object" ? details : undefined) };
    } catch (error) {
      failure = error;
      check = { ok: false, reason: reasonOf(error) };
    }
    if (check.ok !== (last?.ok ?? true)) {
      if (check.ok) log("info", "readiness check ok again", { check: name });
      // The error itself: an operator's message (a database's) may say more than the reason shown to all.
      else log("warn", "readiness check failing", { check: name, reason: check.reason, error: failure });
    }
    last = check;
    answeredAt = performance.now();
    running = undefined;
    return check;
  };

  return async () => {
    if (!running && performance.now() - answeredAt > keepMs) running = run();
    if (!running) return last as Check;
    const standing = last ?? { ok: false, reason: `no answer yet after ${waitMs} ms` };
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<Check>((resolve) => {
      timer = setTimeout(() => resolve(standing), waitMs);
    });
    try {
      return await Promise.race([running, waited]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Every check's answer, asked together; ready when all are ok. */
export async function readiness(checks: Record<string, CheckFn>): Promise<Readiness> {
  const names = Object.keys(checks);
  const answers = await Promise.all(names.map((name) => (checks[name] as CheckFn)()));
  const result: Record<string, Check> = {};
  names.forEach((name, i) => {
    result[name] = answers[i] as Check;
  });
  return { status: answers.every((a) => a.ok) ? "ready" : "not_ready", checks: result };
}

/**
 * `GET /livez` and `GET /readyz` on `app`, with `checks` deciding readiness (read when asked: a service may
 * add one once it has started a part, such as the report service's indexer). Register them before the
 * unpaid limit and before `answerEveryMethod`.
 */
export function healthRoutes(
  // biome-ignore lint/suspicious/noExplicitAny: any app, whatever its variables.
  app: Hono<any>,
  checks: Record<string, CheckFn> | (() => Record<string, CheckFn>),
): void {
  app.get("/livez", (c) => {
    c.header("Cache-Control", "no-store");
    return c.json({ status: "ok" });
  });
  app.get("/readyz", async (c) => {
    const ready = await readiness(typeof checks === "function" ? checks() : checks);
    c.header("Cache-Control", "no-store");
    return c.json(ready, ready.status === "ready" ? 200 : 503);
  });
}

/** A reason as a reader of `/readyz` may see it: an error's first line, an operator's message kept back. */
function reasonOf(error: unknown): string {
  if (error instanceof AppError && error.publicMessage !== undefined) return error.publicMessage;
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").slice(0, 300) || "failed";
}

/**
 * A JSON-RPC call with a time-out, for the chain checks: `eth_blockNumber` is the cheapest question a node
 * answers. Throws what went wrong in a few words (refused, timed out, the node's error).
 */
export async function rpcCall(
  url: string,
  method: string,
  params: unknown[],
  signal: AbortSignal,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new Error(`the chain's RPC cannot be reached${cause ? ` (${cause})` : ""}`);
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`the chain's RPC answered HTTP ${response.status}`);
  const body = JSON.parse(text) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`the chain's RPC refused ${method}: ${body.error.message ?? "error"}`);
  return body.result;
}

/** A check of the chain at `url` (`name` in the log): it answers `eth_blockNumber`; its block, as details. */
export function chainCheck(url: string, name = "chain", options?: CheckOptions): CheckFn {
  return cachedCheck(
    name,
    async (signal) => ({
      block: Number(BigInt((await rpcCall(url, "eth_blockNumber", [], signal)) as string)),
    }),
    { timeoutMs: 3_000, ...options },
  );
}
