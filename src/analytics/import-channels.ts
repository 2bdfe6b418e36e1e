/**
 * The import's batch-settlement channels: `channel` records (a channel's config) and `channel_event` records
 * (the escrow's events), stored as the indexer stores them (`channels`, `channel_events`), and turned into the
 * rows the indexer derives from them (src/indexer/channels.ts): a claim is its payer's payment to the
 * receiver, spending the channel's money (`payments.channel`); a deposit is a transfer from the payer to the
 * channel, named by its id; a refund and a finished timed withdrawal are transfers from the channel back to
 * the payer. The provenance walk follows money through a channel by those rows alone, so an imported week
 * with channels reports what the same week indexed reports (test/analytics/export.test.ts holds the two to
 * the same bytes).
 *
 * The indexer derives them in TypeScript as it reads logs; the import works in SQL over the staged file, so
 * the rules are written again here, each beside its counterpart's name: only channels of USDC count, and
 * only amounts from 1 to MAX_USDC_AMOUNT (larger ones are kept as events, as the indexer keeps them).
 */
import { MAX_USDC_AMOUNT } from "../chain/base.ts";
import type { AnyChainRecord } from "../chain/chains.ts";
import type { Analytics } from "./duckdb.ts";
import { sqlDiffer, sqlDifferences, sqlStoreForm, sqlTime } from "./import-rules.ts";

/** The temporary tables `stageChannels` makes, for the import to drop whichever way it ends. */
export const CHANNEL_STAGING = ["import_channels", "import_channel_events"] as const;

/**
 * The file's channel configs and events, typed, beside `import_raw` (whose records the rules have passed).
 * A config or event repeated in the file with the same fields is one row.
 */
export async function stageChannels(analytics: Analytics): Promise<void> {
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channels AS
    SELECT min(record) AS record, channel_id, payer, payer_authorizer, receiver, receiver_authorizer, token,
      withdraw_delay, salt, block_number, tx_hash
    FROM (SELECT record, lower(channel) AS channel_id, ${sqlStoreForm("payer")} AS payer,
        lower(payer_authorizer) AS payer_authorizer, lower(receiver) AS receiver,
        lower(receiver_authorizer) AS receiver_authorizer, lower(token) AS token,
        withdraw_delay::BIGINT AS withdraw_delay, lower(salt) AS salt,
        -- A channel created before the data: the indexer reads its config back and stores it so.
        coalesce(block_number::BIGINT, -1) AS block_number, coalesce(${sqlStoreForm("tx_hash")}, '') AS tx_hash
      FROM import_raw WHERE type = 'channel')
    GROUP BY ALL`);
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channel_events AS
    SELECT min(record) AS record, tx_hash, log_index, block_number, block_time, event, channel_id, sender,
      receiver, amount
    FROM (SELECT record, ${sqlStoreForm("tx_hash")} AS tx_hash, log_index::INTEGER AS log_index,
        block_number::BIGINT AS block_number, ${sqlTime("block_time")} AS block_time, event,
        coalesce(lower(channel), '') AS channel_id, coalesce(lower(sender), '') AS sender,
        lower(receiver) AS receiver, amount::HUGEINT AS amount
      FROM import_raw WHERE type = 'channel_event')
    GROUP BY ALL`);
}

/** The configs an event may name: the stored ones, and the file's for channels the store does not hold. */
function configs(slug: string): string {
  return `(SELECT channel_id, receiver, block_number FROM channels WHERE chain = '${slug}'
    UNION ALL SELECT channel_id, receiver, block_number FROM import_channels
    WHERE channel_id NOT IN (SELECT channel_id FROM channels WHERE chain = '${slug}'))`;
}

/** A channel's config besides its id and creation, which a repeat must agree on. */
const CONFIG_FIELDS = [
  "payer",
  "payer_authorizer",
  "receiver",
  "receiver_authorizer",
  "token",
  "withdraw_delay",
  "salt",
];
/** An event's fields besides its key (tx_hash, log_index). */
const EVENT_FIELDS = ["block_number", "block_time", "event", "channel_id", "sender", "amount", "receiver"];

