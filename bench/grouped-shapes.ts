/**
 * What a group of vouchers' charges costs this process written each way group commit could write it
 * (`npx tsx bench/grouped-shapes.ts [-- --sizes 4,16 --rounds N --total N]`; PostgreSQL when DATABASE_URL is set,
 * else PGlite): each charge a conditional UPDATE of its channel's row at its version with its ledger row, as
 * channels/storage.ts writes one.
 * - `alone`: a statement per charge, each its own commit (what each request did before group commit);
 * - `one statement`: the group in one `UPDATE ... FROM unnest(...)` with each row's own condition (`writeVouchers`);
 * - `transaction`: BEGIN, a statement per charge, COMMIT;
 * - `savepoints`: the same with a SAVEPOINT and a RELEASE around each (so that one charge's failure could be
 *   rolled back alone).
 * Printed: the CPU per charge of this process (PGlite's whole work) and, on a server, of its backends (bench/cpu.ts,
 * in ticks of 10 ms: raise `--total` there), the median over `--rounds` (5) after a first round left out, `--total`
 * (320) charges a round over 64 channels.
 */
import os from "node:os";
import { migrate, type Queryable } from "../src/common/db/index.ts";
import { KIT_MIGRATIONS, KIT_MODULE } from "../src/merchant-kit/migrations.ts";
import { openTestDatabase } from "../test/helpers/db.ts";
import { meterCpu } from "./cpu.ts";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : String(process.argv[at + 1]);
}
const SIZES = flag("sizes", "4,16").split(",").map(Number);
const ROUNDS = Number(flag("rounds", "5"));
const TOTAL = Number(flag("total", "320"));
const CHANNELS = 64;

const kind = process.env.DATABASE_URL ? "postgres" : "pglite";
const { db, close } = await openTestDatabase(kind);
await migrate(db, KIT_MODULE, KIT_MIGRATIONS);
for (let i = 0; i < CHANNELS; i++) {
  await db.query(
    `INSERT INTO merchant_channels (channel_id, receiver, payer, config, charged, signed_max, signature, balance,
       total_claimed, withdraw_requested_at, refund_nonce, last_request_ms)
     VALUES ($1, 'r', 'p', '{}'::jsonb, 0, 0, '0x', 1000000000, 0, 0, 0, 0)`,
    [`c${i}`],
  );
}
const versions = new Map<string, string>();
const { rows: created } = await db.query<{ channel_id: string; version: string }>(
  "SELECT channel_id, xmin::text AS version FROM merchant_channels",
);
for (const r of created) versions.set(r.channel_id, r.version);

interface Charge {
  id: string;
  signed: string;
  ms: string;
  version: string;
  nonce: string;
}
let n = 0;
const chargeOf = (channel: number): Charge => {
  const id = `c${channel % CHANNELS}`;
  n++;
  return { id, signed: String(n), ms: String(n), version: versions.get(id) as string, nonce: `channel:${n}` };
};

const ALONE = `WITH charged AS (
    UPDATE merchant_channels SET charged = charged + 1, signed_max = $2::numeric, signature = '0xs',
      last_request_ms = $3, pending_id = NULL, pending_max = NULL, pending_expires_ms = NULL,
      unclaimed_since_ms = $3, updated_at = now()
    WHERE channel_id = $1 AND xmin = $4::xid RETURNING xmin::text AS version
  ), recorded AS (
    INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state, finished_at)
    SELECT 'p', $5, 'r', to_timestamp(2e9), 1000, 'settled', clock_timestamp() FROM charged
  )
  SELECT * FROM charged`;
const GROUPED = `WITH t AS (
    SELECT * FROM unnest($1::text[], $2::numeric[], $3::int8[], $4::xid[], $5::text[])
      WITH ORDINALITY AS t(id, signed, ms, version, nonce, i)
  ), charged AS (
    UPDATE merchant_channels m SET charged = m.charged + 1, signed_max = t.signed, signature = '0xs',
      last_request_ms = t.ms, pending_id = NULL, pending_max = NULL, pending_expires_ms = NULL,
      unclaimed_since_ms = t.ms, updated_at = now()
    FROM t WHERE m.channel_id = t.id AND m.xmin = t.version
    RETURNING t.i, t.nonce, m.xmin::text AS version
  ), recorded AS (
    INSERT INTO merchant_payments (payer, nonce, resource, valid_before, amount, state, finished_at)
    SELECT 'p', nonce, 'r', to_timestamp(2e9), 1000, 'settled', clock_timestamp() FROM charged
  )
  SELECT i, version FROM charged`;

async function alone(q: Queryable, c: Charge): Promise<void> {
  const { rows } = await q.query<{ version: string }>(ALONE, [c.id, c.signed, c.ms, c.version, c.nonce]);
  if (!rows[0]) throw new Error(`${c.id}: not charged`);
  versions.set(c.id, rows[0].version);
}

const WAYS: Record<string, (group: Charge[]) => Promise<void>> = {
  alone: async (group) => {
    for (const c of group) await alone(db, c);
  },
  "one statement": async (group) => {
    const { rows } = await db.query<{ i: bigint; version: string }>(GROUPED, [
      group.map((c) => c.id),
      group.map((c) => c.signed),
      group.map((c) => c.ms),
      group.map((c) => c.version),
      group.map((c) => c.nonce),
    ]);
    if (rows.length !== group.length) throw new Error("a charge of the group was not made");
    for (const r of rows) versions.set((group[Number(r.i) - 1] as Charge).id, r.version);
  },
  transaction: (group) =>
    db.transaction(async (tx) => {
      for (const c of group) await alone(tx, c);
    }),
  savepoints: (group) =>
    db.transaction(async (tx) => {
      for (const c of group) {
        await tx.query("SAVEPOINT charge");
        await alone(tx, c);
        await tx.query("RELEASE SAVEPOINT charge");
      }
    }),
};

console.log(
  `grouped-shapes on ${os.cpus()[0]?.model.trim()} x${os.cpus().length}, Node ${process.version}, ${kind}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${TOTAL} charges a round, ${ROUNDS} rounds (the first left out)`,
);
const perCharge: Record<string, number[]> = {};
for (let round = 0; round <= ROUNDS; round++) {
  for (const size of [1, ...SIZES]) {
    for (const [name, way] of Object.entries(WAYS)) {
      if (size === 1 && name !== "alone") continue;
      // The backends sampled at the start and the end only: a sample reads all of /proc, in this process.
      const meter = meterCpu({ bench: process.pid }, 3_600_000);
      const start = process.cpuUsage();
      for (let g = 0; g < TOTAL / size; g++)
        await way(Array.from({ length: size }, (_, k) => chargeOf(g * size + k)));
      const used = process.cpuUsage(start);
      const ms = (used.user + used.system) / 1000 + (meter.stop().backends.bench ?? 0);
      const label = `${name}, groups of ${size}`;
      if (round > 0) perCharge[label] = [...(perCharge[label] ?? []), ms / TOTAL];
    }
  }
}
for (const [label, values] of Object.entries(perCharge)) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  console.log(
    `${label.padEnd(28)} ${median.toFixed(3)} ms a charge (rounds: ${values.map((v) => v.toFixed(3)).join(", ")})`,
  );
}
await close();
