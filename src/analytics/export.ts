import fs from "node:fs";
import path from "node:path";
import { escrowWallets, X402_CONTRACTS } from "../chain/chains.ts";
import { AppError } from "../common/errors.ts";
import type { Analytics } from "./duckdb.ts";
import { isEscrowPool } from "./import-escrow.ts";
import type { RecordType } from "./import-rules.ts";

/** The store cannot be written out, in one line: `FILE: reason`. Nothing was written to FILE. */
export class ExportError extends AppError {
  constructor(
    readonly reason: string,
    readonly file: string,
  ) {
    super(400, "export_refused", `${file}: ${reason}`);
  }
}

export type ExportCounts = Partial<Record<RecordType, number>>;

/** A JSON member: its name and a SQL expression of its value (NULL leaves an optional member out). */
type Member = [name: string, sql: string];

/**
 * SQL: one import-format line. json_object writes a NULL as null; an optional member absent in the store
 * is left out instead, as a user writing the file would leave it out.
 */
function line(type: RecordType, required: Member[], optional: Member[] = []): string {
  const object = `json_object('type', '${type}', ${required.map(([k, v]) => `'${k}', ${v}`).join(", ")})::VARCHAR`;
  if (optional.length === 0) return object;
  const rest = optional.map(([k, v]) => `coalesce(',"${k}":' || to_json(${v})::VARCHAR, '')`);
  return `left(${object}, -1) || ${rest.join(" || ")} || '}'`;
}

/** ISO 8601 in UTC: whole seconds as Base's blocks have them, a fraction only where the store holds one. */
const time = (column: string) => `replace(${column}::VARCHAR, ' ', 'T') || 'Z'`;
/** Amounts as strings: exact in any JSON reader (JavaScript's numbers stop being exact above 2^53). */
const amount = (column: string) => `${column}::VARCHAR`;
/** A double as the shortest of 15 or 17 digits that reads back as the same double. */
const double = (column: string) =>
  `json(CASE WHEN printf('%.15g', ${column})::DOUBLE = ${column} THEN printf('%.15g', ${column}) ELSE printf('%.17g', ${column}) END)`;
const onChain = (): Member[] => [
  ["chain", "chain"],
  ["tx_hash", "tx_hash"],
  ["log_index", "log_index"],
  ["block_number", "block_number"],
  ["block_time", time("block_time")],
];
/**
 * A channel is named by its 66-character id where the indexer stores its moves as transfers; a payer's channels
 * the escrow's events did not name (`escrowPool`) are the escrow's own transfers, written back as the file had them.
 */
const IS_CHANNEL = (column: string) => `(length(${column}) = 66 AND NOT ${isEscrowPool(column)})`;
/** The escrow's address, lower-case (one on every chain). */
const ESCROW = escrowWallets(X402_CONTRACTS).escrow;
const unpooled = (column: string) => `CASE WHEN ${isEscrowPool(column)} THEN '${ESCROW}' ELSE ${column} END`;

/**
 * Each record type's lines, in the order the file gives them: what describes wallets first, then the
 * chain's records by block. Claims, deposits, refunds and withdrawals are not written as payments and
 * transfers: the channel events they come from are, and the import makes the same rows of them again
 * (src/analytics/import-channels.ts). Those the store holds without events (an import of the escrow's
 * transfers alone, src/analytics/import-escrow.ts) are written as that import read them: the claims as
 * payments, the moves as transfers to and from the escrow, which the import makes the same rows of again.
 */
