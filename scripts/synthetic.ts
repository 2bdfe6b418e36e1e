/**
 * A deterministic generator of one synthetic week of x402 traffic on Base, as NDJSON in the import
 * format of `src/analytics/import.ts`. The sample week (`scripts/make-sample.ts`), the report benchmark
 * (`bench/report.ts`) and the tests all use it.
 *
 * Organic traffic is skewed like the real thing: buyers and merchants follow Zipf-like popularity (a
 * few buyers make most payments), each buyer sticks to a handful of merchants, and each payment is one
 * of the merchant's listed prices. On top of it, a deterministic subset of merchants gets every
 * pattern the screens look for (self payments, merchant-funded payers, rings by transfer and by
 * reciprocal x402 payments, prober wallets, tiny_repeat farms) and genuine demand that must pass
 * (one large customer, a steady integration at a listed price of $0.001, metered charges below $0.001 from 8 buyers
 * that vary), plus an exchange-like hub that funds many buyers and receives merchants' cash-outs.
 *
 * Output is streamed in ~1 MB chunks with backpressure: merchants and listings first, then payments
 * and transfers in block order, then a checkpoint at `endBlock`. Only the planted records (a small
 * share of the total) are held in memory. Same options, same bytes.
 *
 * @example
 *   const summary = await writeSynthetic("week.ndjson", { seed: 1, merchants: 30, buyers: 200, payments: 5_000,
 *     endBlock: 53_350_927, endTime: "2026-11-01T00:00:01Z" });
 */
import { once } from "node:events";
import fs from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { BLOCK_SECONDS, WEEK_BLOCKS } from "../src/chain/base.ts";

export const PLANTED_ROLES = [
  "self_payment",
  "merchant_funded",
  "ring_transfer",
  "ring_reciprocal",
  "tiny_repeat",
  "large_customer",
  "steady_integration",
  "metered",
] as const;
export type PlantedRole = (typeof PLANTED_ROLES)[number];

export interface SyntheticOptions {
  seed: number;
  /** Merchant wallets (pay_to), by popularity rank: rank 0 is the most popular. */
  merchants: number;
  /** Organic buyer wallets, by popularity rank; planted wallets come on top. */
  buyers: number;
  /** Payment records in total, planted ones included. */
  payments: number;
  /** Last block of the window (and of the checkpoint). */
  endBlock: number;
  /** Time of `endBlock`: unix seconds, an ISO 8601 string or a Date. */
  endTime: number | string | Date;
  /** Host names of the merchants of ranks 0, 1, ...; default: about 2% of merchants get a generated name. */
  names?: readonly string[];
  /** Ranks of claimed merchants; default: the first few named merchants. */
  claimed?: readonly number[];
  /** Ranks of merchants the operator holds out of the ranking; default: the first tiny_repeat merchant. */
  held?: readonly number[];
  /** Merchant ranks per planted role (ring_reciprocal: pairs, so an even count); default: a seeded choice. */
  roles?: Partial<Record<PlantedRole, readonly number[]>>;
  /** Prober wallets; default: max(2, merchants / 10,000). */
  probers?: number;
  /**
   * Share of the organic buyers given a funding history before the window, as the indexer keeps one for every
   * payer (default 0: none, and the same bytes as before the option). Most are withdrawn from one of eight
   * exchanges, some also topped up by a friend of their own, a tenth funded from private wallets in groups
   * of 2 to 20: the transfers the report's clusters read.
   */
  funding?: number;
  /** Zipf exponents of merchant and buyer popularity (defaults 1.1 and 1.15). */
  merchantSkew?: number;
  buyerSkew?: number;
}

export interface SyntheticSummary {
  lines: number;
  bytes: number;
  payments: number;
  transfers: number;
  listings: number;
  merchantRecords: number;
  checkpoints: number;
  window: { startBlock: number; endBlock: number; startTime: number; endTime: number };
  /** Merchant addresses per planted role. */
  roles: Record<PlantedRole, string[]>;
  /** Wallets that plant a pattern, per kind, and the genuine-demand wallets that must pass every screen. */
  wallets: {
    self_payment: string[];
    merchant_funded: string[];
    ring: string[];
    prober: string[];
    tiny_repeat: string[];
    genuine: string[];
    hub: string[];
  };
}

// ---------------------------------------------------------------------------------------------
// Randomness: sfc32 for streams, a murmur-style mix for stateless per-entity choices.

