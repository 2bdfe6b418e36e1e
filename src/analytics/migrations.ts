import type { Sql } from "./sql.ts";
import { sqlHost } from "./sql-host.ts";

/**
 * Versioned schema migrations, applied in order, each in its own transaction. Append new ones;
 * never edit one that has shipped.
 *
 * Amounts are atomic USDC units (6 decimals) in BIGINT: exact, and each is at most MAX_USDC_AMOUNT
 * (10^16, src/chain/base.ts); sums of them are HUGEINT (migration 8).
 * Addresses and hashes are lower-case. Times are UTC TIMESTAMPs.
 * Payments and transfers carry no primary key on purpose: an ART index over 10^8 rows costs memory
 * and insert speed, and the import keeps them unique by (chain, tx_hash, log_index) itself.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "analytics tables",
    sql: `
      CREATE TABLE payments (
        chain VARCHAR NOT NULL,
        tx_hash VARCHAR NOT NULL,
        log_index INTEGER NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        facilitator VARCHAR NOT NULL,
        payer VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        amount BIGINT NOT NULL,
        asset VARCHAR NOT NULL
      );
      CREATE TABLE transfers (
        chain VARCHAR NOT NULL,
        tx_hash VARCHAR NOT NULL,
        log_index INTEGER NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        from_address VARCHAR NOT NULL,
        to_address VARCHAR NOT NULL,
        amount BIGINT NOT NULL
      );
      CREATE TABLE listings (
        pay_to VARCHAR NOT NULL,
        resource VARCHAR NOT NULL,
        method VARCHAR NOT NULL,
        price_usd DOUBLE NOT NULL,
        description VARCHAR NOT NULL,
        PRIMARY KEY (pay_to, resource, method)
      );
      CREATE TABLE merchants (
        address VARCHAR PRIMARY KEY,
        name VARCHAR,
        claimed BOOLEAN NOT NULL DEFAULT false,
        frozen BOOLEAN NOT NULL DEFAULT false
      );
      CREATE TABLE checkpoints (
        chain VARCHAR NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        PRIMARY KEY (chain, block_number)
      );
      CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
      CREATE TABLE report_windows (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        data_version BIGINT NOT NULL,
        public_url VARCHAR NOT NULL,
        generated_at VARCHAR NOT NULL,
        PRIMARY KEY (chain, end_block)
      );
      CREATE TABLE reports (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        address VARCHAR NOT NULL,
        body VARCHAR NOT NULL,
        details VARCHAR NOT NULL
      );
      INSERT INTO meta VALUES ('data_version', '0');
    `,
  },
  {
    version: 2,
    name: "indexer state and facilitator candidates",
    // facilitator_candidates: EIP-3009 settlements whose transaction was sent by an address that is
    // not a known facilitator signer (or was sent before its start date), kept for review.
    // indexer_state: where the chain indexer stands (its checkpoint, with the block's hash).
    // indexer_blocks: hashes of recently indexed blocks, to find the common ancestor after a reorg.
    sql: `
      CREATE TABLE facilitator_candidates (
        chain VARCHAR NOT NULL,
        tx_hash VARCHAR NOT NULL,
        log_index INTEGER NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        sender VARCHAR NOT NULL,
        payer VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        amount BIGINT NOT NULL,
        reason VARCHAR NOT NULL
      );
      CREATE TABLE indexer_state (
        chain VARCHAR PRIMARY KEY,
        start_block BIGINT NOT NULL,
        block_number BIGINT NOT NULL,
        block_hash VARCHAR NOT NULL,
        block_time TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
      );
      CREATE TABLE indexer_blocks (
        chain VARCHAR NOT NULL,
        block_number BIGINT NOT NULL,
        block_hash VARCHAR NOT NULL,
        block_time TIMESTAMP NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "listing documents",
    // listing_docs: a cache of the report's listings per merchant (dropped by migration 4).
    sql: `
      CREATE TABLE listing_docs (
        pay_to VARCHAR PRIMARY KEY,
        listings VARCHAR NOT NULL,
        host VARCHAR
      );
    `,
  },
  {
    version: 4,
    name: "reports as typed rows",
    // A report's figures, rendered as JSON when read (src/reports/week/report.ts): the window's text and
    // the listings are no longer stored with every report, nor the listings' cache of migration 3.
    // Stored windows are rebuilt on demand.
    sql: `
      DROP TABLE reports;
      DROP TABLE listing_docs;
      DELETE FROM meta WHERE key = 'listing_docs';
      DELETE FROM report_windows;
      CREATE TABLE reports (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        address VARCHAR NOT NULL,
        -- The merchant's name, else the host of most of its listings, else its address.
        name VARCHAR NOT NULL,
        claimed BOOLEAN NOT NULL,
        frozen BOOLEAN NOT NULL,
        rank BIGINT,
        -- Atomic USDC units, the quartiles interpolated (possibly fractional).
        tx BIGINT NOT NULL,
        amount BIGINT NOT NULL,
        real_tx BIGINT NOT NULL,
        real_amount BIGINT NOT NULL,
        buyers BIGINT NOT NULL,
        real_buyers BIGINT NOT NULL,
        top_amount BIGINT NOT NULL,
        p25 DOUBLE NOT NULL,
        median DOUBLE NOT NULL,
        p75 DOUBLE NOT NULL,
        median_passing DOUBLE NOT NULL,
        hub_linked_buyers BIGINT NOT NULL,
        -- JSON text: {kind: {tx, usd}}, dollars apportioned so that they add up to usd - real_usd.
        flags VARCHAR NOT NULL,
        -- Day i of the window at position i + 1.
        daily STRUCT(tx BIGINT, cents BIGINT, real_cents BIGINT)[] NOT NULL,
        -- JSON text: the page's {"flagged_wallets": {kind: [{wallet, tx, usd}]}}.
        details VARCHAR NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "listing hosts",
    // The host of each listing's URL, filled by every writer of listings (src/analytics/listings.ts).
    sql: `
      ALTER TABLE listings ADD COLUMN host VARCHAR;
      UPDATE listings SET host = ${sqlHost("resource")};
    `,
  },
  {
    version: 6,
    name: "data writes appended",
    // A write that changes what a report would say appends a row here instead of updating
    // meta.data_version: two connections (the indexer beside an import) updating that one row at once
    // made DuckDB refuse the second ("Conflict on update"); appends never conflict. The version is the
    // meta row plus the rows here, folded back into meta when the database opens (dataVersion below).
    sql: "CREATE TABLE data_writes (written_at TIMESTAMP NOT NULL)",
  },
  {
    version: 7,
    name: "reports with evidence facts",
    // The details of reports stored before now lack the facts of their evidence (src/reports/week/evidence-facts.ts),
    // and a stored window is rebuilt only when the data changes: drop them, they are rebuilt on demand.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
    `,
  },
  {
    version: 8,
    name: "report sums in HUGEINT",
    // A merchant's sums (amount, real_amount, top_amount) and its days' cents can pass 2^63: 923
    // payments of MAX_USDC_AMOUNT do. The stored reports are a cache, rebuilt on demand.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
      ALTER TABLE reports ALTER COLUMN amount TYPE HUGEINT;
      ALTER TABLE reports ALTER COLUMN real_amount TYPE HUGEINT;
      ALTER TABLE reports ALTER COLUMN top_amount TYPE HUGEINT;
      ALTER TABLE reports ALTER COLUMN daily TYPE STRUCT(tx BIGINT, cents HUGEINT, real_cents HUGEINT)[];
    `,
  },
  {
    version: 9,
    name: "payment days",
    // Each past day's payments in the groups a report build reads (src/analytics/payment-days.ts): a
    // cache of the payments table, filled by the writers from their next write on.
    sql: `
      CREATE TABLE payment_days (
        chain VARCHAR NOT NULL,
        day DATE NOT NULL,
        payer VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        amount BIGINT NOT NULL,
        n BIGINT NOT NULL,
        first_block BIGINT NOT NULL,
        last_block BIGINT NOT NULL
      );
      CREATE TABLE sealed_days (
        chain VARCHAR NOT NULL,
        day DATE NOT NULL,
        -- The day's lowest and highest block with a payment (NULL on a day without), and how many.
        lo_block BIGINT,
        hi_block BIGINT,
        payments BIGINT NOT NULL,
        PRIMARY KEY (chain, day)
      );
    `,
  },
  {
    version: 10,
    name: "one report read by key",
    // A page view reads one report: its daily records become the JSON text they are served as (reading a
    // list of structs cost more than the rest of the row), and a merchant's listings are found by an index
    // instead of a scan (the primary key's index serves only the whole key). The reports are a cache.
    // DuckDB alters no table an index depends on: a later ALTER of listings drops this index first.
    sql: `
      DROP TABLE reports;
      DELETE FROM report_windows;
      CREATE TABLE reports (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        address VARCHAR NOT NULL,
        -- The merchant's name, else the host of most of its listings, else its address.
        name VARCHAR NOT NULL,
        claimed BOOLEAN NOT NULL,
        frozen BOOLEAN NOT NULL,
        rank BIGINT,
        -- Atomic USDC units, the quartiles interpolated (possibly fractional).
        tx BIGINT NOT NULL,
        amount HUGEINT NOT NULL,
        real_tx BIGINT NOT NULL,
        real_amount HUGEINT NOT NULL,
        buyers BIGINT NOT NULL,
        real_buyers BIGINT NOT NULL,
        top_amount HUGEINT NOT NULL,
        p25 DOUBLE NOT NULL,
        median DOUBLE NOT NULL,
        p75 DOUBLE NOT NULL,
        median_passing DOUBLE NOT NULL,
        hub_linked_buyers BIGINT NOT NULL,
        -- JSON text: {kind: {tx, usd}}, dollars apportioned so that they add up to usd - real_usd.
        flags VARCHAR NOT NULL,
        -- JSON text: the report's daily records, [{date, tx, usd, real_usd}], day 0 first.
        daily VARCHAR NOT NULL,
        -- JSON text: the page's {"flagged_wallets": {kind: [{wallet, tx, usd}]}}.
        details VARCHAR NOT NULL
      );
      CREATE INDEX listings_pay_to ON listings (pay_to);
    `,
  },
  {
    version: 11,
    name: "the leaderboard in pages",
    // A merchant's place in the window's leaderboard (ranked by rank, then unranked), 1-based and without
    // gaps, stored with its report: a page of the leaderboard is a range of places, as quick on the last
    // page as on the first (ordering 500,000 reports per request took seconds). The reports are a cache.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
      ALTER TABLE reports ADD COLUMN board_place BIGINT;
    `,
  },
  {
    version: 12,
    name: "wallet balances",
    // A wallet's USDC balance at the end of a block, as the chain answers balanceOf there: the money
    // provenance screen (src/reports/provenance/) learns from it what a wallet held that the stored
    // transfers do not explain (spent or received out of sight). The reports are a cache.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
      CREATE TABLE balances (
        chain VARCHAR NOT NULL,
        wallet VARCHAR NOT NULL,
        block_number BIGINT NOT NULL,
        amount HUGEINT NOT NULL,
        PRIMARY KEY (chain, wallet, block_number)
      );
    `,
  },
  {
    version: 13,
    name: "schemes and channels",
    // Each payment's x402 scheme (exact, upto, batch-settlement) and how its money moved (eip3009, permit2,
    // channel); NULL where the store cannot say (payments stored before this version, imports without
    // them). A batch-settlement claim's channel: the money it spends is the channel's (src/indexer/channels.ts).
    // channels: each channel's config as the escrow's ChannelCreated gave it (block -1: read back from
    // before the indexed range). channel_events: every event of the escrow, as it happened. The reports
    // are a cache.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
      ALTER TABLE payments ADD COLUMN scheme VARCHAR;
      ALTER TABLE payments ADD COLUMN transfer_method VARCHAR;
      ALTER TABLE payments ADD COLUMN channel VARCHAR;
      CREATE TABLE channels (
        chain VARCHAR NOT NULL,
        channel_id VARCHAR NOT NULL,
        payer VARCHAR NOT NULL,
        payer_authorizer VARCHAR NOT NULL,
        receiver VARCHAR NOT NULL,
        receiver_authorizer VARCHAR NOT NULL,
        token VARCHAR NOT NULL,
        withdraw_delay BIGINT NOT NULL,
        salt VARCHAR NOT NULL,
        block_number BIGINT NOT NULL,
        tx_hash VARCHAR NOT NULL,
        PRIMARY KEY (chain, channel_id)
      );
      CREATE TABLE channel_events (
        chain VARCHAR NOT NULL,
        tx_hash VARCHAR NOT NULL,
        log_index INTEGER NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        event VARCHAR NOT NULL,
        channel_id VARCHAR NOT NULL,
        sender VARCHAR NOT NULL,
        receiver VARCHAR NOT NULL,
        amount HUGEINT NOT NULL
      );
      -- The report's groups keep each payment's scheme (a cache of the payments table, refilled by the
      -- writers), and a report its payments by scheme (JSON text).
      DROP TABLE payment_days;
      DELETE FROM sealed_days;
      CREATE TABLE payment_days (
        chain VARCHAR NOT NULL,
        day DATE NOT NULL,
        payer VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        amount BIGINT NOT NULL,
        scheme VARCHAR NOT NULL,
        n BIGINT NOT NULL,
        first_block BIGINT NOT NULL,
        last_block BIGINT NOT NULL
      );
      ALTER TABLE reports ADD COLUMN schemes VARCHAR;
    `,
  },
  {
    version: 14,
    name: "hub labels",
    // Known exchange and bridge wallets the operator imported (`hub` records, src/analytics/import.ts),
    // beside the repository's list (src/chain/base-hubs.json): the clusters treat them as hubs. Each
    // label says where it comes from (source, a public URL); the last imported line for a wallet wins.
    sql: `
      CREATE TABLE hub_labels (
        chain VARCHAR NOT NULL,
        address VARCHAR NOT NULL,
        label VARCHAR NOT NULL,
        -- exchange or bridge
        kind VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        PRIMARY KEY (chain, address)
      );
    `,
  },
  {
    version: 15,
    name: "the flag feed",
    // Every flagged wallet of a stored window, per merchant and screen (src/reports/week/flags.ts), written
    // and dropped with the window's reports: the feed, the wallet histories and the per-merchant counts read
    // it, where the build's tables that decided the flags are gone. Its cents are the report pages' shares
    // (aggregates.ts, rw_wallets), so a merchant's rows add up to its report's flags exactly. The stored
    // windows are dropped, so that every window read after this has its rows.
    sql: `
      DELETE FROM reports;
      DELETE FROM report_windows;
      CREATE TABLE report_flags (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        wallet VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        -- The screen (src/reports/screens/).
        kind VARCHAR NOT NULL,
        tx BIGINT NOT NULL,
        -- Atomic USDC units, and this wallet's share of the kind's cents on the report (HUGEINT, as the
        -- report's sums: migration 8).
        amount HUGEINT NOT NULL,
        cents HUGEINT NOT NULL,
        -- The cluster the wallet was counted in, named by its smallest address (NULL: a cluster of its own).
        cluster VARCHAR,
        -- The pair's first and last payment in the window, flagged or not.
        first_block BIGINT NOT NULL,
        last_block BIGINT NOT NULL,
        PRIMARY KEY (chain, end_block, wallet, pay_to, kind)
      );
    `,
  },
  {
    version: 16,
    name: "the methodology of each stored window",
    // The version of the screens' rules a window's reports were built under (src/reports/screens/methodology.ts):
    // the pages, badges and feed rows say it, and a window stored under another version is built again. The
    // windows stored before this have none (NULL), so each is built again when next read.
    sql: "ALTER TABLE report_windows ADD COLUMN methodology VARCHAR",
  },
  {
    version: 17,
    name: "the operator's hold is held",
    // A merchant the operator holds out of the ranking (still reported in full) was `frozen`; the report's
    // `frozen` now says that its week is attested on chain and never changes again (src/reports/attest/), so
    // the hold is `held`, in the merchants and in the stored reports. A rename keeps every row as it was.
    sql: `
      ALTER TABLE merchants RENAME COLUMN frozen TO held;
      ALTER TABLE reports RENAME COLUMN frozen TO held;
    `,
  },
  {
    version: 18,
    name: "attested weeks",
    // A week sealed for its attestation on Base and the transaction signed for it, and every report of the
    // week as sealed, with its proof (src/reports/attest/store.ts).
    sql: `
    CREATE TABLE attestations (
      end_block BIGINT PRIMARY KEY,
      start_block BIGINT NOT NULL,
      methodology VARCHAR NOT NULL,
      root VARCHAR NOT NULL,
      reports INTEGER NOT NULL,
      feed_hash VARCHAR NOT NULL,
      public_url VARCHAR NOT NULL,
      sealed_at TIMESTAMP NOT NULL,
      chain_id BIGINT,
      attester VARCHAR,
      nonce BIGINT,
      tx VARCHAR,
      raw_tx VARCHAR,
      uid VARCHAR,
      attested_at TIMESTAMP,
      -- The UID of another attestation of this week by the same key, under another root (another store's).
      conflict_uid VARCHAR
    );
    CREATE TABLE attested_reports (
      end_block BIGINT NOT NULL,
      address VARCHAR NOT NULL,
      body VARCHAR NOT NULL,
      proof VARCHAR NOT NULL,
      PRIMARY KEY (end_block, address)
    );
    `,
  },
  {
    version: 19,
    name: "builder codes",
    // The ERC-8021 builder codes a payment's transaction ends with (src/indexer/builder-codes.ts): the app it
    // came through, the facilitator that settled it, the services beside them (comma-separated, in the
    // suffix's order); NULL where it has none, and for payments stored before this version until indexed again.
    // A flag feed row's apps: the app codes of the wallet's payments to the merchant in the window
    // (comma-separated, sorted), written with the window. The table is made again with the column (DuckDB adds
    // no column to a table with a primary key's index) and its rows copied, apps NULL: the stored windows, sealed
    // and attested weeks among them, stay as they were built, and their payments carry no codes either (NULL
    // until indexed again), so the feed shows none for them. The reports themselves do not change.
    sql: `
      ALTER TABLE payments ADD COLUMN builder_app VARCHAR;
      ALTER TABLE payments ADD COLUMN builder_wallet VARCHAR;
      ALTER TABLE payments ADD COLUMN builder_services VARCHAR;
      CREATE TABLE report_flags_apps (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        wallet VARCHAR NOT NULL,
        pay_to VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        tx BIGINT NOT NULL,
        amount HUGEINT NOT NULL,
        cents HUGEINT NOT NULL,
        cluster VARCHAR,
        first_block BIGINT NOT NULL,
        last_block BIGINT NOT NULL,
        apps VARCHAR,
        PRIMARY KEY (chain, end_block, wallet, pay_to, kind)
      );
      INSERT INTO report_flags_apps SELECT *, NULL FROM report_flags;
      DROP TABLE report_flags;
      ALTER TABLE report_flags_apps RENAME TO report_flags;
    `,
  },
  {
    version: 20,
    name: "data writes by the blocks they reach",
    // A write's lowest changed block (`bumpDataVersion`'s `from`; 0: any, an import or the listings), so that a
    // window's version counts only the writes that reached it (`windowVersion`): a closed week read after a
    // restart is not built again because the chain moved on, and a sealed week warns only when data inside it
    // changed. Folded writes are kept apart by the stretch between stored windows' ends they reached
    // (`foldDataWrites`). Existing rows reached any block (0), as they did.
    sql: `
      ALTER TABLE data_writes ADD COLUMN from_block BIGINT DEFAULT 0;
      UPDATE data_writes SET from_block = 0;
      CREATE TABLE data_write_folds (from_block BIGINT NOT NULL, writes BIGINT NOT NULL);
    `,
  },
  {
    version: 21,
    name: "data writes and merchants by chain",
    // The chain a write changed (its slug; NULL: any, the listings), so that a window of one chain counts
    // only its own chain's writes (`windowVersion`): a block of Base says nothing of Polygon's weeks, and a
    // sealed week warns only when its own chain's data changed. Existing rows reached every chain, as they did
    // (the store held one), so every stored window's version stays what it was. And the chains each merchant
    // was paid on, written with its payments: a chain's reports are of its own merchants
    // (src/reports/week/aggregates.ts), read without a scan of every payment.
    sql: `
      ALTER TABLE data_writes ADD COLUMN chain VARCHAR;
      ALTER TABLE data_write_folds ADD COLUMN chain VARCHAR;
      CREATE TABLE merchant_chains (address VARCHAR NOT NULL, chain VARCHAR NOT NULL, PRIMARY KEY (address, chain));
      INSERT INTO merchant_chains SELECT DISTINCT pay_to, chain FROM payments;
    `,
  },
  {
    version: 22,
    name: "attested weeks by chain",
    // Each chain's weeks are sealed and attested apart (src/reports/attest/, issue 67 item 5): a week is a chain's
    // and an end block, as a window is. The tables are made again with the column (DuckDB adds none to a table
    // with a primary key's index) and their rows copied as Base's, the only chain sealed before: every sealed
    // week, its reports and proofs, and its attestation stay as they were.
    sql: `
      CREATE TABLE attestations_chain (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        start_block BIGINT NOT NULL,
        methodology VARCHAR NOT NULL,
        root VARCHAR NOT NULL,
        reports INTEGER NOT NULL,
        feed_hash VARCHAR NOT NULL,
        public_url VARCHAR NOT NULL,
        sealed_at TIMESTAMP NOT NULL,
        chain_id BIGINT,
        attester VARCHAR,
        nonce BIGINT,
        tx VARCHAR,
        raw_tx VARCHAR,
        uid VARCHAR,
        attested_at TIMESTAMP,
        conflict_uid VARCHAR,
        PRIMARY KEY (chain, end_block)
      );
      INSERT INTO attestations_chain SELECT 'base', * FROM attestations;
      DROP TABLE attestations;
      ALTER TABLE attestations_chain RENAME TO attestations;
      CREATE TABLE attested_reports_chain (
        chain VARCHAR NOT NULL,
        end_block BIGINT NOT NULL,
        address VARCHAR NOT NULL,
        body VARCHAR NOT NULL,
        proof VARCHAR NOT NULL,
        PRIMARY KEY (chain, end_block, address)
      );
      INSERT INTO attested_reports_chain SELECT 'base', * FROM attested_reports;
      DROP TABLE attested_reports;
      ALTER TABLE attested_reports_chain RENAME TO attested_reports;
    `,
  },
  {
    version: 23,
    name: "bridge messages",
    // CCTP's burns and mints (issue 84): a burn on one chain and its mint on another are one message, named by
    // its source domain and nonce, and each side's logs say who burned (the depositor) and who was minted to
    // (the recipient). The screens read a mint as money from its burner, and a burn as money to its recipient
    // on the other chain (src/reports/provenance/bridges.ts), so a bridge is no end of a trail. A row is the
    // side its chain saw: 'burn' (DepositForBurn) or 'mint' (MintAndWithdraw with its MessageReceived), keyed
    // by the event's log; its USDC transfer is the one in the same transaction of the same amount.
    sql: `
      CREATE TABLE bridge_messages (
        chain VARCHAR NOT NULL,
        tx_hash VARCHAR NOT NULL,
        log_index INTEGER NOT NULL,
        block_number BIGINT NOT NULL,
        block_time TIMESTAMP NOT NULL,
        side VARCHAR NOT NULL,
        source_domain INTEGER NOT NULL,
        destination_domain INTEGER NOT NULL,
        nonce VARCHAR NOT NULL,
        sender VARCHAR NOT NULL,
        recipient VARCHAR NOT NULL,
        amount BIGINT NOT NULL,
        PRIMARY KEY (chain, tx_hash, log_index)
      );
    `,
  },
];

export async function migrate(analytics: Sql): Promise<void> {
  await analytics.run(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)",
  );
  const applied = new Set(
    (await analytics.all<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => r.version),
  );
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    await analytics.transaction(async () => {
      for (const statement of splitStatements(migration.sql)) await analytics.run(statement);
      await analytics.run("INSERT INTO schema_migrations VALUES ($1, $2, now()::TIMESTAMP)", [
        migration.version,
        migration.name,
      ]);
    });
  }
  await foldDataWrites(analytics);
}

function splitStatements(sql: string): string[] {
  return sql
    .split(";")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Bumped by every write that changes what a report would say: the store's version, whatever the writes reached. */