const SECTIONS: { type: RecordType; from: string; order: string; sql: string }[] = [
  {
    type: "merchant",
    from: "merchants",
    order: "address",
    sql: line(
      "merchant",
      [["address", "address"]],
      [
        ["name", "name"],
        ["claimed", "nullif(claimed, false)"],
        ["held", "nullif(held, false)"],
      ],
    ),
  },
  {
    type: "listing",
    from: "listings",
    order: "pay_to, resource, method",
    sql: line(
      "listing",
      [
        ["pay_to", "pay_to"],
        ["resource", "resource"],
        ["price_usd", double("price_usd")],
        ["description", "description"],
      ],
      [["method", "nullif(method, '')"]],
    ),
  },
  {
    type: "hub",
    from: "hub_labels",
    order: "address",
    sql: line("hub", [
      ["chain", "chain"],
      ["address", "address"],
      ["label", "label"],
      ["kind", "kind"],
      ["source", "source"],
    ]),
  },
  {
    type: "channel",
    from: "channels",
    order: "channel_id",
    sql: line(
      "channel",
      [
        ["chain", "chain"],
        ["channel", "channel_id"],
        ["payer", "payer"],
        ["payer_authorizer", "payer_authorizer"],
        ["receiver", "receiver"],
        ["receiver_authorizer", "receiver_authorizer"],
        ["token", "token"],
        ["withdraw_delay", "withdraw_delay"],
        ["salt", "salt"],
      ],
      // A config read back from before the indexed range has neither (src/indexer/channels.ts).
      [
        ["block_number", "nullif(block_number, -1)"],
        ["tx_hash", "nullif(tx_hash, '')"],
      ],
    ),
  },
  {
    type: "payment",
    from: `payments WHERE channel IS NULL OR ${isEscrowPool("channel")}`,
    order: "block_number, log_index, tx_hash",
    sql: line(
      "payment",
      [
        ...onChain(),
        ["facilitator", "facilitator"],
        ["payer", "payer"],
        ["pay_to", "pay_to"],
        ["amount", amount("amount")],
        ["asset", "asset"],
      ],
      [
        ["scheme", "scheme"],
        ["transfer_method", "transfer_method"],
        ["builder_app", "builder_app"],
        ["builder_wallet", "builder_wallet"],
        ["builder_services", "builder_services"],
      ],
    ),
  },
  {
    type: "transfer",
    from: `(SELECT * REPLACE (${unpooled("from_address")} AS from_address, ${unpooled("to_address")} AS to_address)
      FROM transfers WHERE NOT ${IS_CHANNEL("from_address")} AND NOT ${IS_CHANNEL("to_address")})`,
    order: "block_number, log_index, tx_hash",
    sql: line("transfer", [
      ...onChain(),
      ["from", "from_address"],
      ["to", "to_address"],
      ["amount", amount("amount")],
    ]),
  },
  {
    type: "channel_event",
    from: "channel_events",
    order: "block_number, log_index, tx_hash",
    sql: line(
      "channel_event",
      [...onChain(), ["event", "event"]],
      [
        ["channel", "nullif(channel_id, '')"],
        ["sender", "nullif(sender, '')"],
        ["receiver", "nullif(receiver, '')"],
        ["amount", amount("amount")],
      ],
    ),
  },
  {
    type: "bridge_message",
    from: "bridge_messages",
    order: "block_number, log_index, tx_hash",
    sql: line("bridge_message", [
      ...onChain(),
      ["side", "side"],
      ["source_domain", "source_domain"],
      ["destination_domain", "destination_domain"],
      ["nonce", "nonce"],
      ["sender", "sender"],
      ["recipient", "recipient"],
      ["amount", amount("amount")],
    ]),
  },
  {
    type: "balance",
    from: "balances",
    order: "block_number, wallet",
    sql: line("balance", [
      ["chain", "chain"],
      ["wallet", "wallet"],
      ["block_number", "block_number"],
      ["amount", amount("amount")],
    ]),
  },
  {
    type: "checkpoint",
    from: "checkpoints",
    order: "block_number",
    sql: line("checkpoint", [
      ["chain", "chain"],
      ["block_number", "block_number"],
      ["block_time", time("block_time")],
    ]),
  },
];

