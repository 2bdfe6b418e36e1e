/**
 * The simulated population: how many wallets of each behaviour, and how much they buy in a week. The
 * defaults make a full week of about 570 payments on 24 merchants; 114 of them are the evasions'
 * (evasions.ts), which cost about 20 s more of mining a week played in seven days, by the count below, and
 * 58 the cluster evasions' and their genuine look-alikes' (cluster-evasions.ts: 36 of two farms, 22 genuine).
 *
 * Why not more: each payment is a real x402 round trip and settlement, about 0.1 s of the demo's start on
 * two cores, which the README promises in about a minute. (The chain's blocks cost next to nothing since
 * they carry no state root: chain/devnet/forked.ts. Before, anvil 1.7.1 rehashed its whole state for each
 * of the week's 302,400 blocks, and each payment's nonce slot added about 0.15 s of mining.)
 */

import fs from "node:fs";
import { z } from "zod";
import { AppError } from "../common/errors.ts";

const count = (max: number) => z.number().int().min(0).max(max);

export const MixSchema = z
  .object({
    seed: z.number().int().min(0).default(402),
    /** Genuine: agents calling a few favourite merchants at listed prices ($0.001 to $0.05). */
    agents: count(500).default(16),
    /** Mean paid calls of one agent in a week (each agent draws its own, from half to one and a half times). */
    agentCallsPerWeek: count(10_000).default(12),
    /** Genuine: agents' calls to metered (upto) endpoints, each charged what it used. */
    meteredCallsPerWeek: count(10_000).default(24),
    /** Genuine: one customer buying premium endpoints ($0.10 and up), a large share of its merchants' revenue. */
    largeCustomerCallsPerWeek: count(10_000).default(20),
    /** Genuine: one integration paying a $0.001 endpoint every `integrationEveryMinutes`, funded from the exchange. */
    integrationEveryMinutes: z.number().int().min(0).max(10_080).default(120),
    /** Screened: one wallet paying a sub-$0.001 endpoint over and over (tiny_repeat). */
    farmCallsPerWeek: count(10_000).default(24),
    /** Screened: a merchant paying its own endpoints (self_payment). */
    selfPaymentsPerWeek: count(10_000).default(10),
    /** Screened: wallets a merchant funds with plain transfers, which then pay it (merchant_funded). */
    fundedWallets: count(50).default(3),
    fundedCallsPerWeek: count(10_000).default(5),
    /** Screened: a wallet paying every merchant once (prober), once a week. */
    probers: count(5).default(1),
    /** Screened: a merchant's money coming back through a relay wallet, and two merchants paying each other (ring). */
    ringCallsPerWeek: count(10_000).default(15),
    pairCallsPerWeek: count(10_000).default(7),
    /** Wallets the exchange pays out to besides the buyers, as an exchange's other customers withdraw. */
    exchangeCustomers: count(500).default(50),
    /**
     * Unrelated wallets, each minted its own USDC, that deposit into the exchange before it pays anyone out:
     * what makes it a hub by the screens' rule (50 or more independent senders), so that the buyers it funds
     * are each a buyer of their own rather than one cluster.
     */
    exchangeDepositors: count(500).default(60),
    // Evasions (src/demo/evasions.ts): the screens' rules read by a gamer, each beside genuine demand.
    /** Screened: a merchant's money through five private wallets to a buyer, which pays it (merchant_funded). */
    deepChainCallsPerWeek: count(10_000).default(6),
    /** Screened: wallets a merchant funds in the chain's first slots, silent until the week's last days. */
    dormantWallets: count(50).default(2),
    dormantCallsPerWeek: count(10_000).default(3),
    /** Screened: a private wallet fed by a merchant alone pays these wallets, each paying the merchant. */
    distributorWallets: count(200).default(36),
    /** Calls a week of each of the distributor's wallets. */
    distributorCallsPerWeek: count(10_000).default(2),
    /** Screened: farm wallets funded from one farmer, each paying tiny metered charges (tiny_repeat by cluster). */
    splitFarmWallets: count(50).default(8),
    /** Calls a week of each split-farm wallet. */
    splitFarmCallsPerWeek: count(10_000).default(2),
    /** Screened: one wallet paying tiny metered charges of varying amounts (tiny_repeat whatever the amounts). */
    variedFarmCallsPerWeek: count(10_000).default(14),
    // Payment channels (src/demo/channels.ts).
    /** Genuine: agents paying one merchant through a payment channel, a session (deposit, vouchers, refund) a day. */
    channelAgents: count(50).default(3),
    /** Mean calls a week of each channel agent, each a voucher. */
    channelCallsPerWeek: count(10_000).default(28),
    /** Screened: a merchant's money in a wallet that pays it back through channels (merchant_funded). */
    channelFarmCallsPerWeek: count(10_000).default(12),
    // Cluster evasions and their genuine look-alikes (src/demo/cluster-evasions.ts).
    /** Screened: farm wallets each funded a third by each of three feeders of one owner, on different days. */
    thirdsFarmWallets: count(50).default(6),
    /** Calls a week of each thirds-farm wallet. */
    thirdsFarmCallsPerWeek: count(10_000).default(3),
    /** Screened: farm wallets each funded 40% by one owner and 60% from the exchange. */
    topupFarmWallets: count(50).default(6),
    topupFarmCallsPerWeek: count(10_000).default(3),
    /**
     * Screened: farm wallets the exchange alone pays out within one minute, then paying alike. Fifteen: the
     * demo's week is small, and the other farms pay the same band (cluster-evasions.ts), so that the behaviour
     * rule's null model needs that many for a strong link (a chance of about 1e-10; six leave 1e-4).
     */
    burstFarmWallets: count(50).default(15),
    burstFarmCallsPerWeek: count(10_000).default(3),
    /** Genuine: agents a friend each tops up beside the exchange, with less than a fifth of their money. */
    friendTopups: count(50).default(3),
    /** Genuine: wallets paid out with the agents that send the farms' metered endpoint work of varying size. */
    meteredRegulars: count(50).default(5),
    meteredRegularCallsPerWeek: count(10_000).default(2),
    /** Genuine: a company's agents funded from one treasury, paying the farms' merchant its listed price. */
    companyAgents: count(50).default(3),
    companyCallsPerWeek: count(10_000).default(4),
  })
  .strict();

