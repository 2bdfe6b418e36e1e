/**
 * One line per request, and the request's id on every line written while it is served
 * (docs/observability-logs-health.md).
 *
 * Each request gets an id: the caller's `X-Request-Id` when it is well formed (a proxy in front, or a client,
 * names its requests), else a random UUID. It is echoed in the answer's `X-Request-Id`, and the rest of the
 * request runs in a log context (log.ts), so every line written meanwhile carries `request_id`, the
 * facilitator's when it is called in process and the upstream providers' included. A merchant host sends
 * it to an HTTP facilitator (payments/facilitators/failover.ts), whose own request line then has the same id. It is
 * never sent to third-party upstreams (a language model, a search API): an id is ours to correlate our
 * lines, and says nothing an upstream needs.
 *
 * When the answer is done the line is written at `info` (health checks' and 429s' at `debug`, so neither a
 * load balancer polling every second nor a flood the unpaid limit refuses fills the log): `{"msg": "request", service, request_id, method, route,
 * path, status, duration_ms, client}`, and on a paid route the payment's `payer`, `scheme`, `amount` (atomic
 * units), `transaction` and `network` once the facilitator has settled it (`notePayment`). A streamed
 * answer's line waits for the stream's end (`holdRequestLine`), and says how it ended. Never a header.
 *
 * The same middleware counts the request in the HTTP metrics (metrics.ts), by route pattern, never by
 * path: what no route matched is `unmatched`.
 *
 * Written here rather than taken from `hono/request-id`: that one sets its header before the rest runs,
 * which makes Hono copy every answer a later middleware returns whole (the unpaid limit's refusals), and
 * it has no context for the lines written meanwhile.
 */
import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import {
  type LogContext,
  type LogFields,
  type LogLevel,
  log,
  logContext,
  logs,
  withLogContext,
} from "./log.ts";
import { httpRequestSeconds, httpRequests } from "./metrics.ts";
import { plainAddress, remoteAddressOf, type UnpaidLimit } from "./rate-limit.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";

/** An id a caller may choose: short, and nothing a log reader or a header could misread. */
const WELL_FORMED_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/**
 * Health checks, logged at `debug` only, as refusals of excess traffic (429) are: a load balancer polling
 * every second, or a flood the unpaid limit refuses, must not fill the log (or the disk); they are counted.
 */
const HEALTH_PATHS = new Set(["/livez", "/readyz", "/healthz"]);

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A path as logged: a caller may send kilobytes of it. */
const MAX_PATH = 512;

/** What a paid request's line says of its payment. */
export interface PaymentNote {
  payer?: string;
  scheme?: string;
  /** What was settled, in the token's atomic units. */
  amount?: string;
  /** The settlement's transaction hash. */
  transaction?: string;
  network?: string;
  /** Why the facilitator did not settle it, when it answered so. */
  settle_error?: string;
}

/** A request being served: its id (the log context of everything it runs), and what its line will say. */
class RequestRecord implements LogContext {
  payment?: PaymentNote;
  /** The line's fields, once the answer is known; undefined while it is not, or when it is not written. */
  line?: { level: LogLevel; fields: LogFields };
  /** Added when a held line is released (how a stream ended). */
  ending?: LogFields;
  /** The line is written when these reach 0: the middleware's own, and a streamed answer's. */
  holds = 1;

  constructor(
    readonly request_id: string,
    readonly startedAt: number,
  ) {}
}

/** The request the running code serves, if it runs within `requestLog`. */
function currentRequest(): RequestRecord | undefined {
  const context = logContext();
  return context instanceof RequestRecord ? context : undefined;
}

/** The id of the request the running code serves, if any: for a header to the next hop. */
export function currentRequestId(): string | undefined {
  return logContext()?.request_id;
}

/** Adds what is known of the payment to the line of the request being served (nothing outside one). */
export function notePayment(note: PaymentNote): void {
  const request = currentRequest();
  if (!request) return;
  // What is not known now (a settlement's answer without its payer) keeps what was known before.
  const known = Object.entries(note).filter(([, value]) => value !== undefined);
  request.payment = { ...request.payment, ...Object.fromEntries(known) };
}