/**
 * The first staged record, in file order, that the rules of one line cannot see: a channel or an event
 * given twice with different fields, or otherwise than the analytics database holds it (a chain's record does not
 * change: one of the two is wrong); an event of a channel with no config (the indexer refuses one too), an event
 * whose receiver is not its channel's, an event before its channel was created; and a claim, refund or
 * withdrawal beyond what its channel holds (`overdrawn`). Undefined when there is none.
 */
export async function channelProblem(
  analytics: Analytics,
  chain: AnyChainRecord,
): Promise<{ record: bigint; reason: string } | undefined> {
  const slug = chain.slug;
  // Most files have no channel records, and most stores no events: then nothing below can find a problem (every
  // part reads the staged records but the one of a line on a stored event's log), and its one statement costs a
  // small file's import more than any other but the staging (docs/benchmarks-log.md, 2026-11-29 afternoon).
  const none = await analytics.one<{ staged: bigint; stored: boolean }>(
    `SELECT (SELECT count(*) FROM import_channels) + (SELECT count(*) FROM import_channel_events) AS staged,
       EXISTS (SELECT 1 FROM channel_events WHERE chain = '${slug}') AS stored`,
  );
  if (none?.staged === 0n && !none.stored) return undefined;
  const CONFIGS = configs(slug);
  const found = await analytics.one<{ record: bigint; reason: string }>(`
    SELECT list(record ORDER BY record)[2] AS record,
      'channel ' || channel_id || ' appears earlier in the file with another config' AS reason
    FROM import_channels GROUP BY channel_id HAVING count(*) > 1
    UNION ALL
    SELECT list(record ORDER BY record)[2],
      'channel_event ' || tx_hash || ' log ' || log_index || ' appears earlier in the file with different fields'
    FROM import_channel_events GROUP BY tx_hash, log_index HAVING count(*) > 1
    UNION ALL
    -- A channel the store knows from before its data (no creation) may come with its creation, and back.
    SELECT here.record, 'channel ' || here.channel_id || ' is in the analytics database with another config: ' ||
      array_to_string(${sqlDifferences([...CONFIG_FIELDS, "block_number", "tx_hash"], "there", "here")}, '; ')
    FROM import_channels here JOIN channels there ON there.chain = '${slug}' AND there.channel_id = here.channel_id
    WHERE ${sqlDiffer(CONFIG_FIELDS, "there", "here")} OR (here.block_number >= 0 AND there.block_number >= 0
      AND (here.block_number <> there.block_number OR here.tx_hash <> there.tx_hash))
    UNION ALL
    SELECT here.record, 'channel_event ' || here.tx_hash || ' log ' || here.log_index ||
      ' is in the analytics database with different fields: ' ||
      array_to_string(${sqlDifferences(EVENT_FIELDS, "there", "here")}, '; ')
    -- The stored event as a column of its line, whose receiver, when left out, is the stored one.
    FROM (SELECT e.* REPLACE (coalesce(e.receiver, s.receiver) AS receiver), s AS there
      FROM import_channel_events e JOIN channel_events s
        ON s.chain = '${slug}' AND s.tx_hash = e.tx_hash AND s.log_index = e.log_index) here
    WHERE ${sqlDiffer(EVENT_FIELDS, "there", "here")}
    UNION ALL
    ${oneRecordALog(slug)}
    UNION ALL
    SELECT record, 'channel ' || channel_id || ' has no "channel" record, in the file or the analytics database'
    FROM import_channel_events e
    WHERE channel_id <> '' AND channel_id NOT IN (SELECT channel_id FROM ${CONFIGS})
    UNION ALL
    SELECT record, '"receiver" must be channel ' || e.channel_id || '''s receiver, ' || c.receiver
    FROM import_channel_events e JOIN ${CONFIGS} c USING (channel_id)
    WHERE e.receiver IS NOT NULL AND e.receiver <> c.receiver
    UNION ALL
    SELECT record, 'channel ' || e.channel_id || ' was created in block ' || c.block_number || ', after this event'
    FROM import_channel_events e JOIN ${CONFIGS} c USING (channel_id)
    WHERE c.block_number >= 0 AND e.block_number < c.block_number
    ORDER BY record LIMIT 1`);
  return found ?? (await overdrawn(analytics, slug, CONFIGS));
}

