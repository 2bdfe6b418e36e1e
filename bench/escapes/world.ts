/**
 * The week every escape is played in: the gamer's two merchants with genuine buyers of their own, the exchanges,
 * a crowd of other merchants' buyers (the behaviour rule's "payers outside the group") and the genuine
 * look-alikes, each a group of wallets whose real revenue the screens must leave alone whatever a strategy plays
 * beside it. They are all in every week, so every strategy is checked against every look-alike; each strategy
 * names the ones it imitates (`Strategy.lookAlikes`), whose loss the table prints.
 *
 * Blocks are 2 s apart and END is a UTC midnight (test/helpers/data.ts): a day is 43,200 blocks.
 */
import { BASE_USDC } from "../../src/chain/base.ts";
import { ARBITRUM_RECORD } from "../../src/chain/chains.ts";
import { KNOWN_HUBS } from "../../src/chain/hubs.ts";
import type { WindowBounds } from "../../src/reports/week/aggregates.ts";
import { addr, END, payment, START, timeOf, transfer, WINDOW_BOUNDS } from "../../test/helpers/data.ts";
import { DAY, genuine, listing, payers, rng, WEEK, wallets } from "../../test/helpers/scenarios.ts";
import type { PayerGroup } from "../../test/helpers/window-flags.ts";

export { DAY, WEEK };
export const HOUR = DAY / 24;
export const MINUTE = HOUR / 60;
export const USD = 1_000_000;

/** The gamer's merchant: it lists $0.01 and $0.05, and has 30 genuine buyers of its own. */
export const M = addr("escape-merchant");
/** The gamer's merchant paid through channels: it lists $0.01, and has 10 genuine channel buyers. */
export const MC = addr("escape-channel-merchant");
/** The gamer's merchant that lists nothing: its price is what its independent buyers pay (30 of them, $0.01-0.05). */
export const U = addr("escape-unlisted");
/** The gamer's merchant on Arbitrum: it lists $0.05, and has 30 genuine buyers of its own there. */
export const MA = addr("escape-arbitrum-merchant");
/** A listed hub by its label (src/chain/base-hubs.json). */
const listed = (label: string) => {
  const hub = KNOWN_HUBS.find((h) => h.label === label);
  if (!hub) throw new Error(`no listed hub labelled "${label}"`);
  return hub.address;
};
/**
 * Listed exchanges: hubs by their label, no funder of anyone, not followed. (The first was the Across SpokePool,
 * a bridge, until the red team played bridges that are no CCTP: an exchange is an exchange now.)
 */
export const EXCHANGES = ["Binance 76", "Bybit Base 8", "Gate.io Base 7", "KuCoin Base 9"].map(listed);
export const CEX = EXCHANGES[0] as string;
/**
 * Listed bridges that are no CCTP, on Base: Across's SpokePool (a deposit goes in; on the way back a relayer fills
 * from its own wallet), Relay's solver (it fills from its own wallet) and Stargate's USDC pool (money goes in and
 * comes out of the one pool). No message names both sides of a move through them.
 */
export const BRIDGES = {
  across: listed("Across SpokePool"),
  relay: listed("Relay Solver"),
  stargate: listed("Stargate USDC Pool"),
};
/**
 * An exchange on Polygon PoS, labelled by the operator (a `hub` line: src/chain/polygon-hubs.json lists none yet):
 * a farm's funding on the other side of a bridge.
 */
export const POLYGON_EXCHANGE = addr("escape-polygon-exchange");
/**
 * A stand-in for Circle's TokenMinter on Base, which a CCTP burn sends the USDC to before burning it. The indexer
 * keeps the burn's first transfer (from a wallet seen in x402) and the mints (0x0 to a payer: its funding), not
 * the minter's own burn to 0x0 (no wallet seen in x402 is on it): the weeks here hold what it keeps.
 */
export const MINTER = addr("escape-cctp-token-minter");
/**
 * An exchange on Arbitrum that no list labels: 60 depositors of its own there make it a hub by the data (`fed`), as
 * an exchange's deposits make one on Base.
 */
export const ARBITRUM_EXCHANGE = addr("escape-arbitrum-exchange");
export const ZERO = "0x0000000000000000000000000000000000000000";

