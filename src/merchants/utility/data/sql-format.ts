/**
 * SQL INSERT dumps: written as one portable statement per record,
 *   INSERT INTO "data" ("id","name") VALUES (1,'Ada');
 * with identifiers in double quotes ("" inside) and strings in single quotes ('' inside), and read back by a
 * small strict parser of exactly that dialect plus the common variants of dump tools: several tuples per
 * statement, backtick (MySQL) or bare identifiers, a schema-qualified table name, E'...' strings with
 * backslash escapes (PostgreSQL), `--` and block comments, BEGIN/COMMIT. Anything else (other statements,
 * expressions, casts, MySQL's backslash escapes inside plain '...' strings) is refused, never guessed.
 */
import { BadInputError } from "../../../common/errors.ts";
import { cellText, nestedFromText } from "./cell-text.ts";
import { ExactNumber, numberFromText } from "./exact-number.ts";
import { cell, type JsonValue, MAX_ROWS, type Row, type Table, tableOf, tooMany } from "./table.ts";

export const DEFAULT_TABLE = "data";

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function literal(value: JsonValue): string {
  if (value === null) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number" || value instanceof ExactNumber) return String(value);
  // Strings, and nested arrays/objects as their JSON text (what json/jsonb columns accept).
  return `'${cellText(value).replaceAll("'", "''")}'`;
}

/** One INSERT per record, columns in the table's order, missing keys as NULL. */
export function writeSql(table: Table, tableName: string): string {
  if (table.columns.length === 0) return "";
  if (table.columns.includes("")) throw new BadInputError("SQL cannot name an empty column", "invalid_data");
  const head = `INSERT INTO ${quoteIdentifier(tableName)} (${table.columns.map(quoteIdentifier).join(",")}) VALUES (`;
  return table.rows
    .map((row) => `${head}${table.columns.map((c) => literal(cell(row, c))).join(",")});\n`)
    .join("");
}

type Token =
  | { kind: "ident"; text: string; quoted: boolean; at: number }
  | { kind: "string"; text: string; at: number }
  | { kind: "number"; text: string; at: number }
  | { kind: "punct"; text: string; at: number };

const E_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };
/** Sticky: they match at `lastIndex` only, so tokens of any length are read without slicing. */
const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/y;

/** Splits the dump into tokens; comments and whitespace are dropped. */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new BadInputError(`SQL: ${message} at offset ${at}`, "invalid_data");
  };
  const closing = (quote: string, start: number): number => {
    // Index of the quote that ends a literal opened at `start`, skipping doubled quotes.
    let j = start;
    for (;;) {
      const k = sql.indexOf(quote, j);
      if (k < 0) fail(`unterminated ${quote} literal`, start - 1);
      if (sql[k + 1] === quote) j = k + 2;
      else return k;
    }
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    const at = i;
    if (/\s/.test(c)) i++;
    else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) fail("unterminated comment");
      i = end + 2;
    } else if (c === '"' || c === "`") {
      const end = closing(c, i + 1);
      tokens.push({ kind: "ident", text: sql.slice(i + 1, end).replaceAll(c + c, c), quoted: true, at });
      i = end + 1;
    } else if (c === "'" || ((c === "N" || c === "n") && sql[i + 1] === "'")) {
      const start = sql.indexOf("'", i) + 1;
      const end = closing("'", start);
      tokens.push({ kind: "string", text: sql.slice(start, end).replaceAll("''", "'"), at });
      i = end + 1;
    } else if ((c === "E" || c === "e") && sql[i + 1] === "'") {
      let text = "";
      let j = i + 2;
      for (;;) {
        const d = sql[j];
        if (d === undefined) fail("unterminated E'' literal", at);
        if (d === "'" && sql[j + 1] === "'") {
          text += "'";
          j += 2;
        } else if (d === "'") break;
        else if (d === "\\") {
          const e = sql[j + 1] ?? "";
          const hex =
            e === "x"
              ? /^[0-9a-fA-F]{1,2}/
              : e === "u"
                ? /^[0-9a-fA-F]{4}/
                : e === "U"
                  ? /^[0-9a-fA-F]{8}/
                  : null;
          if (hex) {
            const digits = hex.exec(sql.slice(j + 2, j + 10))?.[0];
            if (!digits) fail("bad escape in E'' literal", j);
            const code = Number.parseInt(digits as string, 16);
            if (code > 0x10ffff) fail("escape beyond Unicode in E'' literal", j);
            text += String.fromCodePoint(code);
            j += 2 + (digits as string).length;
          } else if (/[0-7]/.test(e)) {
            const digits = /^[0-7]{1,3}/.exec(sql.slice(j + 1))?.[0] as string;
            text += String.fromCharCode(Number.parseInt(digits, 8));
            j += 1 + digits.length;
          } else {
            text += E_ESCAPES[e] ?? e;
            j += 2;
          }
        } else {
          text += d;
          j++;
        }
      }
      tokens.push({ kind: "string", text, at });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      WORD.lastIndex = i;
      const word = WORD.exec(sql)?.[0] as string;
      tokens.push({ kind: "ident", text: word, quoted: false, at });
      i += word.length;
    } else if (/^[-+]?\.?[0-9]/.test(sql.slice(i, i + 3))) {
      NUMBER.lastIndex = i;
      const num = NUMBER.exec(sql)?.[0] as string;
      tokens.push({ kind: "number", text: num, at });
      i += num.length;
    } else if ("(),;.".includes(c)) {
      tokens.push({ kind: "punct", text: c, at });
      i++;
    } else fail(`unexpected "${c}"`);
  }
  return tokens;
}