export async function dataVersion(analytics: Sql): Promise<bigint> {
  const row = await analytics.one<{ v: bigint }>(
    `SELECT coalesce((SELECT value::BIGINT FROM meta WHERE key = 'data_version'), 0)
       + (SELECT coalesce(sum(writes), 0) FROM data_write_folds) + (SELECT count(*) FROM data_writes) AS v`,
  );
  return BigInt(row?.v ?? 0n);
}

/**
 * The version of the data a window of `chain` (its slug) ending at `end` reads: the writes of that chain (or
 * of any) that reached block `end` or below (an import, the listings and a reorg's rewind reach every window
 * above where they begin; the indexer's batches after `end` reach none of it; another chain's writes reach
 * none of this chain's windows). A stored window carries the one it was built on, so a write beyond it (the
 * chain moving on, another chain's block) leaves it current, and a sealed week is told apart from a week
 * whose data changed.
 */
export async function windowVersion(analytics: Sql, end: number, chain = "base"): Promise<bigint> {
  const row = await analytics.one<{ v: bigint }>(
    `SELECT coalesce((SELECT value::BIGINT FROM meta WHERE key = 'data_version'), 0)
       + (SELECT coalesce(sum(writes), 0) FROM data_write_folds
          WHERE from_block <= $end AND (chain IS NULL OR chain = $chain))
       + (SELECT count(*) FROM data_writes WHERE from_block <= $end AND (chain IS NULL OR chain = $chain)) AS v`,
    { end, chain },
  );
  return BigInt(row?.v ?? 0n);
}