/**
 * SQL: the records that break "one log, one record": a payment or transfer line of the same log (tx_hash,
 * log_index) as a channel event, of the file or the store, or an event new to the store of the log of a payment
 * or transfer it holds. A claim's payment and a deposit's, refund's or withdrawal's transfer are made of the event
 * (`mergeChannels`), so the line would take the place of that row, or an event would make none. One pairing is
 * the same record written twice, and is taken: a claim's payment line beside its `claimed` event, of the claim's
 * amount (the form an export of claims without their records, or a file of both, writes; import-escrow.ts gives
 * the payment the event's channel, and a payment line that disagrees with the stored row is refused as any is).
 */
function oneRecordALog(slug: string): string {
  const reason = (what: string) =>
    `' ${what}: one log is one record (a channel''s claims and moves are made of its events)'`;
  const sameClaim = (kind: string, event: string, amount: string, eventAmount: string) =>
    `(${kind} = 'payment' AND ${event} = 'claimed' AND ${amount} = ${eventAmount})`;
  // Stored payments and transfers read by the events' keys alone (the events are the build side).
  const stored = (
    table: string,
  ) => `SELECT '${table === "payments" ? "payment" : "transfer"}' AS kind, t.tx_hash,
    t.log_index, t.amount::HUGEINT AS amount FROM ${table} t SEMI JOIN import_channel_events e ON t.tx_hash = e.tx_hash AND t.log_index = e.log_index
    WHERE t.chain = '${slug}'`;
  return `SELECT greatest(r.record, e.record), r.type || ' ' || e.tx_hash || ' log ' || e.log_index ||
      ${reason("is a channel_event of the file too")}
    FROM import_raw r JOIN import_channel_events e ON e.tx_hash = ${sqlStoreForm("r.tx_hash")} AND e.log_index = r.log_index::INTEGER
    WHERE r.type IN ('payment', 'transfer')
      AND NOT ${sameClaim("r.type", "e.event", "try_cast(r.amount AS HUGEINT)", "e.amount")}
    UNION ALL
    SELECT r.record, r.type || ' ' || s.tx_hash || ' log ' || s.log_index || ${reason("is a channel_event in the analytics database")}
    FROM import_raw r JOIN channel_events s
      ON s.chain = '${slug}' AND s.tx_hash = ${sqlStoreForm("r.tx_hash")} AND s.log_index = r.log_index::INTEGER
    WHERE r.type IN ('payment', 'transfer')
      AND NOT ${sameClaim("r.type", "s.event", "try_cast(r.amount AS HUGEINT)", "s.amount")}
    UNION ALL
    SELECT e.record, 'channel_event ' || e.tx_hash || ' log ' || e.log_index || ' is a ' || h.kind ||
      ${reason("in the analytics database")}
    FROM import_channel_events e JOIN (${stored("payments")} UNION ALL ${stored("transfers")}) h USING (tx_hash, log_index)
    WHERE NOT EXISTS (SELECT 1 FROM channel_events s
      WHERE s.chain = '${slug}' AND s.tx_hash = e.tx_hash AND s.log_index = e.log_index)
      AND NOT ${sameClaim("h.kind", "e.event", "h.amount", "e.amount")}`;
}

/** 2^64: the escrow's amounts (uint128) are summed in two halves, so that no sum of them overflows a HUGEINT. */
const HALF = "18446744073709551616::HUGEINT";

/**
 * The escrow's rule (`contracts/X402BatchSettlement.sol`): a channel's claims, refunds and finished withdrawals
 * together never exceed its deposits (a claim beyond its balance reverts; a refund or a withdrawal takes at most
 * what is unclaimed). Checked in chain order over the file's events and the stored ones of the same channels, for
 * channels created in the data: one created before it may hold deposits the data does not show. The line named
 * is the event that takes its channel below zero, or, when that is a stored event (the file's earlier claims or
 * refunds spent what it needed), the file's last such event before it. A channel the stored events alone
 * overdraw (a store indexed with a gap) is not held against the file.
 */