export type Mix = z.infer<typeof MixSchema>;

export const DEFAULT_MIX: Mix = MixSchema.parse({});

/**
 * Evasions a world saved before they existed did not play: resumed, it plays none, as it did (its mix lacks
 * these fields, and their defaults would fund wallets in slots it has already played).
 */
export const EVASIONS_OFF = {
  exchangeDepositors: 0,
  deepChainCallsPerWeek: 0,
  dormantWallets: 0,
  dormantCallsPerWeek: 0,
  distributorWallets: 0,
  distributorCallsPerWeek: 0,
  splitFarmWallets: 0,
  splitFarmCallsPerWeek: 0,
  variedFarmCallsPerWeek: 0,
} as const satisfies Partial<Mix>;

/** Likewise the payment channels, for a world saved before them: it plays none. */
export const CHANNELS_OFF = {
  channelAgents: 0,
  channelCallsPerWeek: 0,
  channelFarmCallsPerWeek: 0,
} as const satisfies Partial<Mix>;

/** Likewise the cluster evasions and their look-alikes, for a world saved before them: it plays none. */
export const CLUSTER_EVASIONS_OFF = {
  thirdsFarmWallets: 0,
  thirdsFarmCallsPerWeek: 0,
  topupFarmWallets: 0,
  topupFarmCallsPerWeek: 0,
  burstFarmWallets: 0,
  burstFarmCallsPerWeek: 0,
  friendTopups: 0,
  meteredRegulars: 0,
  meteredRegularCallsPerWeek: 0,
  companyAgents: 0,
  companyCallsPerWeek: 0,
} as const satisfies Partial<Mix>;

/** Fields that count calls or wallets, which `--scale` multiplies. */
const SCALED = [
  "agentCallsPerWeek",
  "meteredCallsPerWeek",
  "largeCustomerCallsPerWeek",
  "farmCallsPerWeek",
  "selfPaymentsPerWeek",
  "fundedCallsPerWeek",
  "ringCallsPerWeek",
  "pairCallsPerWeek",
  "channelCallsPerWeek",
] as const;

/**
 * The mix from a JSON file (`--mix FILE`, fields as above, the rest default) scaled by `scale` (calls per
 * week times `scale`; the screens' minimum counts are kept, so a small run still trips them).
 */