/**
 * Appends, so writers on several connections never conflict (migration 6). `from` is the lowest block
 * whose data the write changed (default 0, any: an import, the listings, which every window shows): the
 * report service keeps what it rendered of windows ending below it (src/analytics/changes.ts), and a
 * stored window's version counts only the writes that reached it (`windowVersion`).
 */
export async function bumpDataVersion(analytics: Sql, from = 0, chain?: string): Promise<void> {
  await analytics.run("INSERT INTO data_writes VALUES (now()::TIMESTAMP, $from, $chain)", {
    from: Math.max(0, from),
    chain: chain ?? null,
  });
  analytics.wrote(from, chain);
}

/** Appended writes kept before an open folds them: opening a database must not write to it otherwise. */
export const FOLD_DATA_WRITES_AT = 10_000;

/**
 * Folds the appended writes, leaving every stored window's version as it was, once there are at least
 * `minRows` of them: those that reached any block (0) into meta.data_version, the others into one fold row
 * per stretch between two stored windows' ends, at the block after the lower end. A write counts for a stored
 * window ending at E exactly when its block is at most E, before the fold and after it; a window built later
 * counts the folded rows its way from then on. Only at open, when this connection is the database's only one,
 * so the update cannot meet another writer; below the threshold opening writes nothing (the demo's check of a
 * foreign directory must leave it untouched), and counting a few thousand rows costs nothing.
 */
