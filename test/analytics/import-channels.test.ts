/**
 * Batch-settlement channels through the import: `channel` and `channel_event` records land in the indexer's
 * tables and make the rows the indexer makes of them (src/indexer/channels.ts, test/indexer/channels.test.ts):
 * a claim is its payer's payment to the receiver out of the channel, a deposit a transfer into the channel, a
 * refund and a finished withdrawal transfers back to the payer. So a merchant that funds a wallet whose
 * channel pays it back is flagged in an import as in the indexed week; without the channel records, the same
 * money is the escrow's transfers, which the import reads as the same channel moves (its payer's channels as
 * one wallet); beside the records they are left out, in any order of files. A bad record stops the import,
 * naming its line, with nothing kept.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ImportError, importNdjson } from "../../src/analytics/import.ts";
import {
  BASE_USDC,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MAX_USDC_AMOUNT,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from "../../src/chain/base.ts";
import {
  addr,
  checkpoint,
  END,
  ndjsonFile,
  payment,
  reportIn,
  reportOf,
  tempAnalytics,
  timeOf,
  transfer,
} from "../helpers/data.ts";

let analytics: Analytics;
afterEach(() => analytics?.close());

const M = addr("channel-merchant");
const FARM = addr("channel-farm");
const RELAYER = addr("channel-relayer");
const ID = `0x${"7e".repeat(32)}`;
const tx = (n: number) => `0x${(0xc000 + n).toString(16).padStart(64, "0")}`;

const channel = (over: Record<string, unknown> = {}) => ({
  type: "channel",
  chain: "base",
  channel: ID,
  payer: FARM,
  payer_authorizer: FARM,
  receiver: M,
  receiver_authorizer: RELAYER,
  token: BASE_USDC,
  withdraw_delay: 900,
  salt: `0x${"00".repeat(31)}01`,
  block_number: END - 900,
  tx_hash: tx(1),
  ...over,
});

function event(block: number, n: number, name: string, amount: bigint | number | string, over: object = {}) {
  return {
    type: "channel_event",
    chain: "base",
    tx_hash: tx(n),
    log_index: 3,
    block_number: block,
    block_time: timeOf(block),
    event: name,
    channel: ID,
    ...(!["created", "closed", "withdrawInitiated"].includes(name) && { sender: RELAYER }),
    amount: String(amount),
    ...over,
  };
}

/** The merchant funds the farm, whose channel pays the merchant back; the rest comes back to the farm. */
const week = () => [
  funding(),
  channel(),
  event(END - 900, 1, "created", 0),
  event(END - 900, 1, "deposited", 600_000, { log_index: 4 }),
  event(END - 800, 2, "claimed", 400_000),
  event(END - 700, 3, "swept", 400_000, { channel: undefined, receiver: M }),
  event(END - 600, 4, "refunded", 100_000, { sender: M }),
  event(END - 500, 5, "withdrawInitiated", 100_000),
  event(END - 40, 6, "withdrawFinalized", 100_000, { sender: FARM }),
  event(END - 40, 6, "closed", 0, { log_index: 4 }),
  checkpoint(),
];

const ESCROW = X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase();
const COLLECTOR = ERC3009_DEPOSIT_COLLECTOR_ADDRESS.toLowerCase();
/** The farm's channels as one wallet, where the escrow's events do not name them (src/analytics/import-escrow.ts). */
const POOL = `0x${"f".repeat(24)}${FARM.slice(2)}`;

/** A USDC transfer of the week's transaction n, at `log`: the escrow's and collectors' own, which the chain logs. */
function usdc(block: number, n: number, log: number, from: string, to: string, amount: number) {
  return {
    type: "transfer",
    chain: "base",
    tx_hash: tx(n),
    log_index: log,
    block_number: block,
    block_time: timeOf(block),
    from,
    to,
    amount: String(amount),
  };
}

/**
 * The week's USDC through the escrow, as the token logged it: the deposit into the ERC-3009 collector and on to
 * the escrow (before the escrow's events in its transaction), the sweep to the merchant, the refund and the
 * withdrawal to the farm.
 */
