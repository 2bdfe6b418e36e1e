/**
 * The red team's catalogue (issue 84): escape strategies a gamer who has read docs/screens.md plays against the
 * screens, each at its knob's values, beside the genuine look-alikes it imitates (`world.ts`), with a ledger of
 * what it costs. The first ten are the kinds an adversarial week used; the rest are the red team's own. Where an
 * escape is still open by the bar (money gone under half of the dollars it hides) the strategy says why
 * in `knownLimit`; the runner (`run.ts`) and CI (test/bench/escapes.test.ts) measure every one.
 */
import { THRESHOLDS } from "../../src/reports/screens/thresholds.ts";
import { addr, payment, START, transfer } from "../../test/helpers/data.ts";
import { genuine, listing, payers, wallets } from "../../test/helpers/scenarios.ts";
import { gas, type Knob, type LedgerLine, type Strategy } from "./strategy.ts";
import {
  ARBITRUM_EXCHANGE,
  atomic,
  BRIDGES,
  bridge,
  CEX,
  channel,
  DAY,
  EXCHANGES,
  exact,
  HOUR,
  M,
  MA,
  MC,
  MINUTE,
  on,
  POLYGON_EXCHANGE,
  spend,
  tinyCharges,
  U,
  USD,
  WEEK,
} from "./world.ts";

const usd = (atomic: number) => atomic / USD;
const capital = (item: string, amount: number): LedgerLine => ({ item, usd: usd(amount), gone: false });
const gone = (item: string, amount: number): LedgerLine => ({ item, usd: usd(amount), gone: true });
const num = (v: Knob) => Number(v);

/** `n` farm wallets, each withdrawn from the exchange on a day of its own, 5 days apart: `n` clusters. */
function apart(label: string, n: number, each = USD): { ws: string[]; records: object[] } {
  const ws = wallets(label, n);
  return { ws, records: ws.map((w, i) => transfer(CEX, w, each, START - 5 * n * DAY + i * 5 * DAY)) };
}

/** `n` farm wallets withdrawn from `exchange(i)` within one minute, two weeks before the window. */
function burst(
  label: string,
  n: number,
  exchange: (i: number) => string = () => CEX,
  each = USD,
): { ws: string[]; records: object[] } {
  const ws = wallets(label, n);
  return { ws, records: ws.map((w, i) => transfer(exchange(i), w, each, START - 2 * WEEK + i)) };
}

/** A tiny metered farm of `ws` at the unlisted merchant, and its fake group. */
function tinyFarm(ws: readonly string[], seed: number) {
  return { records: tinyCharges(U, ws, seed), fake: [{ wallets: ws, merchant: U }] };
}

const roundTripExchange: Strategy = {
  name: "exchange-round-trip",
  title:
    "Every morning the merchant deposits $6 of its takings at an exchange; minutes to hours later six fresh wallets withdraw $1 each and spend it at its $0.05 price, day after day.",
  origin: "issue 84",
  knob: "withdrawn after the deposit",
  values: [10, 60, 360],
  quick: [10],
  show: (v) => (num(v) < 60 ? `${v} min` : `${num(v) / 60} h`),
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  knownLimit: {
    why: "of the spans a return is read at (10 minutes times 1.5^k), the surest reading is taken: a farm that puts one payout exactly at a span's end and the rest seconds past it makes that short span the surest, and it reads a sixth (5, 9, 11, 30 and 60 minutes are read whole); taking a sure reading that reads half as much again closes it, but then a longer span hands the customers' own withdrawals 3% of their money where a tenth of each deposit goes round (hub-sweeps), so it waits for a rule that keeps them apart. Hours after the deposit the buyers' own withdrawals at those hours explain it",
    at: (v) => num(v) !== 60,
  },
  play(delay) {
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const at = START + d * DAY + 9 * HOUR;
      const out = at + num(delay) * MINUTE;
      records.push(transfer(M, CEX, 6 * USD, at));
      wallets(`rt-exchange-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        records.push(transfer(CEX, w, USD, out + j), ...spend(w, M, 20, 50_000, out + 100, 10 * MINUTE));
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [
        capital("the merchant's takings deposited, withdrawn and spent there again (7 x $6)", 42 * USD),
        gas(49),
      ],
    };
  },
};

const roundTripBridge: Strategy = {
  name: "bridge-round-trip",
  title:
    "Every morning the merchant burns $6 of its takings through CCTP to a fresh wallet on Arbitrum, which burns it back to six fresh wallets on Base; each is minted $1 and spends it at its $0.05 price, day after day.",
  origin: "issue 84",
  knob: "minted after the burn",
  values: [20, 180],
  quick: [20],
  show: (v) => (num(v) < 60 ? `${v} min` : `${num(v) / 60} h`),
  lookAlikes: ["bridged-in customers of a merchant that bridges out"],
  play(delay) {
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const at = START + d * DAY + 9 * HOUR;
      const out = at + num(delay) * MINUTE;
      const away = addr(`rt-bridge-arbitrum-${d}`);
      records.push(...bridge({ from: "base", to: "arbitrum" }, M, away, 6 * USD, at));
      wallets(`rt-bridge-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        records.push(
          ...bridge({ from: "arbitrum", to: "base" }, away, w, USD, out + j - 600),
          ...spend(w, M, 20, 50_000, out + 100, 10 * MINUTE),
        );
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [capital("the merchant's takings bridged out and back (7 x $6)", 42 * USD), gas(91)],
    };
  },
};