async function overdrawn(
  analytics: Analytics,
  slug: string,
  CONFIGS: string,
): Promise<{ record: bigint; reason: string } | undefined> {
  // Each side (in: deposits; out: the rest) in two halves, summed in chain order; with `s`, the stored events only.
  const sums = ["in", "out"].flatMap((side) =>
    [
      ["", "true"],
      ["s", "record IS NULL"],
    ].flatMap(([prefix, when]) =>
      [
        ["hi", `amount // ${HALF}`],
        ["lo", `amount % ${HALF}`],
      ].map(
        ([half, part]) =>
          `sum(CASE WHEN side = '${side}' AND ${when} THEN ${part} ELSE 0 END) OVER w AS ${prefix}${side}_${half}`,
      ),
    ),
  );
  // A side's total as (high, low) halves with the low half's carry moved up: compared as a pair, exactly.
  const carried = (p: string, side: string) =>
    `(${p}${side}_hi + ${p}${side}_lo // ${HALF}, ${p}${side}_lo % ${HALF})`;
  const exceeds = (p: string) => `${carried(p, "out")} > ${carried(p, "in")}`;
  const row = await analytics.one<{
    record: bigint;
    channel_id: string;
    block_number: bigint;
    out_hi: bigint;
    out_lo: bigint;
    in_hi: bigint;
    in_lo: bigint;
  }>(`
    WITH touched AS (SELECT DISTINCT channel_id FROM import_channel_events
        WHERE channel_id IN (SELECT channel_id FROM ${CONFIGS} WHERE block_number >= 0)),
      events AS (
        SELECT record, channel_id, block_number, log_index, event, amount FROM import_channel_events e
        WHERE channel_id IN (SELECT channel_id FROM touched) AND NOT EXISTS (SELECT 1 FROM channel_events s
          WHERE s.chain = '${slug}' AND s.tx_hash = e.tx_hash AND s.log_index = e.log_index)
        UNION ALL
        SELECT NULL, channel_id, block_number, log_index, event, amount FROM channel_events
        WHERE chain = '${slug}' AND channel_id IN (SELECT channel_id FROM touched)),
      moves AS (SELECT *, CASE WHEN event = 'deposited' THEN 'in' ELSE 'out' END AS side FROM events
        WHERE event IN ('deposited', 'claimed', 'refunded', 'withdrawFinalized')),
      running AS (SELECT *, ${sums.join(",\n        ")}
        FROM moves WINDOW w AS (PARTITION BY channel_id ORDER BY block_number, log_index ROWS UNBOUNDED PRECEDING)),
      first AS (SELECT * FROM running WHERE ${exceeds("")} AND NOT ${exceeds("s")}
        QUALIFY row_number() OVER (PARTITION BY channel_id ORDER BY block_number, log_index) = 1)
    SELECT coalesce(f.record, (SELECT max_by(r.record, (r.block_number, r.log_index)) FROM running r
        WHERE r.channel_id = f.channel_id AND r.record IS NOT NULL AND r.side = 'out'
          AND (r.block_number, r.log_index) < (f.block_number, f.log_index))) AS record,
      f.channel_id, f.block_number, f.out_hi, f.out_lo, f.in_hi, f.in_lo
    FROM first f ORDER BY record LIMIT 1`);
  if (!row) return undefined;
  const total = (hi: bigint, lo: bigint) => hi * 2n ** 64n + lo;
  const reason =
    `channel ${row.channel_id} holds less than this takes: by block ${row.block_number} its claims, refunds and ` +
    `withdrawals come to ${total(row.out_hi, row.out_lo)} atomic units, its deposits to ${total(row.in_hi, row.in_lo)} ` +
    "(the escrow never pays out more than was deposited)";
  return { record: row.record, reason };
}

export interface ChannelsMerged {
  channels: number;
  events: number;
  /** The blocks of the claims added as payments, for the report's day groups. */
  paymentBlocks?: { lo: bigint; hi: bigint };
}

/**
 * Stores the staged channels and events, and adds the payments and transfers they make. What the store
 * already holds is kept as it is, as for every on-chain record: a stored config, an event or a row of the same
 * (tx_hash, log_index).
 */