/** CCTP's domains of the chains the bench bridges between (developers.circle.com, "Supported chains and domains"). */
export const DOMAIN = { base: 6, polygon: 7, arbitrum: 3 } as const;
type Chain = keyof typeof DOMAIN;
let nonces = 0;

/**
 * Arbitrum One's blocks here: four a second, the four sharing one timestamp (a stamped clock), so that a Base block's
 * 2 s are eight of them. `k` is the block's place among those eight (its second the Base block's, or the next).
 */
export const arbitrumBlock = (block: number, k = 0) => ({
  block_number: block * 8 + k,
  block_time: timeOf(block) + Math.floor(k / 4),
});

/**
 * A record of another chain than Base, at the Base block's time (the import takes a stamped chain's times as
 * written): on Polygon at the same block, on Arbitrum at its own (`arbitrumBlock`, `k` its place in the two seconds).
 */
export const on = <T extends object>(chain: Chain, record: T, k = 0) => {
  const at = (record as { block_number?: number }).block_number;
  return chain === "arbitrum" && at !== undefined
    ? { ...record, chain, ...arbitrumBlock(at, k) }
    : { ...record, chain };
};

/**
 * The week on Arbitrum that the Base week is: it ends with the last block of END's second (a stamped chain's week
 * ends with its end block's second, docs/report.md "Window") and starts after the last of START's.
 */
export const ARBITRUM_WINDOW: WindowBounds = {
  ...WINDOW_BOUNDS,
  chain: ARBITRUM_RECORD,
  startBlock: arbitrumBlock(START, 3).block_number,
  endBlock: arbitrumBlock(END, 3).block_number,
};

/** The side of a CCTP message that `chain` logs, in the transaction of its USDC transfer `t`. */
function message(
  chain: Chain,
  t: { tx_hash: string; block_number: number; block_time: number },
  side: "burn" | "mint",
  route: { from: Chain; to: Chain },
  sender: string,
  recipient: string,
  amount: number,
  nonce: number,
) {
  return {
    type: "bridge_message",
    chain,
    tx_hash: t.tx_hash,
    log_index: 9,
    block_number: t.block_number,
    block_time: t.block_time,
    side,
    source_domain: DOMAIN[route.from],
    destination_domain: DOMAIN[route.to],
    nonce: String(nonce),
    sender,
    recipient,
    amount: String(amount),
  };
}

/**
 * A CCTP transfer from `sender` on `from` to `recipient` on `to`: on the burn's chain, the depositor's USDC to the
 * minter and the burn's message; on the mint's, USDC from 0x0 to the recipient and the mint's message, `delay`
 * blocks later. `sides` says which chains' records to write (what the store holds): both by default.
 */
export function bridge(
  route: { from: Chain; to: Chain },
  sender: string,
  recipient: string,
  amount: number,
  block: number,
  delay = 600,
  sides: readonly Chain[] = [route.from, route.to],
): object[] {
  const nonce = ++nonces;
  const out: object[] = [];
  if (sides.includes(route.from)) {
    const t = on(route.from, transfer(sender, MINTER, amount, block));
    out.push(t, message(route.from, t, "burn", route, sender, recipient, amount, nonce));
  }
  if (sides.includes(route.to)) {
    const t = on(route.to, transfer(ZERO, recipient, amount, block + delay));
    out.push(t, message(route.to, t, "mint", route, sender, recipient, amount, nonce));
  }
  return out;
}

/** What some payments paid, in atomic units. */
export const atomic = (rs: readonly object[]) =>
  rs.reduce((s, r) => s + Number((r as { amount: string }).amount), 0);
/** Exact payments: their amount is what the merchant's server asked for. */
export const exact = (rs: readonly object[]) => rs.map((r) => ({ ...r, scheme: "exact" }));

/** `each` payments of `amount` from `wallet` to `merchant`, `gap` blocks apart from `from`. */
export function spend(
  wallet: string,
  merchant: string,
  each: number,
  amount: number,
  from: number,
  gap: number,
) {
  return Array.from({ length: each }, (_, i) =>
    payment({ payer: wallet, payTo: merchant, amount, block: from + i * gap, scheme: "exact" }),
  );
}

/** Tiny metered charges: `calls` a wallet of $0.0001-0.002 at `merchant` across the window, never one amount twice in a row. */
export function tinyCharges(merchant: string, ws: readonly string[], seed: number, calls = 60) {
  const next = rng(seed);
  return payers(merchant, ws, calls, () => 100 + next(1_900));
}