/**
 * Where the round trip meets the week's edges, five minutes after each deposit (a delay the spans read whole, so
 * that what is measured is the edge): blocks from each day's midnight (0 is midnight's block; on the first day the
 * block before the week's first, at the week's start time).
 */
const edges = {
  "5 min before the week": { deposit: -5 * MINUTE, out: 0 },
  "at the week's start": { deposit: 0, out: 5 * MINUTE },
  "at the week's first block": { deposit: 1, out: 1 + 5 * MINUTE },
  // Withdrawn so that the sixth wallet's last payment is at midnight: 100 + 5 + 19 x 10 blocks after.
  "up to the week's last block": { deposit: -295 - 5 * MINUTE, out: -295 },
} as const;

const roundTripEdge: Strategy = {
  name: "exchange-edge",
  title:
    "The exchange round trip at the edges of the week the screens read: every day the merchant deposits $6 at an exchange and six fresh wallets withdraw $1 each five minutes later and spend it at its $0.05 price, at each midnight (the first day's at the week's start: the deposit before the week, at its start, or in its first block), or spent up to each day's last block (the last day's up to the week's last block).",
  origin: "invented",
  knob: "deposit and withdrawals",
  values: Object.keys(edges),
  quick: [],
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  play(knob) {
    const edge = edges[knob as keyof typeof edges];
    const records: object[] = [];
    const farm: string[] = [];
    const last = knob === "up to the week's last block";
    for (let d = 0; d < 7; d++) {
      // The midnight that starts day d (the block before the week's first at d = 0), or that ends it.
      const midnight = START + (last ? d + 1 : d) * DAY;
      const out = midnight + edge.out;
      records.push(transfer(M, CEX, 6 * USD, midnight + edge.deposit));
      wallets(`rt-edge-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        // Up to the day's last block: 20 payments 10 blocks apart, the sixth wallet's last at midnight.
        const spent = last
          ? spend(w, M, 20, 50_000, out + 100 + j, 10)
          : spend(w, M, 20, 50_000, out + 100, 10 * MINUTE);
        records.push(transfer(CEX, w, USD, out + j), ...spent);
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [
        capital("the merchant's takings deposited, withdrawn and spent there again (7 x $6)", 42 * USD),
        gas(49),
      ],
    };
  },
};

/**
 * The round trip on Arbitrum, where four blocks share a second, at the week's edges: where each day's deposit and
 * withdrawals are, as [Base block from the day's midnight, place among Arbitrum's eight blocks of it]
 * (`arbitrumBlock`: places 0-3 share the Base block's second, 4-7 the next). On the first day midnight's second is
 * the week's start, all its four blocks the week before's: the week's first block is place 4.
 */
const arbitrumEdges: Record<string, { deposit: [number, number]; out: (j: number) => [number, number] }> = {
  "5 min before the week": { deposit: [-5 * MINUTE, 0], out: (j) => [0, j] },
  "in the week before's last block": { deposit: [0, 3], out: (j) => [(4 + j) >> 3, (4 + j) & 7] },
  "in the week's first second": { deposit: [0, 4], out: (j) => [(5 + j) >> 3, (5 + j) & 7] },
  // Withdrawn so that the sixth wallet's last payment is in the week's last block: 100 + 5 + 19 x 10 blocks after.
  "up to the week's last block": { deposit: [-295 - 5 * MINUTE, 0], out: (j) => [-295 + j, 3] },
};

const arbitrumEdge: Strategy = {
  name: "arbitrum-edge",
  title:
    "The exchange round trip on Arbitrum, where four blocks share a second: every day the gamer's merchant there deposits $6 at an exchange and six fresh wallets withdraw $1 each and spend it at its $0.05 price, at each midnight (on the first day at the week's start: the deposit 5 minutes before, in the last block of the week before with the withdrawals in the week's first, or in the week's first second with them), or spent up to each day's last block (the last day's up to the week's last block).",
  origin: "invented",
  chain: "arbitrum",
  knob: "deposit and withdrawals",
  values: Object.keys(arbitrumEdges),
  quick: [],
  lookAlikes: ["customers of an Arbitrum exchange the merchant deposits at, on Arbitrum"],
  play(knob) {
    const edge = arbitrumEdges[String(knob)] as (typeof arbitrumEdges)[string];
    const last = knob === "up to the week's last block";
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const midnight = START + (last ? d + 1 : d) * DAY;
      records.push(
        on("arbitrum", transfer(MA, ARBITRUM_EXCHANGE, 6 * USD, midnight + edge.deposit[0]), edge.deposit[1]),
      );
      wallets(`arbitrum-edge-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        const [out, k] = edge.out(j);
        const at = midnight + out;
        const spent = Array.from({ length: 20 }, (_, i) =>
          payment({
            payer: w,
            payTo: MA,
            amount: 50_000,
            block: last ? at + 100 + i * 10 : at + 100 + i * 10 * MINUTE,
            scheme: "exact",
          }),
        );
        records.push(
          on("arbitrum", transfer(ARBITRUM_EXCHANGE, w, USD, at), k),
          ...spent.map((r) => on("arbitrum", r, k)),
        );
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: MA }],
      ledger: [
        capital("the merchant's takings deposited, withdrawn and spent there again (7 x $6)", 42 * USD),
        gas(49),
      ],
    };
  },
};

