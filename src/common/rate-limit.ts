/**
 * The per-client limit of unpaid requests: 402 challenges, pages, documents, reports and discovery answer
 * anyone, and a flood of them competes for the same cores as paying buyers. Each client (an IP address;
 * an IPv6 client by its /64, which one subscriber usually holds whole) has a token bucket: `burst` requests
 * at once, refilled at `perSecond`. An unpaid request takes a token or is refused with 429 and
 * `Retry-After`, before any work. A request that carries a payment is let through on credit (its bucket
 * may go down to `-burst`) and given its token back once its payment verifies: a paid request is never
 * refused for its client's unpaid traffic, while a payment header that does not verify counts as unpaid,
 * and a client whose payments keep failing runs out of credit and is refused before verifying any more
 * (docs/platform.md, "Limits on unpaid requests").
 *
 * Written here rather than taken from `hono-rate-limiter`: its stores count fixed windows in maps that a
 * flood from many addresses grows without bound, read the wall clock themselves, and cannot let a paid
 * request through on credit.
 */
import { BlockList, isIP } from "node:net";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { errorBody } from "./errors.ts";
import { onError } from "./http.ts";
import type { Fetch } from "./listen.ts";
import { limitedLog } from "./log.ts";

export interface UnpaidLimitSettings {
  /** Tokens a client gets back per second: its sustained rate of unpaid requests. 0: no limit. */
  perSecond: number;
  /** Unpaid requests a client may make at once after a quiet spell; also its credit for payments. */
  burst: number;
  /** Clients remembered at most: past it, the one seen least recently is forgotten (a full bucket again). */
  clients: number;
  /** `exempt`: clients on this machine (127.0.0.0/8, ::1) are never limited. */
  loopback: "exempt" | "limited";
  /**
   * Addresses and CIDR ranges of the reverse proxies in front: for a request from one of them the client
   * is read from `forwardedHeader`, right to left past the trusted hops. Empty: the socket's address only.
   */
  trustedProxies: readonly string[];
  /** Which header the trusted proxies write: only that one is read, so a client cannot forge the other. */
  forwardedHeader: "x-forwarded-for" | "forwarded";
}

/** What a take from a bucket gives: a token, or how long until one. */
export type Take = { ok: true } | { ok: false; retryAfterS: number };

/**
 * Token buckets by key, at most `capacity` of them: a Map in the order the keys were last seen, so the
 * one to forget is its first. Forgetting a bucket gives its client a full one, never less: a flood from
 * many addresses costs memory up to the cap, and the addresses it pushes out lose nothing.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly capacity: number,
    /** Milliseconds on a clock that never goes back; tests turn it by hand. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one token from `key`'s bucket if that leaves at least `floor` (0: none on credit). */
  take(key: string, floor = 0): Take {
    const bucket = this.touch(key);
    if (bucket.tokens - 1 < floor) {
      return { ok: false, retryAfterS: Math.max(1, Math.ceil((floor + 1 - bucket.tokens) / this.perSecond)) };
    }
    bucket.tokens -= 1;
    return { ok: true };
  }

  /** Gives `key` a token back (a request that turned out paid); nothing if it was forgotten meanwhile. */
  give(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  /** Clients remembered now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Tokens `key` has now (a full bucket if it is not remembered), without touching it. */
  tokens(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.burst;
    return Math.min(this.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond);
  }

  private touch(key: string): { tokens: number; at: number } {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
      bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
      bucket.at = now;
    } else {
      bucket = { tokens: this.burst, at: now };
    }
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.capacity) {
      const oldest = this.buckets.keys().next().value as string;
      this.buckets.delete(oldest);
    }
    return bucket;
  }
}