/** sfc32: a small, fast PRNG with a 128-bit state. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    this.a = mix(seed ^ 0x9e3779b9);
    this.b = mix(seed + 0x243f6a88 + stream);
    this.c = mix(stream ^ 0xb7e15162);
    this.d = 1;
    for (let i = 0; i < 15; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4_294_967_296;
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)] as T;
  }
}

function mix(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hash(a: number, b: number, c = 0): number {
  return mix(mix(a ^ Math.imul(b | 0, 0x9e3779b1)) ^ Math.imul((c | 0) + 0x632be5ab, 0x27d4eb2f));
}

const unit = (h: number) => h / 4_294_967_296;

/** Zipf-like ranks 0..n-1 with P(r) ~ (r + 1.5)^-s, by inverting the continuous distribution. */
class Zipf {
  private readonly c: number;
  private readonly e: number;

  constructor(
    private readonly n: number,
    s: number,
  ) {
    this.c = 1 - (n + 1) ** (1 - s);
    this.e = 1 / (1 - s);
  }

  rank(u: number): number {
    const r = Math.floor((1 - u * this.c) ** this.e) - 1;
    return r < 0 ? 0 : r >= this.n ? this.n - 1 : r;
  }
}

const hex8 = (x: number) => (x >>> 0).toString(16).padStart(8, "0");

// ---------------------------------------------------------------------------------------------
// The catalogue: prices, paths, descriptions.

/** Listed prices in atomic units with weights; the first listing of a merchant is one of the cheap ones. */
const PRICES = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 70_000, 100_000];
const PRICE_WEIGHTS = [12, 14, 16, 22, 12, 10, 8, 6];
const CHEAP_PRICES = [1_000, 2_000, 5_000, 10_000, 20_000];
const CHEAP_WEIGHTS = [20, 20, 22, 26, 12];
const PREMIUM_PRICES = [1_000_000, 2_500_000, 5_000_000];
/** A farm pays the merchant's cheapest price divided by one of these. */
const TINY_DIVISORS = [10, 20, 100, 1_000];
const USDC_CHECKSUMMED = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

const ENDPOINTS: readonly [string, string][] = [
  ["/v1/search", "Web search: returns the top 10 results with titles, snippets and URLs as JSON."],
  ["/v1/summarize", "Summarizes a web page or a block of text into five bullet points."],
  ["/v1/weather", "Current weather and a 48-hour forecast for a latitude and longitude."],
  ["/v1/quote", "Latest price, 24-hour volume and change for a token or a stock ticker."],
  ["/v1/image", "Generates a 1024x1024 PNG image from a text prompt."],
  ["/v1/translate", "Translates text between 40 languages, detecting the source language."],
  ["/v1/scrape", "Fetches a URL and returns its main content as clean Markdown."],
  ["/v1/embed", "Returns 768-dimension text embeddings for up to 64 inputs."],
  ["/v1/chat", "Chat completion with a small open model, up to 2,048 output tokens."],
  ["/v1/geocode", "Turns an address into coordinates and coordinates into an address."],
  ["/v1/news", "Headlines of the last 24 hours on a topic, deduplicated across sources."],
  ["/v1/ocr", "Extracts text from an image or a PDF page."],
  ["/v1/tts", "Speaks text aloud and returns an MP3 file."],
  ["/v1/feed", "Social posts mentioning a keyword, newest first, with engagement counts."],
  ["/v1/dns", "Resolves a host name and returns A, AAAA, MX and TXT records."],
  ["/v1/whois", "Registration data of a domain name."],
];
const LONG_TAIL_TEXT = [
  "Results are cached for 60 seconds, so repeated calls within a minute return the same payload and are still charged.",
  "The endpoint accepts both GET query parameters and a JSON body; unknown parameters are ignored rather than rejected.",
  "Rate limit: 20 requests per second per paying wallet; a 429 response is never charged.",
  "Errors are returned as JSON with a stable code and a human-readable message, and failed calls are refunded by the facilitator.",
  "Payloads larger than 1 MB are truncated and the response says so in a header.",
  "This description is deliberately long, as some catalogue entries are, to show how reports cut it at a word boundary.",
];
/** A named merchant's first endpoint follows its name (inference.example sells chat completions). */
const NAME_ENDPOINTS: readonly [string, string][] = [
  ["social", "/v1/feed"],
  ["feed", "/v1/feed"],
  ["inference", "/v1/chat"],
  ["llm", "/v1/chat"],
  ["utility", "/v1/dns"],
  ["dns", "/v1/dns"],
  ["search", "/v1/search"],
  ["weather", "/v1/weather"],
  ["market", "/v1/quote"],
  ["quote", "/v1/quote"],
  ["translate", "/v1/translate"],
  ["image", "/v1/image"],
  ["scrape", "/v1/scrape"],
  ["speech", "/v1/tts"],
  ["voice", "/v1/tts"],
  ["maps", "/v1/geocode"],
  ["news", "/v1/news"],
  ["ocr", "/v1/ocr"],
  ["embed", "/v1/embed"],
];