/** A batch-settlement channel from `payer` to `receiver`: its config, its deposit and its claims, as the escrow logs them. */
export function channel(
  label: string,
  payer: string,
  receiver: string,
  deposit: number,
  at: number,
  claims: number[],
) {
  const id = `0x${addr(label).slice(2)}${"0".repeat(24)}`;
  const relayer = addr("escape-channel-relayer");
  const event = (block: number, name: string, amount: number, n: number) => ({
    type: "channel_event",
    chain: "base",
    tx_hash: `0x${addr(`${label}-tx-${n}`).slice(2)}${"0".repeat(24)}`,
    log_index: 3,
    block_number: block,
    block_time: timeOf(block),
    event: name,
    channel: id,
    ...(name !== "created" && { sender: name === "deposited" ? payer : relayer }),
    amount: String(amount),
  });
  return [
    {
      type: "channel",
      chain: "base",
      channel: id,
      payer,
      payer_authorizer: payer,
      receiver,
      receiver_authorizer: relayer,
      token: BASE_USDC,
      withdraw_delay: 900,
      salt: `0x${"00".repeat(31)}01`,
      block_number: at,
      tx_hash: `0x${addr(`${label}-tx-0`).slice(2)}${"0".repeat(24)}`,
    },
    event(at, "created", 0, 0),
    { ...event(at, "deposited", deposit, 0), log_index: 4 },
    ...claims.map((amount, i) => event(START + 1_000 + i * DAY, "claimed", amount, i + 1)),
  ];
}

export interface LookAlike extends PayerGroup {
  /** Why it is here: what it shares with a strategy, and what sets it apart. */
  note: string;
  /** Paying on Arbitrum: read where a strategy builds Arbitrum's week (`Strategy.chain`). */
  chain?: "arbitrum";
}

/** The look-alikes by name, and the records of the whole shared week. */
export interface World {
  records: object[];
  lookAlikes: Map<string, LookAlike>;
}