/**
 * Writes everything of the store the import format carries (docs/import.md) to `file`: merchants,
 * listings, hub labels, channels, payments, transfers, channel events, bridge messages, balances and checkpoints. Importing
 * it into a fresh store gives the same reports. DuckDB writes the lines to a file beside `file`, renamed
 * over it once whole, so that a failed export leaves no file that an import would take for the data.
 *
 * @example
 *   const counts = await exportNdjson(analytics, "store.ndjson", { replace: false });
 */
export async function exportNdjson(
  analytics: Analytics,
  file: string,
  options: { replace: boolean },
): Promise<ExportCounts> {
  const dir = path.dirname(path.resolve(file));
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new ExportError(`its folder ${dir} does not exist`, file);
  if (fs.existsSync(file)) {
    const target = fs.statSync(file);
    if (target.isDirectory()) throw new ExportError("it is a folder", file);
    // The rename would put the lines in place of the store, its log, or a device such as /dev/null.
    const store = [analytics.file, `${analytics.file}.wal`].find((f) => sameFile(f, target));
    if (store) throw new ExportError(`it is the analytics database's own file (${store})`, file);
    if (!target.isFile()) throw new ExportError("it is not a regular file", file);
    if (!options.replace) throw new ExportError("it exists: pass --replace to write over it", file);
  }
  const counts: ExportCounts = {};
  let total = 0;
  for (const s of SECTIONS) {
    const row = await analytics.one<{ n: bigint }>(`SELECT count(*) AS n FROM ${s.from}`);
    const n = Number(row?.n ?? 0n);
    if (n > 0) counts[s.type] = n;
    total += n;
  }
  if (total === 0) throw new ExportError("the analytics database holds nothing to export", file);

  // Beside FILE, so that the rename does not cross file systems; one part per section, each sorted alone
  // (sorting the whole file at once would carry every line through a sort by section as well).
  let temp: string;
  try {
    temp = fs.mkdtempSync(path.join(dir, `.${path.basename(file)}.partial-`));
  } catch (error) {
    throw new ExportError(`cannot write in its folder (${(error as Error).message})`, file);
  }
  try {
    const parts: string[] = [];
    for (const [i, s] of SECTIONS.entries()) {
      if (!counts[s.type]) continue;
      const part = path.join(temp, `${i}.ndjson`);
      // One column, written as it is: a JSON line holds no raw tab or line break (JSON escapes them).
      await analytics.run(
        `COPY (SELECT ${s.sql} FROM ${s.from} ORDER BY ${s.order})
         TO '${part.replaceAll("'", "''")}' (FORMAT CSV, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\t')`,
      );
      parts.push(part);
    }
    const whole = path.join(temp, "export.ndjson");
    concatenate(parts, whole);
    fs.renameSync(whole, file);
  } catch (error) {
    throw new ExportError(`cannot write it (${(error as Error).message.split("\n")[0]})`, file);
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
  return counts;
}

/** Whether `file` exists and is `target` (by device and inode: through any link or spelling of the path). */
function sameFile(file: string, target: fs.Stats): boolean {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat !== undefined && stat.dev === target.dev && stat.ino === target.ino;
}

/** Writes the parts one after the other into `to`, a megabyte at a time, and to the disk before it returns. */
function concatenate(parts: readonly string[], to: string): void {
  const out = fs.openSync(to, "w");
  const buffer = Buffer.alloc(1 << 20);
  try {
    for (const part of parts) {
      const from = fs.openSync(part, "r");
      try {
        for (let n = fs.readSync(from, buffer); n > 0; n = fs.readSync(from, buffer))
          for (let at = 0; at < n; ) at += fs.writeSync(out, buffer, at, n - at);
      } finally {
        fs.closeSync(from);
      }
    }
    // Renamed over FILE next: without this, a crash could leave FILE named but not yet written.
    fs.fsyncSync(out);
  } finally {
    fs.closeSync(out);
  }
}