/**
 * A numeric literal as a number; one a double cannot hold keeps its digits (an `ExactNumber`), or stays text
 * when it is not even JSON's number syntax (`+1e999`), so no digit is lost.
 */
function numberOf(text: string): JsonValue {
  return numberFromText(text.replace(/^\+/, "")) ?? text;
}

/**
 * Reads an INSERT dump into records. Every INSERT must name its columns and target the same table; columns
 * are the union in first-seen order. Strings stay strings, except that with `inferTypes` a string holding
 * JSON object or array text becomes that nested value (how `writeSql` stores nested values).
 */
export function parseSql(sql: string, inferTypes: boolean): Table & { table: string | undefined } {
  const tokens = tokenize(sql);
  let p = 0;
  const peek = () => tokens[p];
  const fail = (message: string): never => {
    const at = peek()?.at ?? sql.length;
    throw new BadInputError(`SQL: ${message} at offset ${at}`, "invalid_data");
  };
  const isWord = (t: Token | undefined, word: string) =>
    t?.kind === "ident" && !t.quoted && t.text.toUpperCase() === word;
  const expectWord = (word: string) => {
    if (!isWord(peek(), word)) fail(`expected ${word}`);
    p++;
  };
  const isPunct = (text: string) => {
    const t = peek();
    return t?.kind === "punct" && t.text === text;
  };
  const expectPunct = (text: string) => {
    if (!isPunct(text)) fail(`expected "${text}"`);
    p++;
  };
  const identifier = (): string => {
    const t = peek();
    if (t?.kind !== "ident") return fail("expected a name");
    p++;
    return (t as { text: string }).text;
  };
  const value = (): JsonValue => {
    const t = peek();
    p++;
    if (t?.kind === "number") return numberOf(t.text);
    if (t?.kind === "string") return inferTypes ? (nestedFromText(t.text) ?? t.text) : t.text;
    if (t?.kind === "ident" && !t.quoted) {
      const word = t.text.toUpperCase();
      if (word === "NULL") return null;
      if (word === "TRUE") return true;
      if (word === "FALSE") return false;
    }
    p--;
    return fail("expected a literal (number, 'string', NULL, TRUE or FALSE)");
  };

  const rows: Row[] = [];
  let table: string | undefined;
  while (p < tokens.length) {
    if (isPunct(";")) {
      p++;
      continue;
    }
    if (isWord(peek(), "BEGIN") || isWord(peek(), "COMMIT")) {
      p++;
      if (isWord(peek(), "TRANSACTION") || isWord(peek(), "WORK")) p++;
    } else if (isWord(peek(), "START")) {
      p++;
      expectWord("TRANSACTION");
    } else {
      expectWord("INSERT");
      expectWord("INTO");
      const parts = [identifier()];
      while (isPunct(".")) {
        p++;
        parts.push(identifier());
      }
      const name = parts.join(".");
      if (table !== undefined && table !== name) fail(`a second table "${name}" (one table per dump)`);
      table = name;
      if (!isPunct("(")) fail("the INSERT must list its columns");
      p++;
      const columns = [identifier()];
      while (isPunct(",")) {
        p++;
        columns.push(identifier());
      }
      expectPunct(")");
      if (new Set(columns).size !== columns.length) fail("a column is named twice");
      expectWord("VALUES");
      for (;;) {
        expectPunct("(");
        const entries: [string, JsonValue][] = columns.map((column, j) => {
          if (j > 0) expectPunct(",");
          return [column, value()];
        });
        // fromEntries defines own properties, so a column named "__proto__" is a column like any other.
        const row: Row = Object.fromEntries(entries);
        expectPunct(")");
        rows.push(row);
        if (rows.length > MAX_ROWS) throw tooMany(`more than ${MAX_ROWS} records`, `${MAX_ROWS} records`);
        if (!isPunct(",")) break;
        p++;
      }
    }
    if (p < tokens.length) expectPunct(";");
  }
  return { ...tableOf(rows), table };
}