const bridgeHops: Strategy = {
  name: "bridge-hops",
  title:
    "Every morning the merchant burns $6 of its takings through CCTP to a fresh Arbitrum wallet, which passes it on through this many more fresh wallets there; the last burns $1 back to each of six fresh Base wallets, which spend it at its $0.05 price, 20 minutes after the merchant's burn.",
  origin: "invented",
  knob: "wallets on Arbitrum after the first",
  values: [1, 3, 10],
  quick: [3],
  lookAlikes: [
    "bridged-in customers of a merchant that bridges out",
    "bridged-in customers of an Arbitrum exchange the merchant deposits at",
  ],
  play(hops) {
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const at = START + d * DAY + 9 * HOUR;
      const away = wallets(`bridge-hops-arbitrum-${d}`, num(hops) + 1);
      // CCTP's fast transfer: minted a minute after the burn.
      records.push(...bridge({ from: "base", to: "arbitrum" }, M, away[0] as string, 6 * USD, at, 30));
      for (let k = 1; k < away.length; k++)
        records.push(
          on("arbitrum", transfer(away[k - 1] as string, away[k] as string, 6 * USD, at + 30 + 10 * k)),
        );
      wallets(`bridge-hops-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        const back = at + 20 * MINUTE - 30 + j;
        records.push(
          ...bridge({ from: "arbitrum", to: "base" }, away.at(-1) as string, w, USD, back, 30),
          ...spend(w, M, 20, 50_000, back + 130, 10 * MINUTE),
        );
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [
        capital("the merchant's takings bridged out, passed on there and bridged back (7 x $6)", 42 * USD),
        gas(7 * (num(hops) + 7) + 42),
      ],
    };
  },
};

/** The ways out and back through bridges that are no CCTP: the Base wallet in, the one out, and the delay. */
const pools = {
  "Stargate both ways": { in: BRIDGES.stargate, out: BRIDGES.stargate, delay: 20 },
  "Across out, Relay back": { in: BRIDGES.across, out: BRIDGES.relay, delay: 20 },
  "Across out, Relay back, 1 h": { in: BRIDGES.across, out: BRIDGES.relay, delay: 60 },
  "Across out, Relay back, 3 h": { in: BRIDGES.across, out: BRIDGES.relay, delay: 180 },
} as const;

const liquidityBridge: Strategy = {
  name: "liquidity-bridge",
  title:
    "Every morning the merchant sends $6 of its takings to a fresh Arbitrum wallet through a bridge that is no CCTP (a pool, or a relayer that fills from its own wallet: no message names both sides), which sends $1 back to each of six fresh Base wallets the same way; they spend it at its $0.05 price.",
  origin: "invented",
  knob: "the bridges, and when the money is back",
  values: Object.keys(pools),
  quick: ["Across out, Relay back"],
  lookAlikes: ["customers bridged in by pools and relayers beside a merchant that bridges out"],
  knownLimit: {
    why: "three hours after the money went out no span reads it: a span longer than the three hours around it that it is compared with is not read, as the exchange round trip's six hours",
    at: (v) => String(v).endsWith("3 h"),
  },
  play(knob) {
    const way = pools[knob as keyof typeof pools];
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const at = START + d * DAY + 9 * HOUR;
      const away = addr(`liquidity-bridge-arbitrum-${d}`);
      // Arbitrum's side is plain transfers the screens of Base never link: the relayer's fill, and the wallet's
      // deposits into the bridge there.
      records.push(
        transfer(M, way.in, 6 * USD, at),
        on("arbitrum", transfer(addr("liquidity-bridge-arbitrum-relayer"), away, 5_990_000, at + 30)),
      );
      wallets(`liquidity-bridge-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        const back = at + way.delay * MINUTE + j;
        records.push(
          on("arbitrum", transfer(away, addr("liquidity-bridge-arbitrum-pool"), 998_000, back - 30)),
          transfer(way.out, w, 997_000, back),
          ...spend(w, M, 19, 50_000, back + 100, 10 * MINUTE),
        );
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [
        capital(
          "the merchant's takings bridged out and back, spent there again (7 x 6 x $0.997)",
          7 * 6 * 997_000,
        ),
        capital("what is left in each day's Arbitrum wallet (7 x $0.002)", 7 * 2_000),
        { item: "the bridges' fees, $0.01 out and $0.001 a fill back: fees", usd: 7 * 0.016, gone: false },
        gas(49),
      ],
    };
  },
};