export function loadMix(file: string | undefined, scale = 1): Mix {
  let base = DEFAULT_MIX;
  if (file !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
      throw new MixError(`--mix ${file}: ${(error as Error).message}`);
    }
    const parsed = MixSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new MixError(`--mix ${file}: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`);
    }
    base = parsed.data;
  }
  if (!(scale > 0 && scale <= 10)) throw new MixError(`--scale must be above 0 and at most 10, not ${scale}`);
  if (scale === 1) return base;
  const scaled = { ...base };
  for (const key of SCALED) scaled[key] = Math.max(1, Math.round(base[key] * scale));
  // The tiny-repeat screen needs 10 tiny payments in a window: keep a margin whatever the scale.
  scaled.farmCallsPerWeek = Math.max(scaled.farmCallsPerWeek, 14);
  // An evasion turned off stays off; one played keeps the counts its screen needs (10 tiny payments a cluster).
  for (const key of ["deepChainCallsPerWeek", "dormantCallsPerWeek", "distributorWallets"] as const) {
    if (base[key] > 0) scaled[key] = Math.max(1, Math.round(base[key] * scale));
  }
  // Wallets are keyed by their place in the population, and the schema's bound keeps the list short.
  scaled.distributorWallets = Math.min(scaled.distributorWallets, 200);
  if (base.splitFarmWallets > 0 && base.splitFarmCallsPerWeek > 0) {
    scaled.splitFarmCallsPerWeek = Math.max(
      Math.round(base.splitFarmCallsPerWeek * scale),
      Math.ceil(14 / base.splitFarmWallets),
    );
  }
  if (base.variedFarmCallsPerWeek > 0) {
    scaled.variedFarmCallsPerWeek = Math.max(Math.round(base.variedFarmCallsPerWeek * scale), 14);
  }
  // The cluster farms likewise (10 tiny payments a cluster), and their look-alikes keep a call a week.
  for (const [wallets, calls] of [
    ["thirdsFarmWallets", "thirdsFarmCallsPerWeek"],
    ["topupFarmWallets", "topupFarmCallsPerWeek"],
    ["burstFarmWallets", "burstFarmCallsPerWeek"],
  ] as const) {
    if (base[wallets] > 0 && base[calls] > 0) {
      scaled[calls] = Math.max(Math.round(base[calls] * scale), Math.ceil(14 / base[wallets]));
    }
  }
  for (const key of ["meteredRegularCallsPerWeek", "companyCallsPerWeek"] as const) {
    if (base[key] > 0) scaled[key] = Math.max(1, Math.round(base[key] * scale));
  }
  // The channel farm's claims are few: a farm played keeps enough calls to show in every window.
  if (base.channelFarmCallsPerWeek > 0) {
    scaled.channelFarmCallsPerWeek = Math.max(Math.round(base.channelFarmCallsPerWeek * scale), 6);
  }
  scaled.integrationEveryMinutes =
    base.integrationEveryMinutes === 0 ? 0 : Math.round(base.integrationEveryMinutes / Math.min(scale, 1));
  return scaled;
}

export class MixError extends AppError {
  constructor(message: string) {
    super(400, "bad_mix", message);
  }
}

/**
 * The population a chain played beside Base pays with (issue 67 item 7): about a seventh of Base's week, as the
 * peers measure the chains beside Base (merona's clean volume on Polygon about a tenth of Base's), drawn from a
 * seed of its own: a quarter of the agents, of the metered and the large customer's calls, of the ring's and the
 * pair's, the integration a quarter as often, and the screens' first patterns at the least that trips them (the
 * tiny-repeat farm's 14 calls, a merchant paying itself, one wallet it funds), beside an exchange with all of
 * Base's depositors, without which its buyers would be one cluster. No prober (a payment to every merchant, a
 * tenth of such a week), evasions, channels or cluster evasions: those are Base's week's, and each chain's
 * screens run within its own data. Small, so that the first start does not wait on it (docs/benchmarks-log.md).
 */
export function furtherMix(mix: Mix, index: number): Mix {
  const quarter = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round(n / 4)));
  return {
    ...mix,
    ...EVASIONS_OFF,
    ...CHANNELS_OFF,
    ...CLUSTER_EVASIONS_OFF,
    exchangeDepositors: mix.exchangeDepositors,
    seed: mix.seed + 1 + index,
    agents: quarter(mix.agents),
    meteredCallsPerWeek: quarter(mix.meteredCallsPerWeek),
    largeCustomerCallsPerWeek: quarter(mix.largeCustomerCallsPerWeek),
    integrationEveryMinutes: Math.min(mix.integrationEveryMinutes * 4, 10_080),
    farmCallsPerWeek: Math.min(mix.farmCallsPerWeek, 14),
    selfPaymentsPerWeek: quarter(mix.selfPaymentsPerWeek),
    fundedWallets: Math.min(mix.fundedWallets, 1),
    probers: 0,
    ringCallsPerWeek: quarter(mix.ringCallsPerWeek),
    pairCallsPerWeek: quarter(mix.pairCallsPerWeek),
    exchangeCustomers: quarter(mix.exchangeCustomers),
  };
}