export async function mergeChannels(analytics: Analytics, chain: AnyChainRecord): Promise<ChannelsMerged> {
  // The store and the file hold one chain (import-chain.ts): its slug, and its USDC for the rows a move makes.
  const slug = chain.slug;
  const usdc = chain.usdc.address;
  const count = async (table: string) =>
    Number((await analytics.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))?.n ?? 0n);
  // Most files have no channels: nothing to probe the payments for.
  if ((await count("import_channels")) + (await count("import_channel_events")) === 0)
    return { channels: 0, events: 0 };
  const before = { channels: await count("channels"), events: await count("channel_events") };
  await analytics.run(`INSERT OR IGNORE INTO channels
    SELECT '${slug}', channel_id, payer, payer_authorizer, receiver, receiver_authorizer, token, withdraw_delay,
      salt, block_number, tx_hash
    FROM import_channels`);
  // Only the events new to the store make rows: a stored event's rows were made when it was stored.
  await analytics.run(`CREATE OR REPLACE TEMP TABLE import_channel_events AS
    SELECT e.* EXCLUDE (receiver), coalesce(e.receiver, c.receiver, '') AS receiver, c.payer, c.receiver AS payee,
      c.token
    FROM import_channel_events e LEFT JOIN (SELECT * FROM channels WHERE chain = '${slug}') c USING (channel_id)
    WHERE NOT EXISTS (SELECT 1 FROM channel_events s
      WHERE s.chain = '${slug}' AND s.tx_hash = e.tx_hash AND s.log_index = e.log_index)`);
  await analytics.run(`INSERT INTO channel_events
      (chain, tx_hash, log_index, block_number, block_time, event, channel_id, sender, receiver, amount)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time, event, channel_id, sender, receiver, amount
    FROM import_channel_events`);
  // ChannelBook.rows: only USDC channels, and amounts a payment or transfer row can hold.
  const moves = `FROM import_channel_events WHERE token = '${usdc}' AND amount BETWEEN 1 AND ${MAX_USDC_AMOUNT}`;
  // A row is made in its event's block: only rows of the events' blocks can hold its key (zone maps skip the rest).
  const span = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    "SELECT min(block_number) AS lo, max(block_number) AS hi FROM import_channel_events",
  );
  const fresh = (table: string) => `AND NOT EXISTS (SELECT 1 FROM ${table} t
    WHERE t.chain = '${slug}' AND t.block_number BETWEEN ${span?.lo ?? 0n} AND ${span?.hi ?? -1n}
      AND t.tx_hash = import_channel_events.tx_hash AND t.log_index = import_channel_events.log_index)`;
  const claims = await analytics.one<{ lo: bigint | null; hi: bigint | null }>(
    `SELECT min(block_number) AS lo, max(block_number) AS hi ${moves} AND event = 'claimed' ${fresh("payments")}`,
  );
  await analytics.run(`INSERT INTO payments (chain, tx_hash, log_index, block_number, block_time, facilitator,
      payer, pay_to, amount, asset, scheme, transfer_method, channel)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time, sender, payer, payee, amount::BIGINT,
      '${usdc}', 'batch-settlement', 'channel', channel_id
    ${moves} AND event = 'claimed' ${fresh("payments")}`);
  await analytics.run(`INSERT INTO transfers
      (chain, tx_hash, log_index, block_number, block_time, from_address, to_address, amount)
    SELECT '${slug}', tx_hash, log_index, block_number, block_time,
      CASE event WHEN 'deposited' THEN payer ELSE channel_id END,
      CASE event WHEN 'deposited' THEN channel_id ELSE payer END, amount::BIGINT
    ${moves} AND event IN ('deposited', 'refunded', 'withdrawFinalized') ${fresh("transfers")}`);
  // A claim's receiver is paid: a merchant the service reports on, as the indexer makes it one.
  await analytics.run(`INSERT INTO merchants (address)
    SELECT DISTINCT payee ${moves} AND event = 'claimed' AND payee NOT IN (SELECT address FROM merchants)`);
  await analytics.run(`INSERT OR IGNORE INTO merchant_chains
    SELECT DISTINCT payee, '${slug}' ${moves} AND event = 'claimed'`);
  return {
    channels: (await count("channels")) - before.channels,
    events: (await count("channel_events")) - before.events,
    ...(claims?.lo != null && claims.hi != null && { paymentBlocks: { lo: claims.lo, hi: claims.hi } }),
  };
}