const twoExchanges: Strategy = {
  name: "two-exchanges",
  title:
    "Every morning the merchant deposits $6 of its takings at one exchange, and this long after six fresh wallets withdraw $1 each from another (an account at each, the money moved between them off the chain) and spend it at its $0.05 price.",
  origin: "invented",
  knob: "withdrawn after the deposit",
  values: [5, 20, 60],
  quick: [],
  show: (v) => (num(v) < 60 ? `${v} min` : `${num(v) / 60} h`),
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  play(delay) {
    const records: object[] = [];
    const farm: string[] = [];
    for (let d = 0; d < 7; d++) {
      const at = START + d * DAY + 9 * HOUR;
      records.push(transfer(M, CEX, 6 * USD, at));
      wallets(`two-exchanges-${d}`, 6).forEach((w, j) => {
        farm.push(w);
        const out = at + num(delay) * MINUTE + j;
        records.push(
          transfer(EXCHANGES[1] as string, w, USD, out),
          ...spend(w, M, 20, 50_000, out + 100, 10 * MINUTE),
        );
      });
    }
    return {
      records,
      fake: [{ wallets: farm, merchant: M }],
      ledger: [
        capital(
          "the merchant's takings deposited at one exchange and withdrawn from the other (7 x $6)",
          42 * USD,
        ),
        gas(49),
      ],
    };
  },
};

const ownShop: Strategy = {
  name: "own-shop",
  title:
    "A tiny farm of 20 wallets withdrawn in one minute spends this share of its money at a second merchant of the gamer's (a $0.01 line), which pays its takings back after the week's last call: to every wallet, or to the farm's merchant.",
  origin: "issue 84",
  knob: "share spent at the gamer's shop",
  values: ["0%", "30%", "55%", "75%", "55%, to the merchant", "75%, to the merchant"],
  quick: ["55%"],
  lookAlikes: [
    "agents that spend most elsewhere, refunded in part",
    "agents of a service that buys from the merchant",
  ],
  play(knob) {
    const share = Number.parseInt(String(knob), 10) / 100;
    const toMerchant = String(knob).endsWith("to the merchant");
    const shop = addr("own-shop-merchant");
    const { ws, records } = burst("own-shop-farm", 20);
    const farm = tinyFarm(ws, 301);
    records.push(...farm.records, listing(shop, "call", 0.01));
    let atShop = 0;
    for (const w of ws) {
      const here = atomic(farm.records.filter((r) => r.payer === w));
      const calls = Math.ceil((here * share) / (1 - share) / 10_000);
      if (calls === 0) continue;
      records.push(...payers(shop, [w], calls, () => 10_000));
      if (!toMerchant) records.push(transfer(shop, w, calls * 10_000, START + WEEK - HOUR));
      atShop += calls * 10_000;
    }
    if (toMerchant && atShop > 0) records.push(transfer(shop, U, atShop, START + WEEK - HOUR));
    // The shop's own takings are fake too, and pass as refund-cover's do; what is measured here is the farm.
    return {
      records,
      fake: farm.fake,
      ledger: [capital("purchases at the gamer's own shop, paid back", atShop), gas(21)],
    };
  },
};

const unboughtLine: Strategy = {
  name: "unbought-line",
  title:
    "The merchant lists a $0.0003 line beside $0.01; 12 farm clusters pay it $0.0005 exact, 15 times each, and this many of them buy the cheap line once.",
  origin: "issue 84",
  knob: "farm clusters buying the line",
  values: [0, 4, 5, 8],
  quick: [4],
  lookAlikes: ["a cheap ping's buyers"],
  knownLimit: {
    why: "a line that 5 clusters buy is the merchant's price (as a paid price is): each cluster costs a funding root of its own, no money gone",
    at: (v) => num(v) >= THRESHOLDS.tinyPricePayers,
  },
  play(k) {
    const { ws, records } = apart("unbought-farm", 12);
    records.push(
      listing(M, "ping", 0.0003),
      ...exact(payers(M, ws, 15, () => 500)),
      ...exact(payers(M, ws.slice(0, num(k)), 1, () => 300)),
    );
    return { records, fake: [{ wallets: ws, merchant: M }], ledger: [gas(12)] };
  },
};

const repeatLine: Strategy = {
  name: "repeat-line",
  title:
    "The merchant lists a $0.0003 line beside $0.01; 12 farm clusters pay it $0.0005 exact, 15 times each, and one of them buys the cheap line this many times, on days of its own.",
  origin: "invented",
  knob: "purchases of the line by one cluster",
  values: [1, 5, 10],
  quick: [5],
  lookAlikes: ["a cheap ping's buyers"],
  play(k) {
    const { ws, records } = apart("repeat-line-farm", 12);
    records.push(
      listing(M, "ping", 0.0003),
      ...exact(payers(M, ws, 15, () => 500)),
      ...exact(payers(M, ws.slice(0, 1), num(k), () => 300)),
    );
    return { records, fake: [{ wallets: ws, merchant: M }], ledger: [gas(12)] };
  },
};

