/**
 * The process's Prometheus metrics (one registry, below): every service of a process adds to
 * the same registry, and the operator's `/metrics` exposes it whole. Metric objects are created here, once
 * per process, so that two services of one process (the demo runs them all) share a name rather than
 * colliding on it. docs/metrics.md lists them, with their labels and what they mean.
 *
 * Every label takes a bounded set of values: names from the configuration and the catalogues (merchants,
 * route patterns, providers), the program's own reason codes, JSON-RPC methods. Never a URL as asked, a
 * payer's address or anything else a caller chooses; a value that comes from outside the process (a remote
 * facilitator's reason) goes through `bounded`.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's registry, this module's own rather than prom-client's global one: a module evaluated again
 * in the same process (vitest runs test file after test file in one) makes its metrics anew, which the
 * global registry would refuse as names taken.
 */
export const register = new Registry();

/** Every HTTP answer, by the service that gave it, the method, the route pattern and the status. */
export const httpRequests = new Counter({
  registers: [register],
  name: "x402m_http_requests_total",
  help: "HTTP requests answered, by service, method, route pattern and status",
  labelNames: ["service", "method", "route", "status"] as const,
});

export const httpRequestSeconds = new Histogram({
  registers: [register],
  name: "x402m_http_request_duration_seconds",
  help: "Time from a request's arrival to its answer's headers, by service and route pattern",
  labelNames: ["service", "route"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

/** A verification takes milliseconds in process, a settlement waits for its block (2 s on Base) or more. */
const PAYMENT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

// The merchant kit (src/merchant-kit): what became of the requests to paid routes.

/**
 * Requests whose payment the facilitator verified and whose handler ran (the ledger's row was taken), by
 * how their run ended: the ledger's outcomes (src/merchant-kit/payments/ledger/payment-ledger.ts), and `write_failed` for
 * a settled payment whose writes could not be committed.
 */
export const paidRequests = new Counter({
  registers: [register],
  name: "x402m_paid_requests_total",
  help: "Paid requests whose handler ran, by merchant, route pattern, scheme and outcome (settled, unsettled, released, abandoned, failed, write_failed)",
  labelNames: ["merchant", "route", "scheme", "outcome"] as const,
});

/** Requests to paid routes refused before any handler ran, nothing charged, by reason (the error's code). */
export const refusals = new Counter({
  registers: [register],
  name: "x402m_refusals_total",
  help: "Requests to a merchant's paid routes refused before any work, nothing charged, by merchant and reason",
  labelNames: ["merchant", "reason"] as const,
});

/**
 * Calls served to a wallet signed in on a period it paid for (sign-in-with-x): no payment of their own, so
 * neither paid requests nor refusals count them; by merchant, route pattern and outcome (served; failed, whose
 * call the period got back).
 */
export const signedInCalls = new Counter({
  registers: [register],
  name: "x402m_signed_in_calls_total",
  help: "Calls served to a wallet signed in on a period it paid for (sign-in-with-x), by merchant, route pattern and outcome (served, failed)",
  labelNames: ["merchant", "route", "outcome"] as const,
});

export const verifySeconds = new Histogram({
  registers: [register],
  name: "x402m_verify_seconds",
  help: "Time the merchant hosts waited for their facilitator's verification, by result (valid, invalid, error)",
  labelNames: ["result"] as const,
  buckets: PAYMENT_BUCKETS,
});

export const settleSeconds = new Histogram({
  registers: [register],
  name: "x402m_settle_seconds",
  help: "Time the merchant hosts waited for their facilitator's settlement, by outcome (settled, failed, error)",
  labelNames: ["outcome"] as const,
  buckets: PAYMENT_BUCKETS,
});

/** `error`: the facilitator could not be asked or did not answer (reason `facilitator_unavailable`). */
export const settlements = new Counter({
  registers: [register],
  name: "x402m_settlements_total",
  help: "Settlements the merchant hosts asked for, by outcome (settled, failed, error) and the facilitator's reason (none when settled)",
  labelNames: ["outcome", "reason"] as const,
});

// The facilitator (src/facilitator): the same from its side, and what it pays.

export const facilitatorVerifySeconds = new Histogram({
  registers: [register],
  name: "x402m_facilitator_verify_seconds",
  help: "Time the facilitator took to verify a payment, by result (valid, invalid, error)",
  labelNames: ["result"] as const,
  buckets: PAYMENT_BUCKETS,
});

export const facilitatorVerifications = new Counter({
  registers: [register],
  name: "x402m_facilitator_verifications_total",
  help: "Verifications the facilitator answered, by result (valid, invalid, error), reason (none when valid) and the request's x402 version (1 or 2)",
  labelNames: ["result", "reason", "x402_version"] as const,
});

export const facilitatorSettleSeconds = new Histogram({
  registers: [register],
  name: "x402m_facilitator_settle_seconds",
  help: "Time the facilitator took to answer a settlement, by outcome (settled, pending, failed, error)",
  labelNames: ["outcome"] as const,
  buckets: PAYMENT_BUCKETS,
});

export const facilitatorSettlements = new Counter({
  registers: [register],
  name: "x402m_facilitator_settlements_total",
  help: "Settlements the facilitator answered, by outcome (settled, pending, failed, error), reason (none when settled) and the request's x402 version (1 or 2)",
  labelNames: ["outcome", "reason", "x402_version"] as const,
});

/** Counted when the ledger records a mined settlement, once per transaction (src/facilitator/settlement-gas.ts). */
export const facilitatorGasSpent = new Counter({
  registers: [register],
  name: "x402m_facilitator_gas_spent_wei_total",
  help: "Wei the facilitator's signer paid for its mined settlement transactions (gas used at the effective price, plus the L1 fee on Base)",
});

/** The signers whose balance a scrape reads, and what each read last. */
const signers = new Map<string, { read: () => Promise<bigint>; last?: number }>();

/** How long a scrape waits for a signer's balance before it shows the last one read. */
export const BALANCE_READ_TIMEOUT_MS = 2_000;

export const facilitatorSignerBalance = new Gauge({
  registers: [register],
  name: "x402m_facilitator_signer_balance_wei",
  help: "The facilitator signer's balance of the chain's native token (it pays the gas), read at scrape time",
  labelNames: ["signer"] as const,
  async collect() {
    this.reset();
    await Promise.all(
      [...signers].map(async ([signer, watched]) => {
        try {
          watched.last = Number(await within(watched.read(), BALANCE_READ_TIMEOUT_MS));
        } catch {
          // A slow or failing RPC: the last balance read stands, and the scrape is not held up.
        }
        if (watched.last !== undefined) this.set({ signer }, watched.last);
      }),
    );
  },
});

/**
 * Shows `signer`'s balance on every scrape, read by `read` (an RPC call) for at most
 * `BALANCE_READ_TIMEOUT_MS`; returns what stops it (the facilitator's close).
 */
export function watchSignerBalance(signer: string, read: () => Promise<bigint>): () => void {
  const watched = { read };
  signers.set(signer, watched);
  return () => {
    if (signers.get(signer) === watched) signers.delete(signer);
  };
}

/** Wei the facilitator paid for its channel actions' mined transactions, by action (claim, settle, refund). */
export const facilitatorChannelGasSpent = new Counter({
  registers: [register],
  name: "x402m_facilitator_channel_gas_spent_wei_total",
  help: "Wei the facilitator's signer paid for mined batch-settlement claims, settles and refunds (part of x402m_facilitator_gas_spent_wei_total)",
  labelNames: ["action"] as const,
});

// Payment channels of the merchant hosts (src/merchant-kit/channels).

/** A merchant wallet's open channels as a scrape reads them: how many, and the money charged and not claimed. */
export interface ChannelExposure {
  open: number;
  unclaimedUsd: number;
}

/** The wallets whose channels a scrape reads, by the merchant label, each read at most once a scrape. */
const channelWatches = new Map<
  string,
  { read: () => Promise<ChannelExposure>; last?: ChannelExposure; reading?: Promise<void> }
>();

/**
 * Reads every watched wallet, at most `BALANCE_READ_TIMEOUT_MS`; the registry collects its metrics at once,
 * so both gauges of a scrape share the read under way.
 */
async function readChannels(): Promise<void> {
  await Promise.all(
    [...channelWatches.values()].map((watched) => {
      watched.reading ??= within(watched.read(), BALANCE_READ_TIMEOUT_MS)
        .then((exposure) => {
          watched.last = exposure;
        })
        .catch(() => {
          // A busy or failing database: the last reading stands, and the scrape is not held up.
        })
        .finally(() => {
          watched.reading = undefined;
        });
      return watched.reading;
    }),
  );
}

export const channelsUnclaimed = new Gauge({
  registers: [register],
  name: "x402m_channels_unclaimed_usd",
  help: "Money charged through a merchant's payment channels and not yet claimed (a payer's withdrawal could still take it), in the token's dollars",
  labelNames: ["merchant"] as const,
  async collect() {
    await readChannels();
    this.reset();
    for (const [merchant, watched] of channelWatches)
      if (watched.last) this.set({ merchant }, watched.last.unclaimedUsd);
  },
});

export const channelsOpen = new Gauge({
  registers: [register],
  name: "x402m_channels_open",
  help: "A merchant's open payment channels (in its state: opened by a deposit, not refunded in full)",
  labelNames: ["merchant"] as const,
  async collect() {
    await readChannels();
    this.reset();
    for (const [merchant, watched] of channelWatches)
      if (watched.last) this.set({ merchant }, watched.last.open);
  },
});

/** Shows `merchant`'s channels on every scrape, read by `read`; returns what stops it (the host's close). */
export function watchChannels(merchant: string, read: () => Promise<ChannelExposure>): () => void {
  const watched = { read };
  channelWatches.set(merchant, watched);
  return () => {
    if (channelWatches.get(merchant) === watched) channelWatches.delete(merchant);
  };
}

// Upstreams: the operator's providers (language, search, image, audio, social data...).

export const upstreamCalls = new Counter({
  registers: [register],
  name: "x402m_upstream_calls_total",
  help: "Calls to the operator's upstream providers, by provider and outcome (ok, failed, rate_limited, timeout, unreachable)",
  labelNames: ["provider", "outcome"] as const,
});

export const upstreamTokens = new Counter({
  registers: [register],
  name: "x402m_upstream_tokens_total",
  help: "Tokens the upstream language models reported using, by provider and kind (input, output)",
  labelNames: ["provider", "kind"] as const,
});

// The indexer (src/indexer): how far behind the chain it is, and what it read.

const HEAD_LAG = "x402m_indexer_head_lag_blocks";

/** Registered with the first observation: a process without an indexer shows no lag rather than 0. */
export const indexerHeadLag = new Gauge({
  name: HEAD_LAG,
  help: "Blocks between the chain's head as last read and the last block the indexer stored",
  registers: [],
});

export const indexerBlocks = new Counter({
  registers: [register],
  name: "x402m_indexer_blocks_total",
  help: "Blocks the indexer stored (a block indexed again after a reorg counts again)",
});

export const indexerPayments = new Counter({
  registers: [register],
  name: "x402m_indexer_payments_total",
  help: "Payments the indexer stored",
});

export const indexerReorgs = new Counter({
  registers: [register],
  name: "x402m_indexer_reorgs_total",
  help: "Reorgs the indexer rewound",
});

/** Each call of a JSON-RPC batch counts under its own method. */
export const rpcCalls = new Counter({
  registers: [register],
  name: "x402m_rpc_calls_total",
  help: "JSON-RPC calls the indexer sent, by method (each call of a batch counted)",
  labelNames: ["method"] as const,
});

/** A batch's answer counts under its method when all its calls share one, else under `mixed`. */
export const rpcResponseBytes = new Counter({
  registers: [register],
  name: "x402m_rpc_response_bytes_total",
  help: "Bytes of the JSON-RPC answers the indexer read, by method (mixed for a batch of several methods)",
  labelNames: ["method"] as const,
});

// Reports (src/reports).

export const reportBuildSeconds = new Histogram({
  registers: [register],
  name: "x402m_report_build_seconds",
  help: "Time to build a window's reports (kind window), and to read one merchant's report, its evidence or a leaderboard page (rebuilding the window first when stale)",
  labelNames: ["kind"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
});

/** Sets the indexer's head lag, registering the gauge the first time. */
export function setIndexerHeadLag(blocks: number): void {
  if (!register.getSingleMetric(HEAD_LAG)) register.registerMetric(indexerHeadLag);
  indexerHeadLag.set(Math.max(0, blocks));
}

let defaultMetrics = false;

/**
 * prom-client's process metrics (CPU, memory, file descriptors, event loop lag, garbage collection),
 * prefixed `x402m_`: once per process, when it first serves metrics. Their event loop monitor's timer fires
 * once a second: an idle `serve` then costs 0.12 ms of CPU a second instead of 0.05; every 100 ms it cost
 * 1.2, and at prom-client's default, 10 ms, the monitor alone costs a bare process 5.5 (docs/metrics.md).
 */
export function collectProcessMetrics(): void {
  if (defaultMetrics) return;
  defaultMetrics = true;
  collectDefaultMetrics({ register, prefix: "x402m_", eventLoopMonitoringPrecision: 1000 });
  // Gauges named like counters, which `promtool check metrics` refuses: the sums of the `type`-labelled
  // gauges of the same name without `_total`, which stay.
  for (const what of ["handles", "requests", "resources"])
    register.removeSingleMetric(`x402m_nodejs_active_${what}_total`);
}

/**
 * A label for values that come from outside the process (a remote facilitator's reason): a value seen
 * before, or a new one while fewer than `max` have been, as a short snake_case word; `other` past that.
 */
export function bounded(max = 50): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max || !/^[A-Za-z0-9_.:-]{1,64}$/.test(value)) return "other";
    seen.add(value);
    return value;
  };
}

/** Seconds since `start` (a `performance.now()`), for a histogram. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
