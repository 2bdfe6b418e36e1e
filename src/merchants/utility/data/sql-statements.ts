/**
 * Which statement of a dump starts at a token, from its first words: the statements read for data (INSERT,
 * COPY), those that teach columns (CREATE TABLE), and those skipped as set-up.
 */
import { isWord, type Token } from "./sql-tokens.ts";

/** Statements a dump holds for set-up, not data: skipped up to their semicolon. */
const SKIPPED = new Set([
  "SET",
  "LOCK",
  "UNLOCK",
  "CREATE",
  "DROP",
  "ALTER",
  "COMMENT",
  "GRANT",
  "REVOKE",
  "USE",
]);

export type StatementKind =
  /** A lone semicolon. */
  | "empty"
  /** BEGIN or COMMIT [TRANSACTION | WORK]. */
  | "transaction"
  /** START TRANSACTION. */
  | "start"
  | "create_table"
  /** Set-up (SKIPPED, SELECT pg_catalog.*): skipped up to its semicolon. */
  | "set_up"
  | "copy"
  | "insert"
  /** Anything else: refused. */
  | "other";

export function statementKind(tokens: Token[], p: number): StatementKind {
  const first = tokens[p] as Token;
  if (first.kind === "punct" && first.text === ";") return "empty";
  const word = first.kind === "ident" && !first.quoted ? first.text.toUpperCase() : "";
  if (word === "BEGIN" || word === "COMMIT") return "transaction";
  if (word === "START") return "start";
  if (word === "CREATE" && isWord(tokens[p + 1], "TABLE")) return "create_table";
  if (SKIPPED.has(word) || (word === "SELECT" && isWord(tokens[p + 1], "PG_CATALOG"))) return "set_up";
  if (word === "COPY") return "copy";
  if (word === "INSERT") return "insert";
  return "other";
}