const dustHub: Strategy = {
  name: "dust-hub",
  title:
    "A distributor of the gamer's gets a cent from each of this many senders, each its own cluster, then pays 20 farm wallets $1 each, 5 days apart; they pay tiny metered charges.",
  origin: "issue 84",
  knob: "dust senders",
  values: [0, 40, 49, 55],
  quick: [55],
  lookAlikes: ["a small exchange's customers"],
  knownLimit: {
    why: "clusters keep 1.4.0's hub set: 50 senders of any amount (the gamer's own one of them) make the distributor a hub, so it is nobody's funder, and its payouts days apart make no group: the farm is 20 buyers for a cent of dust a sender, which stays the gamer's",
    at: (v) => num(v) + 1 >= THRESHOLDS.hubMinSenders,
  },
  play(n) {
    const d = addr("dust-hub-distributor");
    const ws = wallets("dust-hub-farm", 20);
    const farm = tinyFarm(ws, 305);
    return {
      records: [
        ...wallets("dust-hub-sender", num(n)).flatMap((w, i) => [
          transfer(addr(`dust-hub-source-${i}`), w, 20_000, START - 15 * WEEK + i),
          transfer(w, d, 10_000, START - 15 * WEEK + 100 + i),
        ]),
        transfer(addr("dust-hub-gamer"), d, 40 * USD, START - 15 * WEEK + 500),
        ...ws.map((w, i) => transfer(d, w, USD, START - 100 * DAY + i * 5 * DAY)),
        ...farm.records,
      ],
      fake: farm.fake,
      ledger: [capital("the senders' dust, in the distributor", num(n) * 10_000), gas(num(n) * 2 + 21)],
    };
  },
};

const fedAfter: Strategy = {
  name: "fed-after",
  title:
    "The merchant sends $30 to a distributor; this many parties (each withdrawn under its own identity) then send it $1 each; it pays 20 wallets $1.50 that spend it at the $0.05 price, and passes the parties' money back to the gamer.",
  origin: "issue 84",
  knob: "parties after the merchant's money",
  values: [0, 45, 49, 55],
  quick: [55],
  lookAlikes: ["customers of a small exchange the merchant deposits at"],
  knownLimit: {
    why: "the merchant and 49 parties are 50 parties weighed by money, so the distributor is a `fed` hub, not followed without a balance, though the merchant's money came first (the report's exchange_flow_note marks it): 49 identities, and capital that comes back",
    at: (v) => num(v) + 1 >= THRESHOLDS.hubMinSenders,
  },
  play(k) {
    const d = addr("fed-after-distributor");
    const ws = wallets("fed-after-farm", 20);
    return {
      records: [
        transfer(M, d, 30 * USD, START - 3 * WEEK),
        ...wallets("fed-after-party", num(k)).flatMap((w, i) => [
          transfer(addr(`fed-after-party-source-${i}`), w, USD, START - 3 * WEEK + DAY + i),
          transfer(w, d, USD, START - 3 * WEEK + DAY + 1_000 + i),
        ]),
        ...ws.map((w, i) => transfer(d, w, 1_500_000, START - 2 * WEEK + i)),
        ...(num(k) > 0 ? [transfer(d, addr("fed-after-gamer"), num(k) * USD, START - 2 * WEEK + DAY)] : []),
        ...exact(payers(M, ws, 30, () => 50_000)),
      ],
      fake: [{ wallets: ws, merchant: M }],
      ledger: [
        capital("the merchant's $30, spent at it again", 30 * USD),
        capital("the parties' money, passed back to the gamer", num(k) * USD),
        gas(2 * num(k) + 22),
      ],
    };
  },
};

const feeders: Strategy = {
  name: "feeders",
  title:
    "Feeders withdrawn from the exchange in one minute each fund this many of 20 farm wallets a week later; the farm pays tiny metered charges.",
  origin: "issue 84",
  knob: "farm wallets a feeder",
  values: [5, 2, 1],
  quick: [2],
  lookAlikes: ["a launch's customers topped up by team leads"],
  play(per) {
    const ws = wallets("feeders-farm", 20);
    const fs = burst("feeders-feeder", 20 / num(per), undefined, num(per) * USD);
    const farm = tinyFarm(ws, 307);
    return {
      records: [
        ...fs.records,
        ...ws.map((w, i) =>
          transfer(fs.ws[Math.floor(i / num(per))] as string, w, USD, START - WEEK - DAY + i * 30),
        ),
        ...farm.records,
      ],
      fake: farm.fake,
      ledger: [gas(20 + fs.ws.length)],
    };
  },
};

const threeExchanges: Strategy = {
  name: "split-burst",
  title:
    "A farm of 12 wallets withdrawn in one minute, split evenly over this many exchanges; it pays tiny metered charges.",
  origin: "issue 84",
  knob: "exchanges",
  values: [1, 2, 3, 4],
  quick: [3],
  lookAlikes: ["a launch's customers from three exchanges"],
  play(k) {
    const { ws, records } = burst("split-burst-farm", 12, (i) => EXCHANGES[i % num(k)] as string);
    const farm = tinyFarm(ws, 308);
    return { records: [...records, ...farm.records], fake: farm.fake, ledger: [gas(12)] };
  },
};

const oddAmount: Strategy = {
  name: "odd-amount",
  title:
    "12 farm wallets each withdraw the same odd $13.37 from the exchange, this far apart; they pay tiny metered charges.",
  origin: "issue 84",
  knob: "withdrawals apart",
  values: [6, 24, 48],
  quick: [24],
  show: (v) => `${v} h`,
  lookAlikes: ["a launch's customers funded by their own", "a small exchange's customers"],
  knownLimit: {
    why: "no four days of the exchange's payouts hold five of the farm's wallets, and the amount withdrawn is no signature: 12 clusters for no money gone (the docs' 'What passing costs')",
    at: (v) => num(v) >= 24,
  },
  play(hours) {
    const ws = wallets("odd-amount-farm", 12);
    const farm = tinyFarm(ws, 309);
    return {
      records: [
        ...ws.map((w, i) =>
          transfer(CEX, w, 13_370_000, START - 2 * WEEK - 12 * num(hours) * HOUR + i * num(hours) * HOUR),
        ),
        ...farm.records,
      ],
      fake: farm.fake,
      ledger: [gas(12)],
    };
  },
};