/** Whether `entries` are addresses or CIDR ranges; throws naming the first that is not. */
export function parseAddressRanges(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix, ...rest] = entry.trim().split("/");
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const length = prefix === undefined ? bits : Number(prefix);
    if (family === 0 || rest.length > 0 || !/^\d*$/.test(prefix ?? "") || !(length >= 0 && length <= bits)) {
      throw new Error(`"${entry}" is not an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    }
    list.addSubnet(address, length, family === 4 ? "ipv4" : "ipv6");
  }
  return list;
}

const LOOPBACK = parseAddressRanges(["127.0.0.0/8", "::1"]);

/** An address as a socket or a proxy writes it, made plain: no zone, no port, no IPv4-mapped prefix. */
export function plainAddress(written: string): string | undefined {
  let address = written.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1] as string;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(":"));
  const zone = address.indexOf("%");
  if (zone >= 0) address = address.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1] as string;
  return isIP(address) ? address.toLowerCase() : undefined;
}

/** The bucket of an address: an IPv4 address's own, an IPv6 address's /64's. */
export function clientKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail] = address.split("::");
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail).flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const full =
    tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill("0"), ...back];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

/** The addresses a `Forwarded` header (RFC 7239) lists as `for=`, left to right; undefined for one it hides. */
function forwardedFor(value: string): (string | undefined)[] {
  return value.split(",").map((element) => {
    for (const pair of element.split(";")) {
      const at = pair.indexOf("=");
      if (at < 0 || pair.slice(0, at).trim().toLowerCase() !== "for") continue;
      return plainAddress(
        pair
          .slice(at + 1)
          .trim()
          .replace(/^"|"$/g, ""),
      );
    }
    return undefined;
  });
}

/** Where a request came from: the socket's peer, and the request's headers. */
export interface Origin {
  remoteAddress: string | undefined;
  headers: Headers;
}

/** A socket's address as the limit reads it: plain (undefined when unreadable), a trusted proxy's, its bucket. */
interface SocketClient {
  address: string | undefined;
  trusted: boolean;
  /** For a socket that is not a trusted proxy's: the bucket every request from it draws on. */
  bucket: string | undefined;
}

/**
 * The limit of one process: every host it serves shares it, since they share its cores. `clientOf` says
 * whose bucket a request draws on; `admit` takes from it.
 */
export class UnpaidLimit {
  readonly buckets: TokenBuckets;
  private readonly trusted: BlockList;
  /**
   * What each socket address says of its client, worked out once: a client's requests come from the same few
   * addresses, and a `BlockList` check makes a `SocketAddress` each time (1-1.5% of `serve`'s CPU a paid
   * request for the limit's and the request line's reads, docs/benchmarks-log.md, 2026-11-29).
   */
  private readonly sockets = new Map<string, SocketClient>();

  constructor(
    readonly settings: UnpaidLimitSettings,
    now?: () => number,
  ) {
    this.buckets = new TokenBuckets(settings.perSecond, settings.burst, settings.clients, now);
    this.trusted = parseAddressRanges(settings.trustedProxies);
  }

  /**
   * The bucket a request draws on, or undefined when it is not limited: a loopback client when those are
   * exempt, or a request whose socket is unknown (an app called in process, not through a server). From
   * a trusted proxy, the client is the right-most address of the forwarded header that is not a trusted
   * proxy itself: what the first trusted proxy saw, however many entries the client wrote before it; an
   * entry that is hidden or unreadable stops the walk at the proxy that wrote it.
   */
  clientOf(origin: Origin): string | undefined {
    const socket = origin.remoteAddress === undefined ? undefined : this.socketOf(origin.remoteAddress);
    if (socket?.address === undefined) return undefined;
    if (!socket.trusted) return socket.bucket;
    let client = socket.address;
    const header = origin.headers.get(this.settings.forwardedHeader);
    const hops =
      header === null
        ? []
        : this.settings.forwardedHeader === "forwarded"
          ? forwardedFor(header)
          : header.split(",").map(plainAddress);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i];
      if (hop === undefined) break;
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return this.bucketOf(client);
  }

  /**
   * Who a request's log line names as its client: its bucket (`clientOf`), else, for a client the limit
   * leaves alone (on this machine, when those are exempt), the socket's plain address.
   */
  describeClient(origin: Origin): string | undefined {
    if (origin.remoteAddress === undefined) return undefined;
    return this.clientOf(origin) ?? this.socketOf(origin.remoteAddress).address;
  }

  /**
   * Takes a request's token: `unpaid` needs one left; `payment` (a request carrying a payment that may
   * verify) may take on credit down to `-burst`, and gets it back through `paid` once it verifies.
   */
  admit(client: string, kind: "unpaid" | "payment"): Take {
    return this.buckets.take(client, kind === "payment" ? -this.settings.burst : 0);
  }

  /** The request of `client` that took a token on credit turned out paid: the token is given back. */
  paid(client: string): void {
    this.buckets.give(client);
  }

  private socketOf(remoteAddress: string): SocketClient {
    let socket = this.sockets.get(remoteAddress);
    if (socket === undefined) {
      const address = plainAddress(remoteAddress);
      const trusted = address !== undefined && this.isTrusted(address);
      socket = {
        address,
        trusted,
        bucket: address === undefined || trusted ? undefined : this.bucketOf(address),
      };
      // A flood from many addresses empties it now and then: what it holds is worked out again, not lost.
      if (this.sockets.size >= this.settings.clients) this.sockets.clear();
      this.sockets.set(remoteAddress, socket);
    }
    return socket;
  }

  /** The bucket of a client's plain address: none for one on this machine when those are exempt. */
  private bucketOf(client: string): string | undefined {
    if (this.settings.loopback === "exempt" && LOOPBACK.check(client, isIP(client) === 4 ? "ipv4" : "ipv6")) {
      return undefined;
    }
    return clientKey(client);
  }

  private isTrusted(address: string): boolean {
    if (this.settings.trustedProxies.length === 0) return false;
    return this.trusted.check(address, isIP(address) === 4 ? "ipv4" : "ipv6");
  }
}

/** A limit of `settings`, or none when it is off (`perSecond` 0). */
export function unpaidLimitOf(settings: UnpaidLimitSettings): UnpaidLimit | undefined {
  return settings.perSecond > 0 ? new UnpaidLimit(settings) : undefined;
}

/** Refusals logged per window: a flood shows in the log, never at its own rate. */
const warnOfLimited = limitedLog({ lines: 5, perMs: 60_000 });

/** The context variable through which a verified payment gives its token back. */
const REFUND = "unpaidLimitRefund";

/** The socket's peer of a request served by `@hono/node-server` (its `env.incoming`), if it was. */
export function remoteAddressOf(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/**
 * The limit as a middleware, first on a host: a request over its client's limit is answered 429
 * `too_many_requests` with `Retry-After`, in the project's error shape, before anything else runs. The
 * refusal is a Response of its own, with `headers` besides (a host's CORS headers, so that a browser can
 * read it): no middleware before it has touched the answer, which Hono would then copy. `carriesPayment` says whether a request carries a payment worth
 * verifying (a header that decodes to one): such a request is let through on credit, and gets its token
 * back when `paymentVerified` runs after the payment middleware.
 *
 * @example
 *   const limit = unpaidLimitOf({ ...config.unpaidLimit, loopback: "limited" });
 *   if (limit) app.use("*", limitUnpaid(limit));
 */
export function limitUnpaid(
  limit: UnpaidLimit,
  options: { carriesPayment?: (request: Request) => boolean; headers?: Record<string, string> } = {},
): MiddlewareHandler {
  const { perSecond, burst } = limit.settings;
  return async function limitUnpaid(c, next) {
    // The headers are read only from a trusted proxy: refusing a flood costs as little as it can.
    const client = limit.clientOf({
      remoteAddress: remoteAddressOf(c),
      get headers() {
        return c.req.raw.headers;
      },
    });
    if (client === undefined) return next();
    const payment = options.carriesPayment?.(c.req.raw) ?? false;
    const taken = limit.admit(client, payment ? "payment" : "unpaid");
    if (!taken.ok) {
      warnOfLimited("warn", "refused requests over the unpaid limit", { client, path: c.req.path });
      // Answered, not thrown: a flood's refusals are most of what it costs, and an error's stack is not free.
      const message = payment
        ? `too many requests from your address carried payments that did not verify: try again in ${taken.retryAfterS} s`
        : `too many unpaid requests from your address (${perSecond} a second, ${burst} at once): try again in ${taken.retryAfterS} s; a request with a valid payment is not limited`;
      return new Response(JSON.stringify(errorBody("too_many_requests", message)), {
        status: 429,
        headers: {
          "Content-Type": "application/json",
          "Retry-After": String(taken.retryAfterS),
          ...options.headers,
        },
      });
    }
    if (payment) c.set(REFUND, () => limit.paid(client));
    await next();
  };
}

/**
 * After the payment middleware, which calls it only for a payment the facilitator verified: gives the
 * request's token back to its client (`limitUnpaid`), so that a paid request never counts as unpaid.
 */
export function paymentVerified(): MiddlewareHandler {
  return async function paymentVerified(c, next) {
    const refund = c.get(REFUND) as (() => void) | undefined;
    c.set(REFUND, undefined);
    refund?.();
    await next();
  };
}

/**
 * `fetch` with the limit on `paths` only, every method: for a server whose other routes are guarded
 * otherwise (the facilitator's `/verify` and `/settle`, by its API keys). The rest goes to `fetch` as it
 * came, untouched.
 */
export function limitPaths(fetch: Fetch, limit: UnpaidLimit | undefined, paths: readonly string[]): Fetch {
  if (!limit) return fetch;
  const front = new Hono();
  front.onError(onError);
  const limited = limitUnpaid(limit);
  for (const path of paths) front.use(path, limited);
  front.all("*", (c) => fetch(c.req.raw, c.env));
  return front.fetch;
}