export function world(): World {
  const records: object[] = [];
  const lookAlikes = new Map<string, LookAlike>();
  const add = (name: string, group: LookAlike, rs: readonly object[]) => {
    lookAlikes.set(name, group);
    records.push(...rs);
  };
  const next = rng(84);

  // The gamer's merchants and their genuine buyers.
  const mBuyers = genuine(M, [10_000, 50_000], 30, 841);
  records.push(listing(M, "item", 0.01), listing(M, "report", 0.05));
  add(
    "m's buyers",
    {
      wallets: payersOf(mBuyers.records),
      merchant: M,
      note: "the gamer's merchant's 30 customers at its listed prices",
    },
    exact(mBuyers.records),
  );
  const uBuyers = genuine(U, [10_000, 20_000, 50_000], 30, 842);
  add(
    "u's buyers",
    {
      wallets: payersOf(uBuyers.records),
      merchant: U,
      note: "the unlisted merchant's 30 customers, metered $0.01-0.05",
    },
    uBuyers.records,
  );
  const sampler = addr("escape-sampler");
  add(
    "a sampling agent",
    { wallets: [sampler], merchant: M, note: "15 services twice at $0.03: a prober's look, short of one" },
    [
      transfer(addr("escape-sampler-source"), sampler, 5 * USD, START - WEEK),
      ...Array.from({ length: 15 }, (_, j) =>
        payers(j === 0 ? M : addr(`escape-sampled-${j}`), [sampler], 2, () => 30_000),
      ).flat(),
    ],
  );

  records.push({
    type: "hub",
    chain: "polygon",
    address: POLYGON_EXCHANGE,
    label: "An exchange's hot wallet on Polygon",
    kind: "exchange",
    source: "https://example.org/escape-polygon-exchange",
  });

  // The rest of the week: 300 buyers of 30 other merchants.
  records.push(
    ...wallets("escape-crowd", 300).flatMap((w, i) =>
      payers(addr(`escape-other-${i % 30}`), [w], 2, () => 5_000 + next(50_000)),
    ),
  );

  // A merchant that deposits its takings at the exchange every morning, whose customers withdraw from it, a
  // third of them minutes after its deposits, and spend it there at its listed price.
  const m2 = addr("escape-deposits-daily");
  const m2Customers = wallets("escape-deposits-daily-customer", 30);
  add(
    "customers of an exchange the merchant deposits at",
    {
      wallets: m2Customers,
      merchant: m2,
      // Happenstance, not a habit: three customers withdraw minutes after the deposit, on three days of the
      // week. One withdrawing minutes after it on every day (as first written here) is the round trip's own
      // signature, and since 1.8.0 is read as the merchant's money coming back (docs/screens.md, "Money that
      // comes back through a hub", its known false positives).
      note: "a merchant deposits its takings at the exchange daily; three of its customers happen to withdraw minutes after",
    },
    [
      listing(m2, "item", 0.05),
      ...Array.from({ length: 7 }, (_, d) => transfer(m2, CEX, 3 * USD, START + d * DAY + 9 * HOUR)),
      ...m2Customers.flatMap((w, i) => {
        const at = i < 3 ? START + 2 * i * DAY + 9 * HOUR + 10 * MINUTE + i : START + next(5 * DAY);
        return [transfer(CEX, w, USD, at), ...spend(w, m2, 20, 50_000, at + 100, 15 * MINUTE)];
      }),
    ],
  );

  // The same through a bridge: the merchant sends its takings to its own wallet on Arbitrum every morning, and
  // customers bridged in from wallets of their own there (each funded on Arbitrum by a source of its own), a third
  // of them 20 minutes after its burns, spend at its listed price.
  const m3 = addr("escape-bridges-daily");
  const m3Customers = wallets("escape-bridges-daily-customer", 20);
  add(
    "bridged-in customers of a merchant that bridges out",
    {
      wallets: m3Customers,
      merchant: m3,
      note: "a merchant burns its takings by CCTP daily; customers minted 20 minutes after spend at its price",
    },
    [
      listing(m3, "item", 0.05),
      ...Array.from({ length: 7 }, (_, d) =>
        bridge({ from: "base", to: "arbitrum" }, m3, m3, 2 * USD, START + d * DAY + 9 * HOUR),
      ).flat(),
      ...m3Customers.flatMap((w, i) => {
        const at = i < 7 ? START + (i % 7) * DAY + 9 * HOUR + 20 * MINUTE + i : START + next(5 * DAY);
        return [
          on("arbitrum", transfer(addr(`escape-bridges-daily-source-${i}`), w, 2 * USD, START - WEEK + i)),
          ...bridge({ from: "arbitrum", to: "base" }, w, w, USD, at - 600),
          ...spend(w, m3, 20, 50_000, at + 100, 15 * MINUTE),
        ];
      }),
    ],
  );

  // The same through an exchange on Arbitrum: the merchant bridges its takings to its own wallet there every
  // morning and deposits them at the exchange; 20 customers withdraw from it there (three of them minutes after
  // its deposits, on three days) and bridge to themselves on Base, and spend at its listed price.
  records.push(
    ...wallets("escape-arbitrum-depositor", 60).flatMap((w, i) => [
      on(
        "arbitrum",
        transfer(addr(`escape-arbitrum-depositor-source-${i}`), w, (20 + i) * USD, START - 12 * WEEK + i),
      ),
      on("arbitrum", transfer(w, ARBITRUM_EXCHANGE, (20 + i) * USD, START - 11 * WEEK + i)),
    ]),
  );
  // Draws of their own, so that the week's other look-alikes stay as they were.
  const nextA = rng(848);
  const m8 = addr("escape-arbitrum-exchange-depositor");
  const m8Customers = wallets("escape-arbitrum-exchange-customer", 20);
  add(
    "bridged-in customers of an Arbitrum exchange the merchant deposits at",
    {
      wallets: m8Customers,
      merchant: m8,
      note: "a merchant bridges its takings to its own Arbitrum wallet daily and deposits them at an exchange there; its customers withdraw from it (three minutes after, on three days) and bridge in",
    },
    [
      listing(m8, "item", 0.05),
      ...Array.from({ length: 7 }, (_, d) => {
        const at = START + d * DAY + 9 * HOUR;
        return [
          ...bridge({ from: "base", to: "arbitrum" }, m8, m8, 3 * USD, at, 30),
          on("arbitrum", transfer(m8, ARBITRUM_EXCHANGE, 3 * USD, at + 60)),
        ];
      }).flat(),
      ...m8Customers.flatMap((w, i) => {
        const at = i < 3 ? START + 2 * i * DAY + 9 * HOUR + 10 * MINUTE + i : START + nextA(5 * DAY);
        return [
          on("arbitrum", transfer(ARBITRUM_EXCHANGE, w, USD, at)),
          ...bridge({ from: "arbitrum", to: "base" }, w, w, USD, at + 30, 30),
          ...spend(w, m8, 20, 50_000, at + 200, 15 * MINUTE),
        ];
      }),
    ],
  );

  // On Arbitrum: the gamer's merchant there and its buyers, and a merchant that deposits its takings at the
  // exchange there every morning, whose customers withdraw from it (three minutes after, on three days) and
  // spend it at its listed price: the exchange look-alike on a chain whose blocks share their seconds.
  const nextC = rng(850);
  const arbitrum = (rs: readonly object[]) => rs.map((r) => on("arbitrum", r));
  records.push(listing(MA, "item", 0.05), ...arbitrum(exact(genuine(MA, [50_000], 30, 851).records)));
  const m10 = addr("escape-arbitrum-deposits-daily");
  const m10Customers = wallets("escape-arbitrum-deposits-daily-customer", 30);
  add(
    "customers of an Arbitrum exchange the merchant deposits at, on Arbitrum",
    {
      wallets: m10Customers,
      merchant: m10,
      chain: "arbitrum",
      note: "a merchant on Arbitrum deposits its takings at the exchange there daily; three of its customers happen to withdraw minutes after",
    },
    [
      listing(m10, "item", 0.05),
      ...arbitrum(
        Array.from({ length: 7 }, (_, d) =>
          transfer(m10, ARBITRUM_EXCHANGE, 3 * USD, START + d * DAY + 9 * HOUR),
        ),
      ),
      ...m10Customers.flatMap((w, i) => {
        const at = i < 3 ? START + 2 * i * DAY + 9 * HOUR + 10 * MINUTE + i : START + nextC(5 * DAY);
        return arbitrum([
          transfer(ARBITRUM_EXCHANGE, w, USD, at),
          ...spend(w, m10, 20, 50_000, at + 100, 15 * MINUTE),
        ]);
      }),
    ],
  );

  // The same through bridges that are no CCTP: the merchant sends its takings out through Across every morning,
  // and its customers come in through Relay or Stargate at their own times (three of them minutes after its
  // deposits, on three days), and spend at its listed price.
  const nextB = rng(849);
  const m9 = addr("escape-liquidity-bridge-merchant");
  const m9Customers = wallets("escape-liquidity-bridge-customer", 20);
  add(
    "customers bridged in by pools and relayers beside a merchant that bridges out",
    {
      wallets: m9Customers,
      merchant: m9,
      note: "a merchant sends its takings out through Across daily; customers filled by Relay or Stargate (three minutes after, on three days) spend at its price",
    },
    [
      listing(m9, "item", 0.05),
      ...Array.from({ length: 7 }, (_, d) =>
        transfer(m9, BRIDGES.across, 3 * USD, START + d * DAY + 9 * HOUR),
      ),
      ...m9Customers.flatMap((w, i) => {
        const at = i < 3 ? START + 2 * i * DAY + 9 * HOUR + 10 * MINUTE + i : START + nextB(5 * DAY);
        return [
          transfer(i % 2 === 0 ? BRIDGES.relay : BRIDGES.stargate, w, 997_000, at),
          ...spend(w, m9, 19, 50_000, at + 100, 15 * MINUTE),
        ];
      }),
    ],
  );

  // A launch: metered customers of one merchant funded every way a farm is, in bursts, beside customers funded
  // from wallets of their own; all of them pay $0.0002-0.0082 charges, the merchant's whole clientele alike.
  const metered = addr("escape-metered");
  const launch = (name: string, note: string, ws: readonly string[], funding: object[]) => {
    const pays = ws.flatMap((w) => payers(metered, [w], 5 + next(20), () => 200 + next(8_000)));
    add(name, { wallets: ws, merchant: metered, note }, [...funding, ...pays]);
  };
  const hour = wallets("escape-launch-hour", 20);
  launch(
    "a launch's customers from one exchange hour",
    "20 withdrawn from the exchange in one hour",
    hour,
    hour.map((w, i) => transfer(CEX, w, 5 * USD, START - WEEK + 1_000 + i * 60)),
  );
  const three = wallets("escape-launch-three", 12);
  launch(
    "a launch's customers from three exchanges",
    "12 withdrawn in one hour, 4 from each of three exchanges",
    three,
    three.map((w, i) =>
      transfer(EXCHANGES[1 + (i % 3)] as string, w, 5 * USD, START - WEEK + 2_000 + i * 60),
    ),
  );
  // Bridged in from Polygon within one hour, each from its own wallet there: withdrawn from a Polygon exchange on
  // days of its own (the first six) or funded by a source of its own.
  const bridged = wallets("escape-launch-bridged", 12);
  launch(
    "a launch's customers bridged in",
    "12 bridged from Polygon by CCTP in one hour, funded there on days of their own",
    bridged,
    bridged.flatMap((w, i) => [
      on(
        "polygon",
        transfer(
          i < 6 ? POLYGON_EXCHANGE : addr(`escape-launch-bridged-source-${i}`),
          w,
          5 * USD,
          START - 8 * WEEK + i * 5 * DAY,
        ),
      ),
      ...bridge({ from: "polygon", to: "base" }, w, w, 5 * USD, START - WEEK + 3_000 + i * 60),
    ]),
  );
  const leads = wallets("escape-launch-lead", 5);
  const agents = wallets("escape-launch-agent", 10);
  launch(
    "a launch's customers topped up by team leads",
    "5 leads withdrawn in one minute, each funding 2 agents",
    agents,
    [
      ...leads.map((w, i) => transfer(CEX, w, 10 * USD, START - 2 * WEEK + i)),
      ...agents.map((w, i) => transfer(leads[i >> 1] as string, w, 5 * USD, START - 2 * WEEK + DAY + i)),
    ],
  );
  const own = wallets("escape-launch-own", 20);
  launch(
    "a launch's customers funded by their own",
    "20 each from a wallet of its own",
    own,
    own.map((w, i) => transfer(addr(`escape-launch-own-source-${i}`), w, 5 * USD, START - WEEK + i * 20_000)),
  );

  // Customers a merchant refunded at the end of last week (an outage's credit), who buy again with it.
  const m4 = addr("escape-refunds");
  const refunded = wallets("escape-refunded", 10);
  add(
    "customers refunded last week who buy again",
    {
      wallets: refunded,
      merchant: m4,
      note: "each paid $1 last week, was refunded it Sunday night and spends it again",
    },
    [
      listing(m4, "item", 0.05),
      ...refunded.flatMap((w, i) => [
        transfer(CEX, w, USD, START - WEEK - DAY + i * 1_000),
        ...spend(w, m4, 20, 50_000, START - WEEK + i * 100, 4 * HOUR),
        transfer(m4, w, USD, START - HOUR + i),
        ...spend(w, m4, 20, 50_000, START + 1_000 + i * 100, 4 * HOUR),
      ]),
    ],
  );

  // Agents withdrawn in one minute that pay a merchant's metered charges in one band and spend more than half
  // their money at another service, which refunds a fifth of it (unused credit).
  const u7 = addr("escape-agents-metered");
  const s7 = addr("escape-agents-service");
  const agents7 = wallets("escape-agent", 12);
  add(
    "agents that spend most elsewhere, refunded in part",
    {
      wallets: agents7,
      merchant: u7,
      note: "12 withdrawn in one minute, $0.06 in metered charges here and $0.08 at a service that refunds a fifth",
    },
    [
      ...genuine(u7, [10_000, 20_000, 50_000], 30, 843).records,
      listing(s7, "call", 0.01),
      ...agents7.flatMap((w, i) => [
        transfer(CEX, w, USD, START - 2 * WEEK + i * 2),
        ...payers(s7, [w], 8, () => 10_000),
        transfer(s7, w, 16_000, END - HOUR + i),
      ]),
      ...tinyCharges(u7, agents7, 844),
    ],
  );

  // Agents withdrawn in one minute that pay a merchant's metered charges in one band and spend more than half
  // their money at a service that is itself a customer of the merchant: it buys $0.30 of its API by x402 in the
  // week. Two merchants that pay each other for services; none of the agents' money goes back.
  const u10 = addr("escape-service-customer-metered");
  const s10 = addr("escape-service-customer");
  const agents10 = wallets("escape-service-agent", 12);
  add(
    "agents of a service that buys from the merchant",
    {
      wallets: agents10,
      merchant: u10,
      note: "12 withdrawn in one minute, metered charges here and $0.08 each at a service that buys $0.30 of this merchant's API",
    },
    [
      ...genuine(u10, [10_000, 20_000, 50_000], 30, 847).records,
      listing(s10, "call", 0.01),
      transfer(CEX, s10, USD, START - WEEK),
      ...payers(u10, [s10], 10, () => 30_000),
      ...agents10.flatMap((w, i) => [
        transfer(CEX, w, USD, START - 2 * WEEK + 100 + i * 2),
        ...payers(s10, [w], 8, () => 10_000),
      ]),
      ...tinyCharges(u10, agents10, 848),
    ],
  );

  // A merchant that sells a cheap ping to buyers of its own beside its $0.01 line.
  const pinged = addr("escape-pinged");
  const pingers = wallets("escape-pinger", 6);
  add(
    "a cheap ping's buyers",
    {
      wallets: pingers,
      merchant: pinged,
      note: "6 buyers polling a $0.0003 line 20 times each beside $0.01 buyers",
    },
    [
      listing(pinged, "item", 0.01),
      listing(pinged, "ping", 0.0003),
      ...pingers.map((w, i) => transfer(addr(`escape-pinger-source-${i}`), w, USD, START - WEEK + i)),
      ...exact(payers(pinged, pingers, 20, () => 300)),
      ...exact(genuine(pinged, [10_000], 20, 845).records),
    ],
  );

  // A small exchange fed by 60 depositors of $10 to $5,000: its customers, withdrawn on days of their own, pay a
  // merchant's metered charges in one low band; another merchant deposits $50 there and 30 of its customers
  // withdraw right after.
  const small = addr("escape-small-exchange");
  records.push(
    ...wallets("escape-small-depositor", 60).flatMap((w, i) => [
      transfer(
        addr(`escape-small-depositor-source-${i}`),
        w,
        (10 + next(4_991)) * USD,
        START - 12 * WEEK + i,
      ),
      transfer(w, small, (10 + ((i * 83) % 4_991)) * USD, START - 11 * WEEK + i),
    ]),
  );
  const u9 = addr("escape-small-exchange-metered");
  const smallCustomers = wallets("escape-small-customer", 20);
  add(
    "a small exchange's customers",
    {
      wallets: smallCustomers,
      merchant: u9,
      note: "20 withdrawn from an unlisted exchange of 60 depositors, 5 days apart, metered $0.0003-0.0023",
    },
    [
      ...genuine(u9, [10_000, 20_000, 50_000], 30, 846).records,
      ...smallCustomers.map((w, i) => transfer(small, w, USD, START - 100 * DAY + i * 5 * DAY)),
      ...payers(u9, smallCustomers, 60, () => 300 + next(2_000)),
    ],
  );
  const m6 = addr("escape-small-exchange-depositor-merchant");
  const m6Customers = wallets("escape-small-m6-customer", 30);
  add(
    "customers of a small exchange the merchant deposits at",
    {
      wallets: m6Customers,
      merchant: m6,
      note: "the merchant deposits $50 at the small exchange; 30 customers withdraw $1 each right after",
    },
    [
      listing(m6, "item", 0.05),
      transfer(m6, small, 50 * USD, START - 2 * WEEK),
      ...m6Customers.map((w, i) => transfer(small, w, USD, START - 2 * WEEK + 10 + i)),
      ...exact(payers(m6, m6Customers, 20, () => 50_000)),
    ],
  );

  // Channel buyers: withdrawn from the exchange on days of their own, each opening a channel to a merchant.
  const channelBuyers = wallets("escape-channel-buyer", 10);
  add(
    "channel buyers",
    {
      wallets: channelBuyers,
      merchant: MC,
      note: "10 buyers each depositing $1 into a channel, claimed daily",
    },
    [
      listing(MC, "call", 0.01),
      ...channelBuyers.flatMap((w, i) => [
        transfer(CEX, w, 2 * USD, START - 60 * DAY + i * 5 * DAY),
        ...channel(
          `escape-channel-buyer-${i}`,
          w,
          MC,
          USD,
          START - WEEK + i,
          [100_000, 120_000, 90_000, 110_000],
        ),
      ]),
    ],
  );
  return { records, lookAlikes };
}

/** The distinct payers of some payments. */
export const payersOf = (rs: readonly object[]) => [
  ...new Set(rs.map((r) => (r as { payer: string }).payer)),
];