const twoTiny: Strategy = {
  name: "two-tiny",
  title:
    "60 clusters (each withdrawn on a day of its own) each pay the merchant this many $0.001 exact payments.",
  origin: "issue 84",
  knob: "tiny payments a cluster",
  values: [2, 3, 10],
  quick: [2],
  lookAlikes: ["m's buyers", "a sampling agent"],
  knownLimit: {
    why: "of k tiny payments a cluster k/10 are flagged, rounded: two a cluster pass, three pass two, for 60 funding roots and no money gone (tiny_repeat's count)",
    at: (v) => num(v) < THRESHOLDS.tinyRepeatMinPayments,
  },
  play(k) {
    const { ws, records } = apart("two-tiny-farm", 60);
    return {
      records: [...records, ...exact(payers(M, ws, num(k), () => 1_000))],
      fake: [{ wallets: ws, merchant: M }],
      ledger: [gas(60)],
    };
  },
};

/** The merchant's money to a distributor at `at`, on to 20 wallets a day later that spend it at the $0.05 price. */
function fundedFarm(label: string, path: readonly string[], at: number) {
  const ws = wallets(`${label}-farm`, 20);
  const chain = [M, ...path];
  return {
    records: [
      ...chain.slice(1).map((w, i) => transfer(chain[i] as string, w, 30 * USD, at + i)),
      ...ws.map((w, i) => transfer(chain[chain.length - 1] as string, w, 1_500_000, at + DAY + i)),
      ...exact(payers(M, ws, 30, () => 50_000)),
    ],
    fake: [{ wallets: ws, merchant: M }],
    ledger: [capital("the merchant's $30, spent at it again", 30 * USD), gas(path.length + 20)],
  };
}

const agedWallets: Strategy = {
  name: "aged-wallets",
  title:
    "The merchant funds a distributor and 20 wallets this long before the window; they sit, then spend it at the $0.05 price.",
  origin: "invented",
  knob: "weeks parked",
  values: [1, 8, 26, 52],
  quick: [52],
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  play: (weeks) => fundedFarm("aged", [addr("aged-distributor")], START - num(weeks) * WEEK),
};

const deepChain: Strategy = {
  name: "deep-chain",
  title:
    "The merchant's $30 passes through this many private wallets before 20 farm wallets spend it at the $0.05 price.",
  origin: "invented",
  knob: "private wallets on the way",
  values: [1, 5, 12, 30],
  quick: [30],
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  play: (hops) => fundedFarm("deep", wallets("deep-hop", num(hops)), START - 2 * WEEK),
};

const secondAddress: Strategy = {
  name: "second-address",
  title:
    "A second merchant address of the gamer's (with 20 buyers of its own) pays the merchant $3 a day at its $0.05 price; the merchant hands the money back every evening, by the way on the left.",
  origin: "invented",
  knob: "the way back",
  values: ["direct", "two wallets", "an exchange"],
  quick: ["two wallets", "an exchange"],
  lookAlikes: ["customers of an exchange the merchant deposits at"],
  knownLimit: {
    why: "through an exchange the ring has no edge back (hubs are out of the ring graph) and merchant_funded does not follow a listed exchange: as the exchange round trip",
    at: (v) => v === "an exchange",
  },
  play(way) {
    const second = addr("second-address-merchant");
    const [a, b] = wallets("second-address-hop", 2) as [string, string];
    const records: object[] = [
      listing(second, "item", 0.05),
      ...exact(genuine(second, [50_000], 20, 313).records),
    ];
    for (let d = 0; d < 7; d++) {
      const day = START + d * DAY;
      records.push(...spend(second, M, 60, 50_000, day + HOUR, 5 * MINUTE));
      const back = day + 20 * HOUR;
      if (way === "direct") records.push(transfer(M, second, 3 * USD, back));
      else if (way === "two wallets")
        records.push(
          transfer(M, a, 3 * USD, back),
          transfer(a, b, 3 * USD, back + 1),
          transfer(b, second, 3 * USD, back + 2),
        );
      else records.push(transfer(M, CEX, 3 * USD, back), transfer(CEX, second, 3 * USD, back + 10 * MINUTE));
    }
    return {
      records,
      fake: [{ wallets: [second], merchant: M }],
      ledger: [
        capital("the merchant's takings handed back (7 x $3)", 21 * USD),
        gas(way === "two wallets" ? 21 : 14),
      ],
    };
  },
};

