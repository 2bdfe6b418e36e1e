/**
 * A week's attestation as the analytics database keeps it (migrations 18 and 22): the sealed week of a chain
 * (its root, and every report as it was sealed, with its proof), then the transaction signed for it, kept
 * before it is broadcast so that a retry sends those very bytes, then the attestation once it is mined. Every
 * row is a chain's: a Polygon week ending at the same block number as a Base week is another week.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { AnyChainRecord } from "../../chain/chains.ts";
import { EAS_ADDRESS } from "../../chain/eas/index.ts";
import type { SealedWeekListing } from "../model.ts";
import { sqlChain, sqlSlug } from "../scope.ts";
import type { AttestationField, FeedAttestation } from "./field.ts";
import { weekSchemaOf } from "./schema.ts";

export type SealedWeekRow = {
  end_block: number;
  start_block: number;
  methodology: string;
  root: `0x${string}`;
  reports: number;
  feed_hash: `0x${string}`;
  public_url: string;
  chain_id: number | null;
  attester: `0x${string}` | null;
  nonce: number | null;
  tx: `0x${string}` | null;
  raw_tx: `0x${string}` | null;
  uid: `0x${string}` | null;
  conflict_uid: `0x${string}` | null;
};

const COLUMNS = `end_block::DOUBLE AS end_block, start_block::DOUBLE AS start_block, methodology, root,
  reports, feed_hash, public_url, chain_id::DOUBLE AS chain_id, attester, nonce::DOUBLE AS nonce, tx, raw_tx,
  uid, conflict_uid`;

type OfChain = Pick<AnyChainRecord, "slug">;

/** The week of `chain` ending at `end` as sealed, or undefined when it is not. */
export function sealedWeek(db: Analytics, chain: OfChain, end: number): Promise<SealedWeekRow | undefined> {
  return db.one<SealedWeekRow>(
    `SELECT ${COLUMNS} FROM attestations WHERE ${sqlChain(chain)} AND end_block = $end`,
    { end },
  );
}

/** Every sealed week of `chain`, newest first, with its attestation when mined. */
export async function sealedWeeks(
  db: Analytics,
  chain: Pick<AnyChainRecord, "slug" | "caip2">,
): Promise<SealedWeekListing[]> {
  const rows = await db.all<SealedWeekRow & { sealed_at: string; attested_at: string | null }>(
    `SELECT ${COLUMNS}, strftime(sealed_at, '%Y-%m-%dT%H:%M:%S+00:00') AS sealed_at,
       strftime(attested_at, '%Y-%m-%dT%H:%M:%S+00:00') AS attested_at
     FROM attestations WHERE ${sqlChain(chain)} ORDER BY end_block DESC`,
  );
  return rows.map((r) => ({
    end_block: r.end_block,
    start_block: r.start_block,
    methodology: r.methodology,
    root: r.root,
    reports: r.reports,
    sealed_at: r.sealed_at,
    dataset: `${r.public_url.replace(/\/$/, "")}/v1/datasets/${chain.slug}/reports.ndjson?end_block=${r.end_block}`,
    attestation:
      r.uid && r.tx && r.attester && r.chain_id !== null && r.attested_at
        ? { uid: r.uid, tx: r.tx, attester: r.attester, chain_id: r.chain_id, attested_at: r.attested_at }
        : null,
    conflict_uid: r.conflict_uid,
  }));
}

/** Every sealed week of `chain` not yet attested (nor found attested under another root), oldest first. */
export function unattestedWeeks(db: Analytics, chain: OfChain): Promise<SealedWeekRow[]> {
  return db.all<SealedWeekRow>(
    `SELECT ${COLUMNS} FROM attestations
     WHERE ${sqlChain(chain)} AND uid IS NULL AND conflict_uid IS NULL ORDER BY end_block`,
  );
}

export interface Seal {
  startBlock: number;
  endBlock: number;
  methodology: string;
  root: `0x${string}`;
  feedHash: `0x${string}`;
  publicUrl: string;
  /** Every report as sealed (`frozen: true`, no attestation field), by address, with its proof. */
  reports: readonly { address: string; body: string; proof: readonly string[] }[];
}

/** Stores a sealed week of `chain`: the caller holds the transaction it is written in. */
export async function storeSeal(db: Analytics, chain: OfChain, seal: Seal, sealedAt: Date): Promise<void> {
  await db.run(
    `INSERT INTO attestations
       (chain, end_block, start_block, methodology, root, reports, feed_hash, public_url, sealed_at)
     VALUES (${sqlSlug(chain)}, $end, $start, $methodology, $root, $reports, $feed, $url, $at)`,
    {
      end: seal.endBlock,
      start: seal.startBlock,
      methodology: seal.methodology,
      root: seal.root,
      reports: seal.reports.length,
      feed: seal.feedHash,
      url: seal.publicUrl,
      at: sealedAt.toISOString(),
    },
  );
  // Through DuckDB's appender into a temporary table: tens of thousands of reports, each a few kilobytes.
  await db.run(
    "CREATE OR REPLACE TEMP TABLE sealing (end_block BIGINT, address VARCHAR, body VARCHAR, proof VARCHAR)",
  );
  try {
    await db.append("sealing", seal.reports, (appender, r) => {
      appender.appendBigInt(BigInt(seal.endBlock));
      appender.appendVarchar(r.address);
      appender.appendVarchar(r.body);
      appender.appendVarchar(JSON.stringify(r.proof));
    });
    await db.run(`INSERT INTO attested_reports SELECT ${sqlSlug(chain)}, * FROM sealing`);
  } finally {
    await db.run("DROP TABLE IF EXISTS sealing");
  }
}