const escrowTransfers = () => [
  usdc(END - 900, 1, 1, FARM, COLLECTOR, 600_000),
  usdc(END - 900, 1, 2, COLLECTOR, ESCROW, 600_000),
  usdc(END - 700, 3, 2, ESCROW, M, 400_000),
  usdc(END - 600, 4, 2, ESCROW, FARM, 100_000),
  usdc(END - 40, 6, 2, ESCROW, FARM, 100_000),
];

/** The merchant's money to the farm, in a transaction of its own. */
const funding = () => usdc(END - 1000, 9, 1, M, FARM, 600_000);

/** The claim as a payment line (keyed by its Claimed log), as a file without the channel records gives it. */
const claimPayment = () => ({
  type: "payment",
  chain: "base",
  tx_hash: tx(2),
  log_index: 3,
  block_number: END - 800,
  block_time: timeOf(END - 800),
  facilitator: RELAYER,
  payer: FARM,
  pay_to: M,
  amount: "400000",
  scheme: "batch-settlement",
  transfer_method: "channel",
});

/** The week without the channel records: the merchant's transfer, the claim, the escrow's transfers. */
const transfersOnly = () => [funding(), claimPayment(), ...escrowTransfers(), checkpoint()];

const pick = (o: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(keys.map((k) => [k, o[k]]));

/** The money tables of a store, in one order. */
async function money(a: Analytics) {
  return {
    payments: await a.all(
      "SELECT tx_hash, log_index, facilitator, payer, pay_to, amount, scheme, transfer_method, channel FROM payments ORDER BY ALL",
    ),
    transfers: await a.all(
      "SELECT block_number, log_index, from_address, to_address, amount FROM transfers ORDER BY block_number, log_index",
    ),
    merchants: await a.all("SELECT address FROM merchants ORDER BY ALL"),
    days: await a.all("SELECT * FROM payment_days ORDER BY ALL"),
  };
}

/** A fresh store with the files imported one after the other. */
async function storeOf(...files: (readonly object[])[]): Promise<Analytics> {
  const a = await tempAnalytics();
  for (const records of files) await importNdjson(a, ndjsonFile(records));
  return a;
}

describe("channels in an import", () => {
  it("store the channel and its events, and make the indexer's claims and moves of them, once however often imported", async () => {
    analytics = await tempAnalytics();
    const file = ndjsonFile(week());
    const counts = await importNdjson(analytics, file);
    expect(counts.channel).toEqual({ read: 1, added: 1 });
    expect(counts.channel_event).toEqual({ read: 8, added: 8 });
    expect(
      await analytics.all(
        "SELECT facilitator, payer, pay_to, amount, scheme, transfer_method, channel, block_number FROM payments",
      ),
    ).toEqual([
      {
        facilitator: RELAYER,
        payer: FARM,
        pay_to: M,
        amount: 400_000n,
        scheme: "batch-settlement",
        transfer_method: "channel",
        channel: ID,
        block_number: BigInt(END - 800),
      },
    ]);
    expect(
      await analytics.all(
        "SELECT from_address AS f, to_address AS t, amount FROM transfers ORDER BY block_number, log_index",
      ),
    ).toEqual([
      { f: M, t: FARM, amount: 600_000n },
      { f: FARM, t: ID, amount: 600_000n },
      { f: ID, t: FARM, amount: 100_000n },
      { f: ID, t: FARM, amount: 100_000n },
    ]);
    expect(
      await analytics.all(
        "SELECT event, channel_id, sender, receiver FROM channel_events ORDER BY block_number, log_index",
      ),
    ).toEqual([
      { event: "created", channel_id: ID, sender: "", receiver: M },
      { event: "deposited", channel_id: ID, sender: RELAYER, receiver: M },
      { event: "claimed", channel_id: ID, sender: RELAYER, receiver: M },
      { event: "swept", channel_id: "", sender: RELAYER, receiver: M },
      { event: "refunded", channel_id: ID, sender: M, receiver: M },
      { event: "withdrawInitiated", channel_id: ID, sender: "", receiver: M },
      { event: "withdrawFinalized", channel_id: ID, sender: FARM, receiver: M },
      { event: "closed", channel_id: ID, sender: "", receiver: M },
    ]);
    expect(await analytics.all("SELECT address FROM merchants")).toEqual([{ address: M }]);
    // The report's day groups hold the claim.
    expect(await analytics.one("SELECT sum(amount) AS usd FROM payment_days")).toEqual({ usd: 400_000n });

    const again = await importNdjson(analytics, file);
    expect([again.channel.added, again.channel_event.added, again.payment.added]).toEqual([0, 0, 0]);
    expect(await analytics.one("SELECT count(*) AS n FROM transfers")).toEqual({ n: 4n });
  });

  it("take the bulk way and the exact way to the same rows", async () => {
    analytics = await tempAnalytics();
    // A payment repeated sends the file the exact way, which merges the repeat.
    const p = payment({ payer: addr("buyer"), payTo: M, amount: 5_000, block: END - 100 });
    await importNdjson(analytics, ndjsonFile([...week(), p, p]));
    const exact = await analytics.all("SELECT * FROM payments ORDER BY block_number");
    analytics.close();
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile([...week(), p]));
    expect(await analytics.all("SELECT * FROM payments ORDER BY block_number")).toEqual(exact);
    expect(exact).toHaveLength(2);
  });

  it("flag a merchant's money that came back through a channel it funded, as the indexed week does", async () => {
    const report = await reportOf(week(), M);
    expect(report.report).toMatchObject({ tx: 1, usd: 0.4, real_tx: 0, real_usd: 0 });
    expect(report.report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
  });

  it("leave the escrow's and its collectors' transfers beside the records out: the records' moves stand for them", async () => {
    analytics = await storeOf(week());
    const records = await money(analytics);
    analytics.close();
    analytics = await storeOf([...week(), ...escrowTransfers()]);
    expect(await money(analytics)).toEqual(records);
    const counts = await importNdjson(analytics, ndjsonFile([...escrowTransfers(), claimPayment()]));
    expect([counts.transfer.added, counts.payment.added]).toEqual([0, 0]);
    expect(await money(analytics)).toEqual(records);
    // The store is the import of the records and the transfers (its money the records' alone, as checked).
    const report = await reportIn(analytics, M);
    expect(report.report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
  });

  it("read the escrow's transfers without the records as the payer's channels: in, out to the claims, back", async () => {
    analytics = await storeOf(transfersOnly());
    const stored = await money(analytics);
    expect(stored.transfers).toEqual([
      { block_number: BigInt(END - 1000), log_index: 1, from_address: M, to_address: FARM, amount: 600_000n },
      // The deposit into the collector is the farm's money into its channels; the collector's on to the escrow,
      // and the sweep to the merchant (its claim paid it), are nothing more.
      {
        block_number: BigInt(END - 900),
        log_index: 1,
        from_address: FARM,
        to_address: POOL,
        amount: 600_000n,
      },
      {
        block_number: BigInt(END - 600),
        log_index: 2,
        from_address: POOL,
        to_address: FARM,
        amount: 100_000n,
      },
      {
        block_number: BigInt(END - 40),
        log_index: 2,
        from_address: POOL,
        to_address: FARM,
        amount: 100_000n,
      },
    ]);
    expect(stored.payments).toMatchObject([{ payer: FARM, pay_to: M, channel: POOL }]);
    // The escrow and the collector are no wallets the week knows of.
    expect(stored.merchants).toEqual([{ address: M }]);
    // Importing it again changes nothing.
    const again = await importNdjson(analytics, ndjsonFile(transfersOnly()));

    expect([again.transfer.added, again.payment.added]).toEqual([0, 0]);
    expect(await money(analytics)).toEqual(stored);
    const report = await reportIn(analytics, M);
    expect(report.report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
    // A deposit through Permit2's collector goes straight from the payer to the escrow: the same move.
    const straight = transfersOnly().map((r) => ("to" in r && r.to === COLLECTOR ? { ...r, to: ESCROW } : r));
    const permit2 = await reportOf(
      straight.filter((r) => !("from" in r && r.from === COLLECTOR)),
      M,
    );
    expect(permit2.report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
  });

  it("make one store of the records and the transfers in any files, in any order", async () => {
    analytics = await storeOf([...week(), ...escrowTransfers()]);
    const whole = await money(analytics);
    analytics.close();
    analytics = await storeOf(transfersOnly(), week());
    expect(await money(analytics)).toEqual(whole);
    analytics.close();
    analytics = await storeOf(week(), transfersOnly());
    expect(await money(analytics)).toEqual(whole);
    analytics.close();
    // Without the records: the claim before its deposit, or after it.
    analytics = await storeOf(transfersOnly());
    const transfers = await money(analytics);
    analytics.close();
    const claimFirst = [funding(), claimPayment(), checkpoint()];
    analytics = await storeOf(claimFirst, [...escrowTransfers(), checkpoint()]);
    expect((await money(analytics)).payments).toEqual(transfers.payments);
    analytics.close();
    analytics = await storeOf([...escrowTransfers(), checkpoint()], claimFirst);
    expect((await money(analytics)).payments).toEqual(transfers.payments);
  });

  it("flag every claim of the merchant's money alike from the records, the transfers or both, where the escrow has many depositors", async () => {
    // 40 channel buyers of their own money (3 claims each) and 15 wallets the merchant funds (10 claims each): the
    // escrow's transfers, plain, make it a wallet of 55 senders (a hub the walk stops at, from 50).
    const records: object[] = [];
    const transfers: object[] = [];
    const claims: object[] = [];
    const funding: object[] = [];
    let block = END - 200_000;
    let n = 100;
    const next = () => {
      block += 10;
      return block;
    };
    const buyer = (payer: string, funder: string, count: number) => {
      const id = `0x${(++n).toString(16).padStart(64, "0")}`;
      funding.push(usdc(next(), ++n, 1, funder, payer, count * 10_000));
      const t = ++n;
      next();
      records.push(
        channel({ channel: id, payer, payer_authorizer: payer, block_number: block, tx_hash: tx(t) }),
        event(block, t, "created", 0, { channel: id }),
        event(block, t, "deposited", count * 10_000, { channel: id, log_index: 4 }),
      );
      transfers.push(
        usdc(block, t, 1, payer, COLLECTOR, count * 10_000),
        usdc(block, t, 2, COLLECTOR, ESCROW, count * 10_000),
      );
      for (let c = 0; c < count; c++) {
        const claim = event(next(), ++n, "claimed", 10_000, { channel: id });
        records.push(claim);
        claims.push({
          ...claimPayment(),
          ...pick(claim, ["tx_hash", "log_index", "block_number", "block_time"]),
          payer,
          amount: "10000",
        });
      }
    };
    for (let i = 0; i < 40; i++) buyer(addr(`genuine-${i}`), addr(`source-${i}`), 3);
    for (let i = 0; i < 15; i++) buyer(addr(`funded-${i}`), M, 10);
    const sweep = event(next(), ++n, "swept", 2_700_000, { channel: undefined, receiver: M });
    records.push(sweep);
    transfers.push(usdc(block, n, 1, ESCROW, M, 2_700_000));
    const ways = {
      records: [...funding, ...records, checkpoint()],
      both: [...funding, ...records, ...transfers, checkpoint()],
      transfers: [...funding, ...claims, ...transfers, checkpoint()],
    };
    for (const [way, file] of Object.entries(ways)) {
      const { report } = await reportOf(file, M);
      expect([report.tx, report.flags], way).toEqual([270, { merchant_funded: { tx: 150, usd: 1.5 } }]);
    }
  }, 60_000);

  it("put right a store that holds the escrow's transfers as plain rows when the file is imported again", async () => {
    analytics = await storeOf(transfersOnly());
    const right = await money(analytics);
    analytics.close();
    // As an import before the escrow's transfers were read stored them: plain rows, the claim its payer's.
    analytics = await storeOf([funding(), claimPayment(), checkpoint()]);
    for (const t of escrowTransfers())
      await analytics.run(
        `INSERT INTO transfers VALUES ('base', $tx, $log, $block, to_timestamp($time)::TIMESTAMP, $from, $to, $amount)`,
        {
          tx: t.tx_hash,
          log: t.log_index,
          block: t.block_number,
          time: t.block_time,
          from: t.from,
          to: t.to,
          amount: BigInt(t.amount),
        },
      );
    await importNdjson(analytics, ndjsonFile(transfersOnly()));
    expect(await money(analytics)).toEqual(right);
  });

  it("leave a claim whose deposit the data does not hold spending its payer's money", async () => {
    const records = [transfer(M, FARM, 600_000, END - 1000), claimPayment(), checkpoint()];
    analytics = await storeOf(records);
    expect(await analytics.all("SELECT channel FROM payments")).toEqual([{ channel: null }]);
    expect((await reportIn(analytics, M)).report.flags).toEqual({ merchant_funded: { tx: 1, usd: 0.4 } });
  });

  it("keep an event too large for a payment as an event alone, and a channel of another token moves nothing", async () => {
    analytics = await tempAnalytics();
    const other = `0x${"8e".repeat(32)}`;
    await importNdjson(
      analytics,
      ndjsonFile([
        channel(),
        channel({ channel: other, token: addr("other-token") }),
        event(END - 900, 1, "deposited", MAX_USDC_AMOUNT + 1n),
        event(END - 850, 7, "deposited", 5, { channel: other }),
        event(END - 800, 2, "claimed", 5, { channel: other }),
        checkpoint(),
      ]),
    );
    expect(await analytics.one("SELECT count(*) AS n FROM channel_events")).toEqual({ n: 3n });
    expect(
      await analytics.one("SELECT (SELECT count(*) FROM payments) + (SELECT count(*) FROM transfers) AS n"),
    ).toEqual({
      n: 0n,
    });
  });

  it("take a channel opened before the data, and one the store already holds", async () => {
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile([channel({ block_number: undefined, tx_hash: undefined })]));
    expect(await analytics.one("SELECT block_number, tx_hash FROM channels")).toEqual({
      block_number: -1n,
      tx_hash: "",
    });
    await importNdjson(analytics, ndjsonFile([event(END - 800, 2, "claimed", 400_000), checkpoint()]));
    expect(await analytics.one("SELECT payer, pay_to FROM payments")).toEqual({ payer: FARM, pay_to: M });
  });

  describe("refuse a bad record", () => {
    // A refusal keeps nothing, which each case checks: the next finds the store as empty as a new one.
    let empty: Analytics;
    beforeAll(async () => {
      empty = await tempAnalytics();
    });
    afterAll(() => empty?.close());

    it.each([
      [[event(END - 800, 2, "claimed", 1)], "channel 0x7e7e", 'has no "channel" record'],
      [[channel(), channel({ withdraw_delay: 60 })], "", "appears earlier in the file with another config"],
      [
        [channel(), event(END - 800, 2, "claimed", 1), event(END - 800, 2, "claimed", 2)],
        "channel_event",
        "appears earlier in the file with different fields",
      ],
      [[channel(), event(END - 800, 2, "claimed", 1, { receiver: FARM })], "", "must be channel"],
      [
        [channel(), event(END - 800, 2, "swept", 1)],
        "",
        'a "swept" event names its "receiver" and no "channel"',
      ],
      [[channel(), event(END - 800, 2, "settled", 1)], "", '"event" must be one of created, deposited'],
      [[channel(), event(END - 800, 2, "claimed", 1, { sender: undefined })], "", 'missing field "sender"'],
      [[channel(), event(END - 800, 2, "claimed", "1e3")], "", '"amount" must be a whole number'],
      [
        [channel(), event(END - 800, 2, "claimed", 1, { channel: "0x12" })],
        "",
        '"channel" must be a channel id',
      ],
      [[channel({ tx_hash: undefined })], "", '"block_number" and "tx_hash" go together'],
      [[channel({ token: "usdc" })], "", '"token" must be an address'],
      [[channel({ salt: undefined })], "", 'missing field "salt"'],
      [[channel(), event(END - 800, 2, "claimed", 1, { block_time: timeOf(END - 800) + 1 })], "", "block"],
      [[{ ...claimPayment(), pay_to: COLLECTOR }], "a payment to or from", "batch-settlement escrow"],
      [[{ ...claimPayment(), payer: ESCROW.toUpperCase().replace("0X", "0x") }], "", "not an x402 payment"],
    ])("refuse a bad record, naming its line, keeping nothing (%#)", async (records, start, reason) => {
      const file = ndjsonFile([checkpoint(), ...records]);
      const error = await importNdjson(empty, file).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ImportError);
      const { line, reason: why, message } = error as ImportError;
      expect(message).toBe(`${file}:${line}: ${why}`);
      expect(message).not.toContain("\n");
      expect(line).toBe(records.length + 1);
      expect(why.startsWith(start)).toBe(true);
      expect(why).toContain(reason);
      for (const table of ["channels", "channel_events", "payments", "transfers", "checkpoints"])
        expect(await empty.one(`SELECT count(*) AS n FROM ${table}`), table).toEqual({ n: 0n });
    });
  });
});

/** Imports `stored`, then `records`, expecting a refusal that keeps nothing of the second file: "line N: reason". */
async function refusedOver(stored: object[], records: object[]): Promise<string> {
  analytics = await tempAnalytics();
  if (stored.length > 0) await importNdjson(analytics, ndjsonFile(stored));
  const tables = ["channels", "channel_events", "payments", "transfers", "checkpoints", "merchants"];
  const dump = async () => Promise.all(tables.map((t) => analytics.all(`SELECT * FROM ${t} ORDER BY ALL`)));
  const before = await dump();
  const file = ndjsonFile(records);
  const error = await importNdjson(analytics, file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  const { line, reason, message } = error as ImportError;
  expect(message).toBe(`${file}:${line}: ${reason}`);
  expect(await dump()).toEqual(before);
  return `line ${line}: ${reason}`;
}

describe("what a channel holds", () => {
  const overdrawn = (outs: bigint | number, ins: bigint | number, block: number) =>
    `channel ${ID} holds less than this takes: by block ${block} its claims, refunds and withdrawals come to ` +
    `${outs} atomic units, its deposits to ${ins} (the escrow never pays out more than was deposited)`;
  const open = () => [
    channel(),
    event(END - 900, 1, "created", 0),
    event(END - 900, 1, "deposited", 1_000, { log_index: 4 }),
  ];

  it("refuses a claim beyond the channel's deposits, naming its line, keeping nothing", async () => {
    // 5,000 USDC claimed against a deposit of $0.001.
    expect(
      await refusedOver([], [...open(), event(END - 800, 2, "claimed", 5_000_000_000), checkpoint()]),
    ).toBe(`line 4: ${overdrawn(5_000_000_000, 1_000, END - 800)}`);
  });

  it("counts claims, refunds and withdrawals together against every deposit, in chain order", async () => {
    // The claims are cumulative: the second one is the one that goes beyond.
    expect(
      await refusedOver(
        [],
        [...open(), event(END - 800, 2, "claimed", 600), event(END - 700, 3, "claimed", 401), checkpoint()],
      ),
    ).toBe(`line 5: ${overdrawn(1_001, 1_000, END - 700)}`);
    analytics.close();
    expect(
      await refusedOver(
        [],
        [...open(), event(END - 800, 2, "claimed", 600), event(END - 600, 4, "refunded", 500, { sender: M })],
      ),
    ).toBe(`line 5: ${overdrawn(1_100, 1_000, END - 600)}`);
    analytics.close();
    // Written out of chain order: the deposit comes first on the chain, so the claim is covered.
    analytics = await tempAnalytics();
    const counts = await importNdjson(
      analytics,
      ndjsonFile([
        channel(),
        event(END - 800, 2, "claimed", 1_500),
        event(END - 850, 5, "deposited", 500),
        ...open().slice(1),
        event(END - 40, 6, "withdrawFinalized", 0, { sender: FARM }),
        checkpoint(),
      ]),
    );
    expect(counts.channel_event.added).toBe(5);
  });

  it("counts the analytics database's events of the channel with the file's", async () => {
    const stored = [...open(), event(END - 800, 2, "claimed", 600), checkpoint()];
    expect(await refusedOver(stored, [event(END - 700, 3, "claimed", 401)])).toBe(
      `line 1: ${overdrawn(1_001, 1_000, END - 700)}`,
    );
    analytics.close();
    // A claim in the file before a stored one, which it leaves uncovered: the file's claim is named.
    expect(await refusedOver(stored, [event(END - 850, 7, "claimed", 500)])).toBe(
      `line 1: ${overdrawn(1_100, 1_000, END - 800)}`,
    );
    analytics.close();
    // A deposit in the file covers a claim that follows it, stored or not; a repeat of the stored events is one.
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile(stored));
    const more = await importNdjson(
      analytics,
      ndjsonFile([...stored, event(END - 750, 8, "deposited", 300), event(END - 700, 3, "claimed", 700)]),
    );
    expect(more.channel_event).toEqual({ read: 5, added: 2 });
  });

  it("sums amounts near the escrow's uint128 exactly, without overflowing", async () => {
    const half = 2n ** 127n - 1n;
    const records = [
      channel(),
      event(END - 900, 1, "deposited", half),
      event(END - 890, 2, "deposited", half),
      event(END - 800, 3, "claimed", half),
      event(END - 790, 4, "claimed", half),
    ];
    analytics = await tempAnalytics();
    expect((await importNdjson(analytics, ndjsonFile([...records, checkpoint()]))).channel_event.added).toBe(
      4,
    );
    analytics.close();
    expect(await refusedOver([], [...records, event(END - 780, 5, "claimed", 1), checkpoint()])).toBe(
      `line 6: ${overdrawn(2n * half + 1n, 2n * half, END - 780)}`,
    );
  });

  it("refuses an event before its channel's creation", async () => {
    expect(await refusedOver([], [channel(), event(END - 901, 1, "deposited", 5)])).toBe(
      `line 2: channel ${ID} was created in block ${END - 900}, after this event`,
    );
  });

  it("refuses a channel or an event the analytics database holds otherwise, and takes them again as they are", async () => {
    const stored = [...open(), event(END - 800, 2, "claimed", 600), checkpoint()];
    expect(await refusedOver(stored, [channel({ withdraw_delay: 60 })])).toBe(
      `line 1: channel ${ID} is in the analytics database with another config: withdraw_delay 900 there, 60 here`,
    );
    analytics.close();
    expect(await refusedOver(stored, [event(END - 800, 2, "claimed", 601)])).toBe(
      `line 1: channel_event ${tx(2)} log 3 is in the analytics database with different fields: amount 600 there, 601 here`,
    );
    analytics.close();
    analytics = await tempAnalytics();
    await importNdjson(analytics, ndjsonFile(stored));
    // Its creation left out (a channel created before the data, as another store knows it) is the same channel.
    const again = await importNdjson(
      analytics,
      ndjsonFile([channel({ block_number: undefined, tx_hash: undefined }), ...stored.slice(1)]),
    );
    expect([again.channel.added, again.channel_event.added]).toEqual([0, 0]);
  });
});

describe("one log, one record", () => {
  const deposit = event(END - 900, 1, "deposited", 1_000, { log_index: 4 });
  const claim = event(END - 800, 2, "claimed", 600);
  const open = [channel(), deposit, claim];
  /** A payment line of a log an event has: it would stand where the claim's payment goes. */
  const onLog = (e: { tx_hash: string; log_index: number; block_number: number }) => ({
    ...payment({
      payer: addr("other-payer"),
      payTo: addr("other-merchant"),
      amount: 5,
      block: e.block_number,
    }),
    tx_hash: e.tx_hash,
    log_index: e.log_index,
  });
  const says = (kind: string, e: { tx_hash: string; log_index: number }, where: string) =>
    `${kind} ${e.tx_hash} log ${e.log_index} ${where}: one log is one record (a channel's claims and moves are made of its events)`;

  it("refuses a payment or transfer line of an event's log, and an event of a stored payment's, keeping nothing", async () => {
    expect(await refusedOver([], [...open, onLog(claim), checkpoint()])).toBe(
      `line 4: ${says("payment", claim, "is a channel_event of the file too")}`,
    );
    analytics.close();
    const moved = { ...transfer(addr("x"), addr("y"), 5, END - 900), tx_hash: deposit.tx_hash, log_index: 4 };
    expect(await refusedOver([], [moved, ...open])).toBe(
      `line 3: ${says("transfer", deposit, "is a channel_event of the file too")}`,
    );
    analytics.close();
    expect(await refusedOver([onLog(claim), checkpoint()], open)).toBe(
      `line 3: ${says("channel_event", claim, "is a payment in the analytics database")}`,
    );
    analytics.close();
    expect(await refusedOver([...open, checkpoint()], [onLog(claim)])).toBe(
      `line 1: ${says("payment", claim, "is a channel_event in the analytics database")}`,
    );
  });

  it("holds for an event that makes no row (another token's channel), the bulk way too", async () => {
    const other = [channel({ token: addr("other-token") }), deposit, claim, checkpoint()];
    expect(await refusedOver(other, [onLog(claim)])).toBe(
      `line 1: ${says("payment", claim, "is a channel_event in the analytics database")}`,
    );
  });
});