const channelFarm: Strategy = {
  name: "channel-farm",
  title:
    "The channel merchant's $20 reaches 10 farm wallets through this many private wallets; each opens a channel to it, deposits $2 and is claimed $0.25 a day.",
  origin: "invented",
  knob: "private wallets on the way",
  values: [1, 3],
  quick: [3],
  lookAlikes: ["channel buyers"],
  play(hops) {
    const path = wallets("channel-farm-hop", num(hops));
    const chain = [MC, ...path];
    const ws = wallets("channel-farm-farm", 10);
    return {
      records: [
        ...chain.slice(1).map((w, i) => transfer(chain[i] as string, w, 20 * USD, START - 2 * WEEK + i)),
        ...ws.map((w, i) =>
          transfer(chain[chain.length - 1] as string, w, 2 * USD, START - 2 * WEEK + DAY + i),
        ),
        ...ws.flatMap((w, i) =>
          channel(`channel-farm-${i}`, w, MC, 2 * USD, START - WEEK + i, Array(7).fill(250_000)),
        ),
      ],
      fake: [{ wallets: ws, merchant: MC }],
      ledger: [
        capital("the merchant's $20, claimed back through the channels", 20 * USD),
        gas(num(hops) + 10),
      ],
    };
  },
};

const delayedRing: Strategy = {
  name: "delayed-ring",
  title:
    "12 wallets spend $1 each at the merchant's $0.05 price; this long after, the merchant sends it back through a private wallet and they spend it again in the window.",
  origin: "invented",
  knob: "days before it comes back",
  values: [1, 7, 28],
  quick: [28],
  lookAlikes: ["customers refunded last week who buy again"],
  play(delay) {
    const p = addr("delayed-ring-wallet");
    const ws = wallets("delayed-ring-farm", 12);
    const paid = START - (num(delay) + 2) * DAY;
    return {
      records: [
        ...ws.map((w, i) => transfer(CEX, w, USD, paid - DAY + i)),
        ...ws.flatMap((w, i) => spend(w, M, 20, 50_000, paid + i, HOUR)),
        transfer(M, p, 12 * USD, START - 2 * HOUR),
        ...ws.map((w, i) => transfer(p, w, USD, START - HOUR + i)),
        ...ws.flatMap((w, i) => spend(w, M, 20, 50_000, START + 1_000 + i, 4 * HOUR)),
      ],
      fake: [{ wallets: ws, merchant: M }],
      ledger: [capital("the farm's $12, spent, sent back and spent again", 12 * USD), gas(25)],
    };
  },
};

const refundCover: Strategy = {
  name: "refund-cover",
  title:
    "12 wallets spend $1 each at the merchant's $0.05 price every week; the merchant refunds it (on the left: when), and they spend the refund again.",
  origin: "invented",
  knob: "when the merchant refunds",
  values: ["mid-week", "after the week's last call"],
  quick: ["mid-week", "after the week's last call"],
  lookAlikes: ["customers refunded last week who buy again"],
  knownLimit: {
    why: "a refund is the customer's own money coming back (merchant_funded), and money back after the payer's last payment is no ring: refunded every week after its last call, the same dollar is new volume each week",
    at: (v) => v === "after the week's last call",
  },
  play(when) {
    const ws = wallets("refund-cover-farm", 12);
    const records: object[] = [];
    ws.forEach((w, i) => {
      records.push(transfer(CEX, w, USD, START - WEEK - DAY + i));
      // Last week: $1 spent, refunded the way this week's is.
      records.push(
        ...spend(w, M, 20, 50_000, START - WEEK + i, 4 * HOUR),
        transfer(M, w, USD, START - HOUR + i),
      );
      if (when === "mid-week") {
        records.push(
          ...spend(w, M, 10, 50_000, START + 100 + i, 6 * HOUR),
          transfer(M, w, 500_000, START + 3 * DAY + 12 * HOUR + i),
          ...spend(w, M, 10, 50_000, START + 4 * DAY + i, 6 * HOUR),
          transfer(M, w, 500_000, START + WEEK - HOUR + i),
        );
      } else {
        records.push(
          ...spend(w, M, 20, 50_000, START + 100 + i, 4 * HOUR),
          transfer(M, w, USD, START + WEEK - HOUR + i),
        );
      }
    });
    return {
      records,
      fake: [{ wallets: ws, merchant: M }],
      ledger: [capital("the farm's $12, refunded every week", 12 * USD), gas(when === "mid-week" ? 48 : 36)],
    };
  },
};

const slowProber: Strategy = {
  name: "slow-prober",
  title:
    "A crawler probes this many merchants a week, the merchant among them, once each at $0.02: its probes spread over weeks.",
  origin: "invented",
  knob: "merchants a week",
  values: [5, 10, 19],
  quick: [19],
  lookAlikes: ["a sampling agent"],
  play(n) {
    const crawler = addr("slow-prober");
    const pays = Array.from({ length: num(n) }, (_, j) =>
      payers(j === 0 ? M : addr(`slow-prober-merchant-${j}`), [crawler], 1, () => 20_000),
    ).flat();
    return {
      records: [transfer(addr("slow-prober-source"), crawler, 5 * USD, START - WEEK), ...pays],
      fake: [{ wallets: [crawler], merchant: M }],
      ledger: [gone("probes at the other merchants, at their prices", (num(n) - 1) * 20_000), gas(1)],
    };
  },
};