/** Records the transaction signed for the week, before it is broadcast. */
export async function recordSigned(
  db: Analytics,
  chain: OfChain,
  end: number,
  signed: { chainId: number; attester: string; nonce: number; tx: string; raw: string },
): Promise<void> {
  await db.run(
    `UPDATE attestations SET chain_id = $chain, attester = $attester, nonce = $nonce, tx = $tx, raw_tx = $raw
     WHERE ${sqlChain(chain)} AND end_block = $end AND uid IS NULL`,
    {
      end,
      chain: signed.chainId,
      attester: signed.attester.toLowerCase(),
      nonce: signed.nonce,
      tx: signed.tx,
      raw: signed.raw,
    },
  );
}

/** Records the week's attestation: from here on its reports are served frozen, with their proofs. */
export async function recordAttested(
  db: Analytics,
  chain: OfChain,
  end: number,
  attested: { chainId: number; attester: string; uid: string; tx: string; time: Date },
): Promise<void> {
  await db.run(
    `UPDATE attestations SET chain_id = $chain, attester = $attester, uid = $uid, tx = $tx, attested_at = $at
     WHERE ${sqlChain(chain)} AND end_block = $end`,
    {
      end,
      chain: attested.chainId,
      attester: attested.attester.toLowerCase(),
      uid: attested.uid,
      tx: attested.tx,
      at: attested.time.toISOString(),
    },
  );
  // What was rendered of the week (answers kept in memory, serve/answers.ts) now lacks its proofs.
  db.wrote(end, chain.slug);
}

/** Records that the key attested this week under another root: its reports here are not the attested ones. */
export async function recordConflict(db: Analytics, chain: OfChain, end: number, uid: string): Promise<void> {
  await db.run(`UPDATE attestations SET conflict_uid = $uid WHERE ${sqlChain(chain)} AND end_block = $end`, {
    end,
    uid,
  });
}

/** The week's attestation as its flag feed states it, once it is mined; undefined before. */
export async function feedAttestation(
  db: Analytics,
  chain: Pick<AnyChainRecord, "slug" | "caip2">,
  end: number,
): Promise<FeedAttestation | undefined> {
  const attestation = await weekAttestation(db, chain, end);
  if (!attestation) return undefined;
  const row = await db.one<{ feed_hash: string }>(
    `SELECT feed_hash FROM attestations WHERE ${sqlChain(chain)} AND end_block = $end`,
    { end },
  );
  return { ...attestation, feed_hash: row?.feed_hash as string };
}

/** The week's attestation as a report's field carries it, but for the report's own proof. */
export type WeekAttestation = Omit<AttestationField, "proof">;

/** The attestation of the week ending at `end`, once it is mined; undefined before. */
export async function weekAttestation(
  db: Analytics,
  chain: Pick<AnyChainRecord, "slug" | "caip2">,
  end: number,
): Promise<WeekAttestation | undefined> {
  const row = await db.one<{ chain_id: number; attester: string; uid: string; tx: string; root: string }>(
    `SELECT chain_id::DOUBLE AS chain_id, attester, uid, tx, root FROM attestations
     WHERE ${sqlChain(chain)} AND end_block = $end AND uid IS NOT NULL`,
    { end },
  );
  if (!row) return undefined;
  return {
    chain_id: row.chain_id,
    eas: EAS_ADDRESS.toLowerCase(),
    schema: weekSchemaOf(chain).uid,
    uid: row.uid,
    attester: row.attester,
    tx: row.tx,
    root: row.root,
  };
}

/**
 * `rows` (reports of the window ending at `end`, read from the `reports` table) as they are served: those
 * of an attested week replaced by their sealed bodies, each with its `attestation` field last.
 */
export async function servedRows<Row extends { address: string; body: string }>(
  db: Analytics,
  chain: Pick<AnyChainRecord, "slug" | "caip2">,
  end: number,
  rows: Row[],
  addresses: { only: string } | { after: string; through: string },
): Promise<Row[]> {
  const attestation = await weekAttestation(db, chain, end);
  if (!attestation || rows.length === 0) return rows;
  const where = "only" in addresses ? "address = $only" : "address > $after AND address <= $through";
  const sealed = await db.all<{ address: string; body: string; proof: string }>(
    `SELECT address, body, proof FROM attested_reports WHERE ${sqlChain(chain)} AND end_block = $end AND ${where}`,
    { end, ...addresses },
  );
  const head = JSON.stringify(attestation).slice(0, -1);
  const bodies = new Map(
    sealed.map((r) => [r.address, `${r.body.slice(0, -1)},"attestation":${head},"proof":${r.proof}}}`]),
  );
  return rows.map((row) => {
    const body = bodies.get(row.address);
    return body === undefined ? row : { ...row, body };
  });
}