/**
 * Keeps the line of the request being served from being written when its middleware ends (an answer
 * streamed on after that), until the returned function is called, with the fields it adds. Undefined
 * outside a request.
 */
export function holdRequestLine(): ((ending?: LogFields) => void) | undefined {
  const request = currentRequest();
  if (!request) return undefined;
  request.holds++;
  let released = false;
  return (ending) => {
    if (released) return;
    released = true;
    request.ending = ending;
    release(request);
  };
}

export interface RequestLogOptions {
  /** The service's name in the lines and the metrics: `facilitator`, `reports`, a merchant's name. */
  service: string;
  /**
   * The process's unpaid limit, whose trusted proxies say who the client is (`client` in the line: the
   * limit's bucket, an IPv6 client's /64); without it, the socket's peer.
   */
  limit?: UnpaidLimit;
}

/**
 * The request log as a middleware, first on every service's app: the id, its context, the line and the
 * HTTP metrics (the module's comment).
 *
 * @example
 *   const app = new Hono();
 *   app.use("*", requestLog({ service: "reports", limit }));
 */
export function requestLog(options: RequestLogOptions): MiddlewareHandler {
  const { service, limit } = options;
  return async function requestLog(c, next) {
    const startedAt = performance.now();
    const asked = c.req.header(REQUEST_ID_HEADER);
    const id = asked !== undefined && WELL_FORMED_ID.test(asked) ? asked : randomUUID();
    const request = new RequestRecord(id, startedAt);
    try {
      await withLogContext(request, next);
    } finally {
      answered(c, request, service, limit);
    }
  };
}

function answered(c: Context, request: RequestRecord, service: string, limit: UnpaidLimit | undefined): void {
  const seconds = (performance.now() - request.startedAt) / 1000;
  echoId(c, request.request_id);
  const route = routeOf(c);
  const status = c.res.status;
  const method = METHODS.has(c.req.method) ? c.req.method : "OTHER";
  httpRequests.inc({ service, method, route, status: String(status) });
  httpRequestSeconds.observe({ service, route }, seconds);
  const level = status === 429 || HEALTH_PATHS.has(c.req.path) ? "debug" : "info";
  if (logs(level)) {
    const path = c.req.path;
    request.line = {
      level,
      fields: {
        service,
        method: c.req.method,
        route,
        path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path,
        status,
        client: clientOf(c, limit),
      },
    };
  }
  release(request);
}

function release(request: RequestRecord): void {
  if (--request.holds > 0 || !request.line) return;
  const { level, fields } = request.line;
  const { service, method, route, path, status, client } = fields;
  log(level, "request", {
    service,
    request_id: request.request_id,
    method,
    route,
    path,
    status,
    duration_ms: Math.round((performance.now() - request.startedAt) * 10) / 10,
    ...request.payment,
    ...request.ending,
    client,
  });
}

/** The answer's `X-Request-Id`, set on the answer as it is (most are ours, whose headers can be changed). */
function echoId(c: Context, id: string): void {
  try {
    c.res.headers.set(REQUEST_ID_HEADER, id);
  } catch {
    // An answer whose headers are immutable (one fetched from elsewhere, passed on): a copy that can be changed.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, id);
  }
}

/** The route pattern that answered (`/v1/reports/base/:address`), `unmatched` when only middlewares ran. */
function routeOf(c: Context): string {
  const route = routePath(c, -1);
  return route === "" || route.includes("*") ? "unmatched" : route;
}

function clientOf(c: Context, limit: UnpaidLimit | undefined): string | undefined {
  const remoteAddress = remoteAddressOf(c);
  if (remoteAddress === undefined) return undefined;
  if (!limit) return plainAddress(remoteAddress);
  return limit.describeClient({
    remoteAddress,
    get headers() {
      return c.req.raw.headers;
    },
  });
}