function endpointFor(name: string, h: number): number {
  const route = NAME_ENDPOINTS.find(([word]) => name.includes(word))?.[1];
  const i = route ? ENDPOINTS.findIndex(([r]) => r === route) : -1;
  return i >= 0 ? i : h % ENDPOINTS.length;
}

const NAME_STEMS = [
  "weather",
  "search",
  "llm",
  "scrape",
  "news",
  "maps",
  "quotes",
  "ocr",
  "voice",
  "feeds",
  "dns",
  "embed",
];

// ---------------------------------------------------------------------------------------------

interface Planted {
  block: number;
  /** 0: payment, 1: transfer. */
  kind: 0 | 1;
  from: string;
  to: string;
  amount: number;
}

interface PlantedRoleCounts {
  roles: Record<PlantedRole, number[]>;
}

const CHUNK = 1 << 20;

/**
 * Writes the synthetic week to `out` (a file path or an open stream, which is ended) and resolves with
 * what was written once every byte is flushed.
 */
export async function writeSynthetic(
  out: string | Writable,
  options: SyntheticOptions,
): Promise<SyntheticSummary> {
  const o = validate(options);
  const M = o.merchants;
  const seed = o.seed >>> 0;
  const endTime = toUnix(o.endTime);
  const endBlock = o.endBlock;
  const startBlock = endBlock - WEEK_BLOCKS;
  const timeOf = (block: number) => endTime - BLOCK_SECONDS * (endBlock - block);

  const address = (tag: number, i: number) =>
    `0x${hex8(hash(seed, tag, i))}${hex8(hash(seed ^ 0x5bd1e995, tag, i))}${hex8(hash(seed, tag ^ 0x1b873593, i))}${hex8(hash(seed, tag, i ^ 0x7fffffff))}${hex8(hash(seed + 1, tag + 7, i))}`;
  const TAG_MERCHANT = 1;
  const TAG_BUYER = 2;
  const TAG_WALLET = 3;
  const TAG_FACILITATOR = 4;

  const merchantAddr: string[] = new Array(M);
  for (let r = 0; r < M; r++) merchantAddr[r] = address(TAG_MERCHANT, r);
  const buyerAddr: string[] = new Array(o.buyers);
  const buyerSlots = new Uint8Array(o.buyers);
  for (let r = 0; r < o.buyers; r++) {
    buyerAddr[r] = address(TAG_BUYER, r);
    // Most buyers use one to three merchants; a few agents use up to 12 (never enough to look like probers).
    buyerSlots[r] = 1 + Math.floor(12 * unit(hash(seed, 0xb0b, r)) ** 3);
  }
  const facilitators = [0, 1, 2, 3, 4].map((i) => address(TAG_FACILITATOR, i));
  const facilitatorWeights = [55, 25, 10, 6, 4];
  let walletCounter = 0;
  const freshWallet = () => address(TAG_WALLET, walletCounter++);

  const setup = new Rng(seed, 1);
  const { roles } = assignRoles(o, setup);
  const roleOf = new Int8Array(M).fill(-1);
  for (const [i, role] of PLANTED_ROLES.entries()) for (const r of roles[role]) roleOf[r] = i;

  // Names, claims, freezes.
  const names = new Map<number, string>();
  if (o.names) {
    for (const [r, name] of o.names.entries()) if (r < M) names.set(r, name);
  } else {
    for (let r = 0; r < M; r++) {
      const h = hash(seed, 0x4a3e, r);
      if (h % 50 === 0 || (roleOf[r] as number) >= 0)
        names.set(r, `${NAME_STEMS[h % NAME_STEMS.length]}-${r + 1}.example`);
    }
  }
  const claimed = new Set(o.claimed ?? [...names.keys()].slice(0, Math.max(1, Math.round(M * 0.002))));
  const held = new Set(o.held ?? roles.tiny_repeat.slice(0, 1));
  const hostOf = (r: number) => names.get(r) ?? `api-${r + 1}.example`;

  // Listings: 1-6 per merchant, the first one cheap, prices kept per merchant for the payments.
  const MAX_LISTINGS = 6;
  const listingCount = new Uint8Array(M);
  const listingPrice = new Int32Array(M * MAX_LISTINGS);
  const listingEndpoint = new Uint8Array(M * MAX_LISTINGS);
  for (let r = 0; r < M; r++) {
    const role = PLANTED_ROLES[roleOf[r] ?? -1];
    let n = 1 + Math.floor(MAX_LISTINGS * unit(hash(seed, 0x115, r)) ** 1.6);
    if (role === "large_customer") n = Math.max(2, n);
    listingCount[r] = n;
    const first = endpointFor(names.get(r) ?? "", hash(seed, 0xe9d, r));
    for (let i = 0; i < n; i++) {
      const h = hash(seed, 0x9e1, r * 8 + i);
      listingEndpoint[r * MAX_LISTINGS + i] = (first + i * 5) % ENDPOINTS.length;
      listingPrice[r * MAX_LISTINGS + i] =
        i === 0 ? weighted(CHEAP_PRICES, CHEAP_WEIGHTS, unit(h)) : weighted(PRICES, PRICE_WEIGHTS, unit(h));
    }
    // Genuine demand needs the prices it pays listed: $0.001 for the steady integration, a premium endpoint for the large customer.
    if (role === "steady_integration") listingPrice[r * MAX_LISTINGS] = 1_000;
    if (role === "large_customer") {
      listingPrice[r * MAX_LISTINGS + n - 1] = PREMIUM_PRICES[
        hash(seed, 0x9a, r) % PREMIUM_PRICES.length
      ] as number;
    }
  }
  const priceOf = (r: number, i: number) => listingPrice[r * MAX_LISTINGS + i] as number;
  const cheapest = (r: number) => {
    let p = priceOf(r, 0);
    for (let i = 1; i < (listingCount[r] as number); i++) p = Math.min(p, priceOf(r, i));
    return p;
  };

  // --- Planted records, in memory (a small share of the whole).
  const planted: Planted[] = [];
  const wallets: SyntheticSummary["wallets"] = {
    self_payment: [],
    merchant_funded: [],
    ring: [],
    prober: [],
    tiny_repeat: [],
    genuine: [],
    hub: [],
  };
  const rng = new Rng(seed, 2);
  const lo = startBlock + 1;
  const anyBlock = (from = lo, to = endBlock) => rng.int(from, to);
  const pay = (block: number, from: string, to: string, amount: number) =>
    planted.push({ block, kind: 0, from, to, amount });
  const transfer = (block: number, from: string, to: string, amount: number) =>
    planted.push({ block, kind: 1, from, to, amount });
  const listedPrice = (r: number) => priceOf(r, rng.int(0, (listingCount[r] as number) - 1));

  for (const r of roles.self_payment) {
    const m = merchantAddr[r] as string;
    wallets.self_payment.push(m);
    for (let n = rng.int(5, 30); n > 0; n--) pay(anyBlock(), m, m, listedPrice(r));
  }
  for (const r of roles.merchant_funded) {
    const m = merchantAddr[r] as string;
    for (let k = rng.int(1, 3); k > 0; k--) {
      const w = freshWallet();
      wallets.merchant_funded.push(w);
      const funded = anyBlock(lo, lo + Math.floor(WEEK_BLOCKS * 0.4));
      transfer(funded, m, w, rng.int(1, 20) * 1_000_000);
      for (let n = rng.int(10, 60); n > 0; n--) pay(anyBlock(funded + 1), w, m, listedPrice(r));
    }
  }
  for (const r of roles.ring_transfer) {
    // The payer pays, then the merchant sends 60-100% of it back through a relay wallet after the last
    // payment (through a relay, as a direct return after the last payment is a refund; after the last
    // payment, as money arriving before a payment would make it merchant_funded instead).
    const m = merchantAddr[r] as string;
    const w = freshWallet();
    const relay = freshWallet();
    wallets.ring.push(w);
    const price = priceOf(r, (listingCount[r] as number) - 1);
    let total = 0;
    let last = lo;
    for (let n = rng.int(10, 40); n > 0; n--) {
      const b = anyBlock(lo, lo + Math.floor(WEEK_BLOCKS * 0.8));
      last = Math.max(last, b);
      total += price;
      pay(b, w, m, price);
    }
    const back = Math.min(endBlock - 1, last + rng.int(1, 3_000));
    const amount = Math.ceil(total * (0.6 + 0.4 * rng.float()));
    transfer(back, m, relay, amount);
    transfer(back + 1, relay, w, amount);
  }
  for (let i = 0; i + 1 < roles.ring_reciprocal.length; i += 2) {
    // Two merchants buy the same amount from each other: each is paid back all it was paid.
    const a = merchantAddr[roles.ring_reciprocal[i] as number] as string;
    const b = merchantAddr[roles.ring_reciprocal[i + 1] as number] as string;
    wallets.ring.push(a, b);
    const amount = priceOf(roles.ring_reciprocal[i + 1] as number, 0);
    for (let n = rng.int(10, 30); n > 0; n--) {
      pay(anyBlock(), a, b, amount);
      pay(anyBlock(), b, a, amount);
    }
  }
  for (const r of roles.tiny_repeat) {
    // Leaderboard farms: 1-4 wallets, each a burst of identical payments within a day or two, of a
    // tenth or less of the merchant's cheapest listed price.
    const m = merchantAddr[r] as string;
    const amount = Math.max(1, Math.floor(cheapest(r) / rng.pick(TINY_DIVISORS)));
    for (let k = rng.int(1, 4); k > 0; k--) {
      const w = freshWallet();
      wallets.tiny_repeat.push(w);
      const from = anyBlock(lo, endBlock - 86_400);
      for (let n = rng.int(10, 200); n > 0; n--) pay(anyBlock(from, from + 86_400), w, m, amount);
    }
  }
  for (const r of roles.large_customer) {
    const m = merchantAddr[r] as string;
    const w = freshWallet();
    wallets.genuine.push(w);
    const price = priceOf(r, (listingCount[r] as number) - 1);
    for (let n = rng.int(30, 120); n > 0; n--) pay(anyBlock(), w, m, price);
  }
  for (const r of roles.steady_integration) {
    // One call every 15 minutes, all week, at the listed $0.001 (the tiny threshold is below $0.001).
    const m = merchantAddr[r] as string;
    const w = freshWallet();
    wallets.genuine.push(w);
    for (let b = lo + rng.int(0, 449); b <= endBlock; b += 450) pay(b, w, m, 1_000);
  }
  for (const r of roles.metered) {
    // Usage-based ("upto") charges below $0.001 that vary with each call, from independent buyers: what they
    // pay is the merchant's price for such calls (docs/screens.md, tiny_repeat).
    const m = merchantAddr[r] as string;
    for (let k = 0; k < 8; k++) {
      const w = freshWallet();
      wallets.genuine.push(w);
      for (let n = rng.int(50, 200); n > 0; n--) pay(anyBlock(), w, m, rng.int(50, 999));
    }
  }
  const proberCount = o.probers ?? Math.max(2, Math.round(M / 10_000));
  for (let k = 0; k < proberCount; k++) {
    // Crawlers: 25 or more merchants (about 1% of them at scale), one to three payments each, within two days.
    const w = freshWallet();
    wallets.prober.push(w);
    const targets = sample(rng, M, Math.min(M, 25 + rng.int(0, Math.floor(M * 0.012))));
    const from = anyBlock(lo, endBlock - 2 * 43_200);
    for (const r of targets) {
      const n = rng.float() < 0.7 ? 1 : rng.float() < 0.67 ? 2 : 3;
      const amount = Math.min(cheapest(r), 50_000);
      for (let i = 0; i < n; i++)
        pay(anyBlock(from, from + 2 * 43_200), w, merchantAddr[r] as string, amount);
    }
  }
  {
    // An exchange: funds many buyers (a hub, so not a ring link) and receives some merchants' cash-outs.
    const hub = freshWallet();
    wallets.hub.push(hub);
    const buyerZipf = new Zipf(o.buyers, o.buyerSkew);
    const funded = new Set<number>();
    const want = Math.min(o.buyers, Math.max(60, Math.round(o.buyers * 0.002)));
    while (funded.size < want)
      funded.add(funded.size < want / 2 ? buyerZipf.rank(rng.float()) : rng.int(0, o.buyers - 1));
    for (const b of funded) transfer(anyBlock(), hub, buyerAddr[b] as string, rng.int(5, 500) * 1_000_000);
    const merchantZipf = new Zipf(M, o.merchantSkew);
    const cashing = new Set<number>();
    const cashers = Math.min(M, Math.max(2, Math.round(M * 0.005)));
    while (cashing.size < cashers) cashing.add(merchantZipf.rank(rng.float()));
    for (const r of cashing)
      transfer(anyBlock(), merchantAddr[r] as string, hub, rng.int(10, 2_000) * 1_000_000);
    // Its latest depositors, as the indexer keeps them for a wallet that pays a buyer: 60 unrelated wallets,
    // which make it a hub fed by many independent senders (docs/screens.md, "Clusters and hubs").
    for (let d = 0; d < 60; d++) transfer(anyBlock(), freshWallet(), hub, rng.int(10, 5_000) * 1_000_000);
  }
  if (o.funding > 0) {
    // Its own generator, so that the rest of the file is the same bytes whatever the share.
    const frng = new Rng(seed, 4);
    const before = () => frng.int(startBlock - 4 * WEEK_BLOCKS, startBlock - 1);
    const exchanges = Array.from({ length: 8 }, () => freshWallet());
    for (const x of exchanges) {
      wallets.hub.push(x);
      for (let d = 0; d < 60; d++) transfer(before(), freshWallet(), x, frng.int(10, 5_000) * 1_000_000);
    }
    let funder = "";
    let left = 0;
    for (let b = 0; b < o.buyers; b++) {
      if (frng.float() >= o.funding) continue;
      const w = buyerAddr[b] as string;
      const roll = frng.float();
      if (roll < 0.9) {
        transfer(
          before(),
          exchanges[frng.int(0, exchanges.length - 1)] as string,
          w,
          frng.int(5, 500) * 1_000_000,
        );
        if (roll >= 0.7) transfer(before(), freshWallet(), w, frng.int(1, 20) * 1_000_000);
      } else {
        if (left === 0) {
          funder = freshWallet();
          left = frng.int(2, 20);
        }
        transfer(before(), funder, w, frng.int(5, 100) * 1_000_000);
        left--;
      }
    }
  }
  planted.sort((a, b) => a.block - b.block);

  const plantedPayments = planted.reduce((n, p) => n + (p.kind === 0 ? 1 : 0), 0);
  const organic = o.payments - plantedPayments;
  if (organic < 0) {
    throw new RangeError(`payments (${o.payments}) must be at least the ${plantedPayments} planted payments`);
  }

  // --- Output.
  const stream = typeof out === "string" ? fs.createWriteStream(out, { highWaterMark: 4 * CHUNK }) : out;
  const summary: SyntheticSummary = {
    lines: 0,
    bytes: 0,
    payments: 0,
    transfers: 0,
    listings: 0,
    merchantRecords: 0,
    checkpoints: 0,
    window: { startBlock, endBlock, startTime: timeOf(startBlock), endTime },
    roles: Object.fromEntries(
      PLANTED_ROLES.map((role) => [role, roles[role].map((r) => merchantAddr[r] as string)]),
    ) as Record<PlantedRole, string[]>,
    wallets,
  };
  let buf = "";
  const flush = async () => {
    if (buf === "") return;
    summary.bytes += Buffer.byteLength(buf);
    const ok = stream.write(buf);
    buf = "";
    if (!ok) await once(stream, "drain");
  };

  for (const r of [...new Set([...names.keys(), ...claimed, ...held])].sort((a, b) => a - b)) {
    const name = names.get(r);
    buf += `${JSON.stringify({ type: "merchant", address: merchantAddr[r], ...(name ? { name } : {}), claimed: claimed.has(r), held: held.has(r) })}\n`;
    summary.merchantRecords++;
  }
  for (let r = 0; r < M; r++) {
    for (let i = 0; i < (listingCount[r] as number); i++) {
      const h = hash(seed, 0xd35c, r * 8 + i);
      const [route, text] = ENDPOINTS[listingEndpoint[r * MAX_LISTINGS + i] as number] as [string, string];
      const premium = priceOf(r, i) >= 1_000_000;
      let description = premium ? `Batch job: ${text} Up to 1,000 items per call.` : text;
      if (h % 7 === 0) {
        // Some catalogue descriptions run long (reports cut them at 240 characters).
        for (let k = 0; description.length <= 240; k++) {
          description += ` ${LONG_TAIL_TEXT[(h + k) % LONG_TAIL_TEXT.length]}`;
        }
      }
      const method = h % 3 === 0 ? undefined : h % 3 === 1 ? "GET" : "POST";
      buf += `${JSON.stringify({
        type: "listing",
        pay_to: merchantAddr[r],
        resource: `https://${hostOf(r)}${premium ? `${route}/batch` : route}`,
        price_usd: priceOf(r, i) / 1_000_000,
        description,
        ...(method ? { method } : {}),
      })}\n`;
      summary.listings++;
    }
    if (buf.length >= CHUNK) await flush();
  }

  // Organic payments are spread over 10-minute segments with a daily cycle; planted records merge in by block.
  const gen = new Rng(seed, 3);
  const buyerZipf = new Zipf(o.buyers, o.buyerSkew);
  const merchantZipf = new Zipf(M, o.merchantSkew);
  const facilitatorCdf = cdf(facilitatorWeights);
  let counter = 0;
  let cachedBlock = -1;
  let cachedIso = "";
  const iso = (block: number) => {
    if (block !== cachedBlock) {
      cachedBlock = block;
      cachedIso = `${new Date(timeOf(block) * 1000).toISOString().slice(0, 19)}Z`;
    }
    return cachedIso;
  };
  const txHash = () =>
    `0x${hex8(gen.u32())}${hex8(gen.u32())}${hex8(gen.u32())}${hex8(gen.u32())}${hex8(gen.u32())}${hex8(gen.u32())}${hex8(gen.u32())}${hex8(counter++)}`;
  const facilitator = () => {
    const u = gen.float();
    let i = 0;
    while (i < facilitatorCdf.length - 1 && u >= (facilitatorCdf[i] as number)) i++;
    return facilitators[i] as string;
  };
  const paymentLine = (block: number, payer: string, payTo: string, amount: number) => {
    const asset = gen.u32() % 100 === 0 ? `,"asset":"${USDC_CHECKSUMMED}"` : "";
    summary.payments++;
    return `{"type":"payment","chain":"base","tx_hash":"${txHash()}","log_index":${gen.u32() & 255},"block_number":${block},"block_time":"${iso(block)}","facilitator":"${facilitator()}","payer":"${payer}","pay_to":"${payTo}","amount":"${amount}"${asset}}\n`;
  };
  const transferLine = (block: number, from: string, to: string, amount: number) => {
    summary.transfers++;
    return `{"type":"transfer","chain":"base","tx_hash":"${txHash()}","log_index":${gen.u32() & 255},"block_number":${block},"block_time":${timeOf(block)},"from":"${from}","to":"${to}","amount":"${amount}"}\n`;
  };
  let next = 0;
  const plantedUpTo = (block: number) => {
    while (next < planted.length && (planted[next] as Planted).block <= block) {
      const p = planted[next++] as Planted;
      buf +=
        p.kind === 0
          ? paymentLine(p.block, p.from, p.to, p.amount)
          : transferLine(p.block, p.from, p.to, p.amount);
    }
  };

  const SEGMENT = 300;
  const segments = Math.ceil(WEEK_BLOCKS / SEGMENT);
  const weights = new Float64Array(segments);
  let totalWeight = 0;
  for (let s = 0; s < segments; s++) {
    const day = ((timeOf(lo + s * SEGMENT) % 86_400) + 86_400) % 86_400;
    weights[s] = 1 + 0.35 * Math.sin((2 * Math.PI * day) / 86_400 - 1.2);
    totalWeight += weights[s] as number;
  }
  let cumulative = 0;
  let emitted = 0;
  for (let s = 0; s < segments; s++) {
    cumulative += weights[s] as number;
    const target = s === segments - 1 ? organic : Math.round((organic * cumulative) / totalWeight);
    const n = target - emitted;
    emitted = target;
    const first = lo + s * SEGMENT;
    const last = Math.min(endBlock, first + SEGMENT - 1);
    const blocks = new Uint32Array(n);
    for (let i = 0; i < n; i++) blocks[i] = first + Math.floor(gen.float() * (last - first + 1));
    blocks.sort();
    for (let i = 0; i < n; i++) {
      const block = blocks[i] as number;
      plantedUpTo(block);
      const b = buyerZipf.rank(gen.float());
      const u = gen.float();
      const slot = Math.floor((buyerSlots[b] as number) * u * u);
      const m = merchantZipf.rank(unit(hash(seed, b, slot)));
      const v = gen.float();
      const amount = priceOf(m, Math.floor((listingCount[m] as number) * v * v));
      buf += paymentLine(block, buyerAddr[b] as string, merchantAddr[m] as string, amount);
      if (buf.length >= CHUNK) await flush();
    }
    plantedUpTo(last);
    if (buf.length >= CHUNK) await flush();
  }
  plantedUpTo(endBlock);
  buf += `{"type":"checkpoint","chain":"base","block_number":${endBlock},"block_time":"${iso(endBlock)}"}\n`;
  summary.checkpoints++;
  await flush();
  summary.lines =
    summary.payments + summary.transfers + summary.listings + summary.merchantRecords + summary.checkpoints;
  await new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    stream.end(() => resolve());
  });
  if (typeof out === "string") await closed(stream as fs.WriteStream);
  return summary;
}

function closed(stream: fs.WriteStream): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once("close", () => resolve()));
}

type Resolved = Required<Omit<SyntheticOptions, "names" | "claimed" | "held" | "roles" | "probers">> &
  Pick<SyntheticOptions, "names" | "claimed" | "held" | "roles" | "probers">;

function validate(options: SyntheticOptions): Resolved {
  const o = { merchantSkew: 1.1, buyerSkew: 1.15, funding: 0, ...options };
  if (!(o.funding >= 0 && o.funding <= 1)) throw new RangeError("funding must be a share from 0 to 1");
  for (const key of ["merchants", "buyers", "payments", "endBlock"] as const) {
    if (!Number.isSafeInteger(o[key]) || o[key] < 0)
      throw new RangeError(`${key} must be a non-negative integer`);
  }
  if (o.merchants < 12)
    throw new RangeError("merchants must be at least 12 (one per planted role, and prober targets)");
  if (o.buyers < 60) throw new RangeError("buyers must be at least 60 (the exchange funds 60 of them)");
  if (o.endBlock < WEEK_BLOCKS) throw new RangeError(`endBlock must be at least ${WEEK_BLOCKS}`);
  if (o.merchantSkew <= 1 || o.buyerSkew <= 1) throw new RangeError("skews must be above 1");
  return o;
}

function toUnix(t: number | string | Date): number {
  const seconds = typeof t === "number" ? t : Math.floor(new Date(t).getTime() / 1000);
  if (!Number.isSafeInteger(seconds)) throw new RangeError(`endTime ${String(t)} is not a time`);
  return seconds;
}

/** Merchant ranks per role: the explicit ones, then a seeded choice among the rest. */
function assignRoles(o: Resolved, rng: Rng): PlantedRoleCounts {
  const M = o.merchants;
  const counts: Record<PlantedRole, number> = {
    self_payment: Math.max(1, Math.round(M * 0.002)),
    merchant_funded: Math.max(1, Math.round(M * 0.002)),
    ring_transfer: Math.max(1, Math.round(M * 0.001)),
    ring_reciprocal: 2 * Math.max(1, Math.round(M * 0.0005)),
    tiny_repeat: Math.max(1, Math.round(M * 0.003)),
    large_customer: Math.max(1, Math.round(M * 0.001)),
    steady_integration: Math.max(1, Math.round(M * 0.001)),
    metered: Math.max(1, Math.round(M * 0.001)),
  };
  const used = new Set<number>();
  const roles = {} as Record<PlantedRole, number[]>;
  for (const role of PLANTED_ROLES) {
    const explicit = o.roles?.[role];
    if (explicit) {
      for (const r of explicit) {
        if (!Number.isInteger(r) || r < 0 || r >= M)
          throw new RangeError(`roles.${role}: ${r} is not a merchant rank`);
        if (used.has(r)) throw new RangeError(`roles.${role}: merchant ${r} already has a role`);
        used.add(r);
      }
      if (role === "ring_reciprocal" && explicit.length % 2 === 1) {
        throw new RangeError("roles.ring_reciprocal must list pairs of merchants");
      }
    }
    roles[role] = explicit ? [...explicit] : [];
  }
  const order = sample(rng, M, M).filter((r) => !used.has(r));
  let k = 0;
  for (const role of PLANTED_ROLES) {
    if (o.roles?.[role]) continue;
    for (let i = 0; i < counts[role] && k < order.length; i++) roles[role].push(order[k++] as number);
  }
  return { roles };
}

/** `k` distinct integers of 0..n-1 in a seeded order. */
function sample(rng: Rng, n: number, k: number): number[] {
  if (k * 4 < n) {
    const seen = new Set<number>();
    while (seen.size < k) seen.add(rng.int(0, n - 1));
    return [...seen];
  }
  const all = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [all[i], all[j]] = [all[j] as number, all[i] as number];
  }
  return all.slice(0, k);
}

function cdf(weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => {
    acc += w;
    return acc / total;
  });
}

function weighted(values: readonly number[], weights: readonly number[], u: number): number {
  const total = weights.reduce((a, b) => a + b, 0);
  let x = u * total;
  for (let i = 0; i < values.length; i++) {
    x -= weights[i] as number;
    if (x < 0) return values[i] as number;
  }
  return values[values.length - 1] as number;
}

// ---------------------------------------------------------------------------------------------
// CLI: tsx scripts/synthetic.ts --out FILE [--seed N] [--merchants N] [--buyers N] [--payments N]
//      [--end-block N] [--end-time ISO] [--funding SHARE]; prints the summary as one JSON line.

/**
 * Base block 53,350,927 was produced at 2026-11-01T00:00:01Z (genesis 1686789347 + 2 s per block): a week wholly
 * before Denim (2026-11-05), dated at 2 s a block as Base's schedule dates it (src/chain/block-clock.ts).
 */
export const DEFAULT_END_BLOCK = 53_350_927;
export const DEFAULT_END_TIME = "2026-11-01T00:00:01Z";

async function main(argv: string[]): Promise<void> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i] ?? "";
    const value = argv[i + 1];
    if (!key.startsWith("--") || value === undefined)
      throw new Error(`usage: synthetic.ts --out FILE [--flag value]...`);
    flags.set(key.slice(2), value);
  }
  const out = flags.get("out");
  if (!out) throw new Error("--out FILE is required");
  const num = (key: string, fallback: number) => (flags.has(key) ? Number(flags.get(key)) : fallback);
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  const summary = await writeSynthetic(out, {
    seed: num("seed", 1),
    merchants: num("merchants", 50_000),
    buyers: num("buyers", 500_000),
    payments: num("payments", 10_000_000),
    endBlock: num("end-block", DEFAULT_END_BLOCK),
    endTime: flags.get("end-time") ?? DEFAULT_END_TIME,
    funding: num("funding", 0),
  });
  const { roles: _roles, wallets: _wallets, ...counts } = summary;
  process.stdout.write(`${JSON.stringify(counts)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
