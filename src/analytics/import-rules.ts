/**
 * The NDJSON import's validation rules, in the order they are checked. Each rule is a SQL condition
 * over the raw staged record (every field read as VARCHAR) that must hold for the listed record types;
 * the first one that fails is the reason given for the line. One list, so every rule is written once.
 */
import { MAX_USDC_AMOUNT, USDC_UNIT } from "../chain/base.ts";
import { escrowWallets, storeChains, X402_CONTRACTS } from "../chain/chains.ts";
import { SOLANA_SLUG } from "../chain/solana/constants.ts";
import { CHAIN_SLUGS_TEXT } from "./import-chain.ts";

export const RECORD_TYPES = [
  "payment",
  "transfer",
  "listing",
  "merchant",
  "checkpoint",
  "balance",
  "hub",
  "channel",
  "channel_event",
  "bridge_message",
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Every field any record type may carry, staged as VARCHAR so that DuckDB never guesses a type. */
export const RAW_FIELDS = [
  "type",
  "chain",
  "tx_hash",
  "log_index",
  "block_number",
  "block_time",
  "facilitator",
  "payer",
  "pay_to",
  "amount",
  "asset",
  "from",
  "to",
  "resource",
  "price_usd",
  "description",
  "method",
  "address",
  "name",
  "claimed",
  "held",
  "frozen",
  "wallet",
  "scheme",
  "transfer_method",
  "label",
  "kind",
  "source",
  "channel",
  "payer_authorizer",
  "receiver",
  "receiver_authorizer",
  "token",
  "withdraw_delay",
  "salt",
  "event",
  "sender",
  "builder_app",
  "builder_wallet",
  "builder_services",
  "side",
  "source_domain",
  "destination_domain",
  "nonce",
  "recipient",
] as const;

/** The events of x402's batch-settlement escrow, as the indexer stores them (src/indexer/channel-logs.ts). */
export const CHANNEL_EVENTS = [
  "created",
  "deposited",
  "claimed",
  "swept",
  "refunded",
  "withdrawInitiated",
  "withdrawFinalized",
  "closed",
] as const;

export interface Rule {
  types: readonly RecordType[];
  check: string;
  message: string;
  /** Set on "must be an address" rules of required fields: the field they check. */
  address?: string;
  /** Checked by a bulk import once per distinct value after the insert, as the address rules are (src/analytics/import.ts). */
  byValue?: true;
}

/** x402's escrow and its deposit collectors (src/chain/chains.ts), one address each on every chain, as a SQL list. */
const ESCROW_WALLETS = escrowWallets(X402_CONTRACTS);
export const SQL_ESCROW_WALLETS = `(${[ESCROW_WALLETS.escrow, ...ESCROW_WALLETS.collectors].map((a) => `'${a}'`).join(", ")})`;

const q = (field: string) => `"${field}"`;

/**
 * SQL: `expr` is one of the texts `values`, as `expr IN (...)` says it (NULL for a NULL `expr`), written as ORs.
 * DuckDB plans an IN list of five or more constants as a join against the list: the eight such lists of
 * `reasonExpression` made its statement three times the work on a small file (0.10 CPU-s instead of 0.04, twice
 * an import that falls back to the exact way; docs/benchmarks-log.md, 2026-11-29 afternoon).
 */
const sqlOneOf = (expr: string, values: readonly string[]): string =>
  `(${values.map((v) => `${expr} = '${v.replaceAll("'", "''")}'`).join(" OR ")})`;
const matches = (field: string, re: string) => `regexp_full_match(${q(field)}, '${re}')`;
// EVM addresses and hashes are case-insensitive, the "0x" prefix too; the analytics database keeps them lower case.
const ADDRESS = "0[xX][0-9a-fA-F]{40}";
const HASH = "0[xX][0-9a-fA-F]{64}";
// Solana's are base58 (no 0, O, I, l), case-sensitive, kept as written: a public key of 32 bytes, a transaction's
// signature of 64 bytes. No base58 text starts with "0", so the store tells the forms apart by the first character.
const BASE58_KEY = "[1-9A-HJ-NP-Za-km-z]{32,44}";
const BASE58_SIGNATURE = "[1-9A-HJ-NP-Za-km-z]{64,88}";
const ON_SOLANA = `lower("chain") = '${SOLANA_SLUG}'`;
const ADDRESS_TEXT = "0x followed by 40 hex digits (on Solana: a base58 public key)";
const HASH_TEXT = "0x followed by 64 hex digits (on Solana: a transaction's base58 signature)";

/**
 * SQL: an address or hash as the store keeps it: an EVM one lower-cased, a base58 one as written. Every address and
 * hash the import writes goes through it, never through `lower` alone (a lower-cased base58 key is another key).
 */
export const sqlStoreForm = (expr: string): string =>
  `CASE WHEN starts_with(${expr}, '0') THEN lower(${expr}) ELSE ${expr} END`;
const BUILDER_CODE = "[a-z0-9_]{1,32}";
const HTTP_URL = "https?://[^\\s/?#]+[^\\s]*";
const ISO_TIME = "\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?)?(Z|[+-]\\d{2}(:?\\d{2})?)?";

const required = (types: readonly RecordType[], field: string): Rule => ({
  types,
  check: `${q(field)} IS NOT NULL`,
  message: `missing field "${field}"`,
});
/** A line's field is an address of its chain's form (of either form on a line that names no chain). */
const address = (types: readonly RecordType[], field: string, optional = false): Rule => ({
  types,
  check: `${optional ? `${q(field)} IS NULL OR ` : ""}${chainForm(field, ADDRESS, BASE58_KEY, types)}`,
  message: `"${field}" must be an address: ${ADDRESS_TEXT}`,
  ...(optional ? {} : { address: field }),
});
/** SQL: `field` is of its line's chain's form: `evm`, or `solana` on a Solana line; either where no chain is named. */
function chainForm(field: string, evm: string, solana: string, types: readonly RecordType[]): string {
  const chained = types.every((t) => CHAIN.includes(t));
  return chained
    ? `CASE WHEN ${ON_SOLANA} THEN ${matches(field, solana)} ELSE ${matches(field, evm)} END`
    : `(${matches(field, evm)} OR ${matches(field, solana)})`;
}
/** A transaction's id: its hash on an EVM chain, its signature on Solana. */
const txHash = (types: readonly RecordType[], optional = false): Rule => ({
  types,
  check: `${optional ? `"tx_hash" IS NULL OR ` : ""}${chainForm("tx_hash", HASH, BASE58_SIGNATURE, types)}`,
  message: `"tx_hash" must be ${HASH_TEXT}`,
});
const counter = (types: readonly RecordType[], field: string, sqlType: "INTEGER" | "BIGINT"): Rule => ({
  types,
  check: `${matches(field, "\\d+")} AND try_cast(${q(field)} AS ${sqlType}) IS NOT NULL`,
  message: `"${field}" must be a non-negative integer`,
});
const boolean = (types: readonly RecordType[], field: string): Rule => ({
  types,
  check: `${q(field)} IS NULL OR ${q(field)} IN ('true', 'false')`,
  message: `"${field}" must be true or false`,
});

const CHAIN: readonly RecordType[] = [
  "payment",
  "transfer",
  "checkpoint",
  "balance",
  "hub",
  "channel",
  "channel_event",
  "bridge_message",
];
const ONCHAIN: readonly RecordType[] = ["payment", "transfer", "channel_event", "bridge_message"];
/** Records with an amount of USDC: a balance is bounded like a transfer (all of USDC is below the bound). */
const AMOUNT: readonly RecordType[] = ["payment", "transfer", "balance", "bridge_message"];
const BLOCK: readonly RecordType[] = ["payment", "transfer", "checkpoint", "channel_event", "bridge_message"];

/**
 * A batch-settlement channel's config and the escrow's events, as the indexer stores them (src/indexer/channels.ts):
 * the import turns them into the same claims, deposits, refunds and withdrawals (src/analytics/import-channels.ts).
 * A channel whose creation lies before the data has no block and no transaction, as the indexer reads it back.
 */
function channelRules(): Rule[] {
  const CONFIG = ["channel", "payer", "payer_authorizer", "receiver", "receiver_authorizer", "token"];
  const ID = `"channel" must be a channel id: 0x followed by 64 hex digits`;
  return [
    ...[...CONFIG, "withdraw_delay", "salt"].map((f) => required(["channel"], f)),
    { types: ["channel"], check: matches("channel", HASH), message: ID },
    ...CONFIG.slice(1).map((f) => address(["channel"], f)),
    counter(["channel"], "withdraw_delay", "BIGINT"),
    {
      types: ["channel"],
      check: matches("salt", HASH),
      message: `"salt" must be 0x followed by 64 hex digits`,
    },
    {
      types: ["channel"],
      check: `("block_number" IS NULL) = ("tx_hash" IS NULL)`,
      message: `"block_number" and "tx_hash" go together: the channel's creation, or neither when it lies before the data`,
    },
    {
      types: ["channel"],
      check: `"block_number" IS NULL OR (${matches("block_number", "\\d+")} AND try_cast("block_number" AS BIGINT) IS NOT NULL)`,
      message: `"block_number" must be a non-negative integer`,
    },
    txHash(["channel"], true),
    ...["event", "amount"].map((f) => required(["channel_event"], f)),
    {
      types: ["channel_event"],
      check: sqlOneOf(q("event"), CHANNEL_EVENTS),
      message: `"event" must be one of ${CHANNEL_EVENTS.join(", ")}`,
    },
    // A sweep moves a receiver's claimed money of every channel at once: it names the receiver, no channel.
    {
      types: ["channel_event"],
      check: `CASE WHEN "event" = 'swept' THEN "channel" IS NULL AND "receiver" IS NOT NULL ELSE "channel" IS NOT NULL END`,
      message: `a "swept" event names its "receiver" and no "channel"; every other event names its "channel"`,
    },
    { types: ["channel_event"], check: `"channel" IS NULL OR ${matches("channel", HASH)}`, message: ID },
    // The escrow's caller: every event but these three names one (a claim's is the payment's facilitator).
    {
      types: ["channel_event"],
      check: `"event" IN ('created', 'closed', 'withdrawInitiated') OR "sender" IS NOT NULL`,
      message: `missing field "sender" (the escrow's caller)`,
    },
    address(["channel_event"], "sender", true),
    address(["channel_event"], "receiver", true),
    {
      types: ["channel_event"],
      // The escrow's amounts are uint128: kept as events whatever their size, counted only up to MAX_USDC_AMOUNT.
      check: `${matches("amount", "\\d+")} AND try_cast("amount" AS HUGEINT) IS NOT NULL`,
      message: `"amount" must be a whole number of atomic units (a string or an integer) below 2^127`,
    },
  ];
}

/**
 * A CCTP message as the chain saw one side of it (src/reports/provenance/bridges.ts): a burn (DepositForBurn) or a
 * mint (MintAndWithdraw, with its MessageReceived); the message is its source domain and nonce (a number in v1, 0x
 * and 64 hex digits in v2), and both sides name the depositor (`sender`) and the mint's `recipient`.
 */
function bridgeRules(): Rule[] {
  const B: readonly RecordType[] = ["bridge_message"];
  return [
    ...["side", "source_domain", "destination_domain", "nonce", "sender", "recipient", "amount"].map((f) =>
      required(B, f),
    ),
    { types: B, check: `"side" IN ('burn', 'mint')`, message: `"side" must be one of burn, mint` },
    counter(B, "source_domain", "INTEGER"),
    counter(B, "destination_domain", "INTEGER"),
    {
      types: B,
      check: `"source_domain" <> "destination_domain"`,
      message: `"source_domain" and "destination_domain" must differ: a message goes from one chain to another`,
    },
    {
      types: B,
      check: `${matches("nonce", "\\d{1,20}")} OR ${matches("nonce", HASH)}`,
      message: `"nonce" must be a non-negative integer or 0x followed by 64 hex digits`,
    },
    ...["sender", "recipient"].map((f) => address(B, f)),
  ];
}

export const RULES: readonly Rule[] = [
  { types: RECORD_TYPES, check: sqlOneOf(q("type"), RECORD_TYPES), message: "" },
  ...CHAIN.map((t) => required([t], "chain")),
  {
    types: CHAIN,
    check: sqlOneOf(
      q("chain"),
      storeChains.list.map((c) => c.slug),
    ),
    message: `"chain" must be one of ${CHAIN_SLUGS_TEXT}`,
  },
  // The escrow's records are EVM's: Solana's channels are read as payment and transfer lines (docs/import.md,
  // "Solana lines"), so a channel line on Solana is refused, not misread.
  {
    types: ["channel", "channel_event"],
    check: `NOT ${ON_SOLANA}`,
    message: `"channel" and "channel_event" lines are of x402's EVM escrow: Solana's channels are payment and transfer lines`,
  },
  ...["tx_hash", "log_index"].map((f) => required(ONCHAIN, f)),
  ...["block_number", "block_time"].map((f) => required(BLOCK, f)),
  txHash(ONCHAIN),
  counter(ONCHAIN, "log_index", "INTEGER"),
  counter(BLOCK, "block_number", "BIGINT"),
  // A wallet's balance at the end of a block has no time of its own: the block is its key.
  ...["wallet", "block_number", "amount"].map((f) => required(["balance"], f)),
  address(["balance"], "wallet"),
  counter(["balance"], "block_number", "BIGINT"),
  {
    types: BLOCK,
    check: `${matches("block_time", "\\d{1,12}")} OR (${matches("block_time", ISO_TIME)} AND try_cast("block_time" AS TIMESTAMPTZ) IS NOT NULL)`,
    message: `"block_time" must be an ISO 8601 time or unix seconds`,
  },
  ...["facilitator", "payer", "pay_to", "amount"].map((f) => required(["payment"], f)),
  ...["facilitator", "payer", "pay_to"].map((f) => address(["payment"], f)),
  address(["payment"], "asset", true),
  {
    types: ["payment"],
    check: `NOT (lower("payer") IN ${SQL_ESCROW_WALLETS} OR lower("pay_to") IN ${SQL_ESCROW_WALLETS})`,
    message:
      "a payment to or from the batch-settlement escrow or a deposit collector is a channel's money moving, not an x402 payment (the indexer makes none): write it as a \"transfer\" line, or the channel's records",
    byValue: true,
  },
  {
    types: ["payment"],
    check: `"scheme" IS NULL OR lower("scheme") IN ('exact', 'upto', 'batch-settlement')`,
    message: `"scheme" must be one of exact, upto, batch-settlement`,
  },
  {
    types: ["payment"],
    check: `"transfer_method" IS NULL OR lower("transfer_method") IN ('eip3009', 'permit2', 'channel')`,
    message: `"transfer_method" must be one of eip3009, permit2, channel`,
  },
  // ERC-8021 builder codes as the indexer keeps them (src/indexer/builder-codes.ts): the spec's alphabet only.
  ...(["builder_app", "builder_wallet"] as const).map((field) => ({
    types: ["payment"] as const,
    check: `${q(field)} IS NULL OR ${matches(field, BUILDER_CODE)}`,
    message: `"${field}" must be a builder code: 1 to 32 lower-case letters, digits or _`,
  })),
  {
    types: ["payment"],
    check: `"builder_services" IS NULL OR ${matches("builder_services", `${BUILDER_CODE}(,${BUILDER_CODE})*`)}`,
    message: `"builder_services" must be builder codes (1 to 32 lower-case letters, digits or _ each) separated by commas`,
  },
  ...["from", "to", "amount"].map((f) => required(["transfer"], f)),
  ...["from", "to"].map((f) => address(["transfer"], f)),
  {
    types: AMOUNT,
    // HUGEINT parses every number of up to 38 digits, so a huge one fails the bound, not the parse.
    check: `${matches("amount", "\\d+")} AND try_cast("amount" AS HUGEINT) <= ${MAX_USDC_AMOUNT}`,
    message: `"amount" must be a whole number of atomic units (a string or an integer) from 0 to ${MAX_USDC_AMOUNT} ($${(MAX_USDC_AMOUNT / USDC_UNIT).toLocaleString("en-US")})`,
  },
  ...["pay_to", "resource", "price_usd", "description"].map((f) => required(["listing"], f)),
  address(["listing"], "pay_to"),
  {
    types: ["listing"],
    check: `${matches("resource", HTTP_URL)} AND length("resource") <= 2048`,
    message: `"resource" must be a full http(s) URL`,
  },
  {
    types: ["listing"],
    check: `try_cast("price_usd" AS DOUBLE) >= 0 AND isfinite(try_cast("price_usd" AS DOUBLE))`,
    message: `"price_usd" must be a non-negative number`,
  },
  {
    types: ["listing"],
    check: `"method" IS NULL OR ${sqlOneOf('upper("method")', ["GET", "POST", "PUT", "PATCH", "DELETE"])}`,
    message: `"method" must be one of GET, POST, PUT, PATCH, DELETE`,
  },
  required(["merchant"], "address"),
  address(["merchant"], "address"),
  {
    types: ["merchant"],
    check: `"name" IS NULL OR (length("name") BETWEEN 1 AND 253 AND NOT regexp_matches("name", '\\s'))`,
    message: `"name" must be a host name (1 to 253 characters, no spaces)`,
  },
  boolean(["merchant"], "claimed"),
  // The operator's hold: "held"; "frozen" is its deprecated alias (a report's `frozen` now says that its week is
  // attested), accepted as the same field, but never against it.
  boolean(["merchant"], "held"),
  boolean(["merchant"], "frozen"),
  {
    types: ["merchant"],
    check: `"held" IS NULL OR "frozen" IS NULL OR "held" = "frozen"`,
    message: `"held" and "frozen" (its deprecated alias) must not disagree: give "held" alone`,
  },
  // A known exchange or bridge wallet, labelled by the operator beside the repository's list
  // (src/chain/base-hubs.json): the label must say where it comes from.
  ...["address", "label", "kind", "source"].map((f) => required(["hub"], f)),
  address(["hub"], "address"),
  {
    types: ["hub"],
    check: `length(trim("label")) BETWEEN 1 AND 200`,
    message: `"label" must be a name of 1 to 200 characters, not blank`,
  },
  {
    types: ["hub"],
    check: `lower("kind") IN ('exchange', 'bridge')`,
    message: `"kind" must be one of exchange, bridge`,
  },
  {
    types: ["hub"],
    check: `${matches("source", HTTP_URL)} AND length("source") <= 2048`,
    message: `"source" must be a full http(s) URL: the public page the label comes from`,
  },
  ...channelRules(),
  ...bridgeRules(),
];

/** A SQL expression giving the first broken rule's message for a staged record, or NULL when it is valid. */
export function reasonExpression(): string {
  const typeList = RECORD_TYPES.join(", ");
  const branches = RULES.map((rule, i) => {
    const message =
      i === 0
        ? `CASE WHEN "type" IS NULL THEN 'missing field "type"' ELSE 'unknown type "' || "type" || '" (expected ${typeList})' END`
        : `'${rule.message.replaceAll("'", "''")}'`;
    const applies = rule.types.length === RECORD_TYPES.length ? "true" : sqlOneOf(q("type"), rule.types);
    return `WHEN ${applies} AND NOT coalesce(${rule.check}, false) THEN ${message}`;
  });
  return `CASE ${branches.join("\n  ")} END`;
}

/** SQL: a raw record's field `f` as a TIMESTAMP (UTC), from ISO 8601 or unix seconds. */
export const sqlTime = (f: string) =>
  `CASE WHEN regexp_full_match("${f}", '\\d+') THEN to_timestamp("${f}"::BIGINT)::TIMESTAMP ELSE "${f}"::TIMESTAMPTZ::TIMESTAMP END`;

/** SQL: whether rows `a` and `b` differ in any of `fields` (NULL differs from a value). */
export const sqlDiffer = (fields: readonly string[], a: string, b: string) =>
  fields.map((f) => `${a}.${f} IS DISTINCT FROM ${b}.${f}`).join(" OR ");

/**
 * SQL: what differs between row `there` (the earlier line's, or the stored one) and row `here` (the line refused),
 * a list of texts such as `amount 1000 there, 5 here`, for the refusal to say.
 */
export const sqlDifferences = (fields: readonly string[], there: string, here: string) =>
  `list_filter([${fields
    .map(
      (f) => `CASE WHEN ${there}.${f} IS DISTINCT FROM ${here}.${f} THEN '${f} ' ||
        coalesce(${there}.${f}::VARCHAR, 'none') || ' there, ' || coalesce(${here}.${f}::VARCHAR, 'none') || ' here' END`,
    )
    .join(", ")}], d -> d IS NOT NULL)`;

/** SQL: the expression is an address of the chain named by the SQL expression `chain` (as the rules accept it). */
export function sqlIsAddress(expr: string, chain: string): string {
  return `CASE WHEN ${chain} = '${SOLANA_SLUG}' THEN regexp_full_match(${expr}, '${BASE58_KEY}')
    ELSE regexp_full_match(${expr}, '${ADDRESS}') END`;
}

const paymentRules = RULES.filter((rule, i) => i > 0 && rule.types.includes("payment"));

/**
 * The payment fields that must be addresses. A week has a few hundred thousand distinct payers and
 * fewer merchants and facilitators among ten million rows, so a bulk import checks these once per
 * distinct value after the insert (with `sqlIsAddress`; lower case changes no verdict) instead of on every row.
 */
export const PAYMENT_ADDRESS_FIELDS = paymentRules.flatMap((rule) => (rule.address ? [rule.address] : []));

/** Every other rule a payment must keep, as one SQL condition over a raw record whose type is "payment". */
export const PAYMENT_ROW_RULES = paymentRules
  .filter((rule) => !rule.address && !rule.byValue)
  .map((rule) => `coalesce(${rule.check}, false)`)
  .join("\n  AND ");