const otherChain: Strategy = {
  name: "other-chain",
  title:
    "20 farm wallets paying tiny metered charges on Base, funded (on the left) from an exchange on Base in a minute, or on Polygon and bridged to Base by CCTP: each withdrawn from a Polygon exchange in a minute or over a day and bridged to itself over the next days, or all minted by one Polygon wallet.",
  origin: "invented",
  knob: "funded",
  values: ["exchange, 1 minute", "Polygon, 1 minute", "Polygon, 1 day", "one Polygon wallet"],
  quick: ["Polygon, 1 minute"],
  lookAlikes: ["a launch's customers bridged in"],
  play(funded) {
    const ws = wallets("other-chain-farm", 20);
    const farm = tinyFarm(ws, 318);
    const records: object[] = [...farm.records];
    const at = (i: number) => START - 2 * WEEK + 3 * DAY + i * 7_919;
    if (funded === "exchange, 1 minute")
      records.push(...ws.map((w, i) => transfer(CEX, w, USD, START - 2 * WEEK + i)));
    else if (funded === "one Polygon wallet") {
      const source = addr("other-chain-polygon-source");
      records.push(on("polygon", transfer(POLYGON_EXCHANGE, source, 20 * USD, START - 3 * WEEK)));
      for (const [i, w] of ws.entries())
        records.push(...bridge({ from: "polygon", to: "base" }, source, w, USD, at(i)));
    } else {
      const gap = funded === "Polygon, 1 day" ? DAY / 20 : 1;
      for (const [i, w] of ws.entries())
        records.push(
          on("polygon", transfer(POLYGON_EXCHANGE, w, USD, START - 2 * WEEK + i * gap)),
          ...bridge({ from: "polygon", to: "base" }, w, w, USD, at(i)),
        );
    }
    return { records, fake: farm.fake, ledger: [gas(funded === "exchange, 1 minute" ? 20 : 40)] };
  },
};

const facilitators: Strategy = {
  name: "facilitators",
  title:
    "A farm of 12 wallets withdrawn in one minute pays tiny metered charges, split over this many facilitators.",
  origin: "invented",
  knob: "facilitators",
  values: [1, 3, 12],
  quick: [12],
  lookAlikes: ["u's buyers"],
  play(k) {
    const { ws, records } = burst("facilitators-farm", 12);
    const farm = tinyFarm(ws, 319);
    const split = farm.records.map((r, i) => ({ ...r, facilitator: addr(`facilitators-${i % num(k)}`) }));
    return { records: [...records, ...split], fake: farm.fake, ledger: [gas(12)] };
  },
};

const paidDecoys: Strategy = {
  name: "paid-decoys",
  title:
    "A farm of 12 wallets withdrawn in one minute pays tiny metered charges, and each buys once from this many genuine merchants at their $0.05 price.",
  origin: "invented",
  knob: "decoys a wallet",
  values: [0, 2, 4],
  quick: [4],
  lookAlikes: ["agents that spend most elsewhere, refunded in part"],
  play(decoys) {
    const { ws, records } = burst("paid-decoys-farm", 12);
    const farm = tinyFarm(ws, 320);
    records.push(...farm.records);
    for (let j = 0; j < num(decoys); j++) {
      const other = addr(`paid-decoys-merchant-${j}`);
      records.push(
        listing(other, "item", 0.05),
        ...exact(payers(other, wallets(`paid-decoys-customer-${j}`, 3), 4, () => 50_000)),
        ...ws.map((w, i) =>
          payment({
            payer: w,
            payTo: other,
            amount: 50_000,
            block: START + 500 + i * 7 + j,
            scheme: "exact",
          }),
        ),
      );
    }
    return {
      records,
      fake: farm.fake,
      ledger: [gone("decoy purchases at other merchants' prices", 12 * num(decoys) * 50_000), gas(12)],
    };
  },
};

const fifthPlus: Strategy = {
  name: "fifth-plus",
  title:
    "12 clusters (each withdrawn on a day of its own) pay the merchant 15 exact payments each of this share of its $0.01 price.",
  origin: "invented",
  knob: "share of the price",
  values: [0.2, 0.21, 1],
  quick: [0.2, 0.21],
  show: (v) => `${Math.round(num(v) * 100)}%`,
  lookAlikes: ["m's buyers"],
  knownLimit: {
    why: "past a fifth of the price a payment is a price a genuine discount could be, and a wash trade from wallets with no traceable link passes on purpose (docs/screens.md): its capital comes back to the gamer",
    at: (v) => num(v) > 1 / THRESHOLDS.tinyPriceDivisor,
  },
  play(share) {
    const { ws, records } = apart("fifth-plus-farm", 12);
    return {
      records: [...records, ...exact(payers(M, ws, 15, () => Math.round(10_000 * num(share))))],
      fake: [{ wallets: ws, merchant: M }],
      ledger: [gas(12)],
    };
  },
};

export const STRATEGIES: readonly Strategy[] = [
  roundTripExchange,
  roundTripBridge,
  ownShop,
  unboughtLine,
  repeatLine,
  dustHub,
  fedAfter,
  feeders,
  threeExchanges,
  oddAmount,
  twoTiny,
  agedWallets,
  deepChain,
  secondAddress,
  channelFarm,
  delayedRing,
  refundCover,
  slowProber,
  otherChain,
  facilitators,
  paidDecoys,
  fifthPlus,
  roundTripEdge,
  arbitrumEdge,
  bridgeHops,
  liquidityBridge,
  twoExchanges,
];