export async function foldDataWrites(analytics: Sql, minRows = FOLD_DATA_WRITES_AT): Promise<void> {
  const pending = await analytics.one<{ n: bigint }>("SELECT count(*) AS n FROM data_writes");
  if ((pending?.n ?? 0n) < BigInt(minRows)) return;
  await analytics.transaction(async () => {
    // Only writes of every chain from block 0 count for every window of every chain.
    await analytics.run(
      `UPDATE meta SET value = (value::BIGINT
         + (SELECT count(*) FROM data_writes WHERE from_block = 0 AND chain IS NULL))::VARCHAR
       WHERE key = 'data_version'`,
    );
    // A write from block f goes to the stretch after the highest stored end of its chain below f: it counts for
    // a stored window of its chain ending at E (f <= E) and not for one ending below f, as before.
    await analytics.run(
      `INSERT INTO data_write_folds
       SELECT stretch, count(*), chain FROM (
         SELECT coalesce((SELECT max(r.end_block) FROM report_windows r
             WHERE r.end_block < w.from_block AND (w.chain IS NULL OR r.chain = w.chain)), 0) + 1 AS stretch, w.chain
         FROM data_writes w WHERE w.from_block > 0 OR w.chain IS NOT NULL
       ) GROUP BY stretch, chain`,
    );
    await analytics.run("DELETE FROM data_writes");
  });
}
