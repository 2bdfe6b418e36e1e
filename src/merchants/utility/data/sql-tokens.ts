/**
 * Splits an SQL dump into tokens (comments and whitespace dropped) for sql-dump.ts. It reads what mysqldump
 * and pg_dump print: '...' strings with '' (and, in a MySQL dump, backslash escapes), E'...' and $tag$...$tag$
 * strings, "..." and `...` identifiers, psql meta-commands (`\connect`, `\restrict`) on lines of their own,
 * and the raw data lines of `COPY ... FROM stdin;` up to `\.`, which become one "copy" token. Any other
 * character is a one-character "punct" token: statements that are skipped may hold anything, and statements
 * that are read refuse what they do not expect, naming the line.
 */
import { BadInputError } from "../../../common/errors.ts";

export type Token =
  | { kind: "ident"; text: string; quoted: boolean; at: number }
  | { kind: "string"; text: string; at: number }
  | { kind: "number"; text: string; at: number }
  | { kind: "punct"; text: string; at: number }
  | { kind: "copy"; lines: string[]; at: number };

/** The 1-based line of an offset, for error messages people can find in their dump. */
export function lineOf(sql: string, at: number): number {
  let line = 1;
  for (let i = sql.indexOf("\n"); i >= 0 && i < at; i = sql.indexOf("\n", i + 1)) line++;
  return line;
}

export function sqlError(sql: string, message: string, at: number): BadInputError {
  return new BadInputError(`SQL: ${message} at line ${lineOf(sql, at)}`, "invalid_data");
}

/**
 * Whether backslashes escape inside '...' strings: in MySQL they do, in standard SQL and PostgreSQL (and
 * this service's own SQL output) they are plain characters. Only a dump that shows it is MySQL's gets them.
 */
export function isMysqlDump(sql: string): boolean {
  // Only the text before the first string literal is looked at, so no value can make a dump look like MySQL's.
  const quote = sql.indexOf("'");
  const head = quote < 0 ? sql : sql.slice(0, quote);
  return /^-- (MySQL|MariaDB) dump|\/\*!\d{5}|^\s*(INSERT|REPLACE)\s+(IGNORE\s+)?INTO\s+`|^LOCK TABLES `/im.test(
    head,
  );
}

const E_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" };
const MYSQL_ESCAPES: Record<string, string> = {
  "0": "\0",
  b: "\b",
  n: "\n",
  r: "\r",
  t: "\t",
  Z: "\x1a",
  // MySQL keeps the backslash of \% and \_ (they are LIKE escapes).
  "%": "\\%",
  _: "\\_",
};
/** Sticky: they match at `lastIndex` only, so tokens of any length are read without slicing. */
const WORD = /[A-Za-z_][A-Za-z0-9_$]*/y;
const NUMBER = /[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/y;
const DOLLAR_TAG = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;

/** The `$tag$` opening a dollar-quoted string at `i`, if one does. */
function dollarTag(sql: string, i: number): string | undefined {
  DOLLAR_TAG.lastIndex = i;
  return DOLLAR_TAG.exec(sql)?.[0];
}

/** Whether a token is the unquoted keyword `word` (upper-case), in any case. */
export function isWord(t: Token | undefined, word: string): boolean {
  return t?.kind === "ident" && !t.quoted && t.text.toUpperCase() === word;
}

export function tokenize(sql: string): Token[] {
  const mysql = isMysqlDump(sql);
  const tokens: Token[] = [];
  let statementStart = 0; // index in `tokens` of the current statement's first token
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw sqlError(sql, message, at);
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
  /** A '...' string whose backslashes escape (E'' in PostgreSQL, any string in MySQL), from after the quote. */
  const escaped = (start: number, escapes: Record<string, string>, allowCodes: boolean): [string, number] => {
    let text = "";
    let j = start;
    for (;;) {
      const d = sql[j];
      if (d === undefined) fail("unterminated string literal", start - 1);
      if (d === "'" && sql[j + 1] === "'") {
        text += "'";
        j += 2;
      } else if (d === "'") return [text, j + 1];
      else if (d === "\\") {
        const e = sql[j + 1] ?? "";
        const hex = !allowCodes
          ? null
          : e === "x"
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
        } else if (allowCodes && /[0-7]/.test(e)) {
          const digits = /^[0-7]{1,3}/.exec(sql.slice(j + 1))?.[0] as string;
          text += String.fromCharCode(Number.parseInt(digits, 8));
          j += 1 + digits.length;
        } else {
          text += escapes[e] ?? e;
          j += 2;
        }
      } else {
        text += d;
        j++;
      }
    }
  };
  /** After `COPY ... FROM stdin;`: the data lines up to the `\.` line. */
  const copyData = () => {
    const lineEnd = sql.indexOf("\n", i);
    if (lineEnd < 0 || sql.slice(i, lineEnd).trim() !== "") fail("COPY data must start on the next line");
    const at = lineEnd + 1;
    const lines: string[] = [];
    let j = at;
    for (;;) {
      if (j >= sql.length) fail("COPY data has no \\. line to end it", at);
      let end = sql.indexOf("\n", j);
      if (end < 0) end = sql.length;
      const line = sql.slice(j, sql[end - 1] === "\r" ? end - 1 : end);
      j = end + 1;
      if (line === "\\.") break;
      lines.push(line);
    }
    tokens.push({ kind: "copy", lines, at });
    i = j;
    statementStart = tokens.length;
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    const at = i;
    if (/\s/.test(c)) i++;
    else if (sql.startsWith("--", i) || (c === "\\" && (i === 0 || sql[i - 1] === "\n"))) {
      // A comment, or a psql meta-command line (pg_dump's \connect, \restrict): neither is data.
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith("/*", i)) {
      // MySQL's /*!40101 SET ... */ version comments too: session settings, not data.
      const end = sql.indexOf("*/", i + 2);
      if (end < 0) fail("unterminated comment");
      i = end + 2;
    } else if (c === '"' || c === "`") {
      const end = closing(c, i + 1);
      tokens.push({ kind: "ident", text: sql.slice(i + 1, end).replaceAll(c + c, c), quoted: true, at });
      i = end + 1;
    } else if (c === "'" || ((c === "N" || c === "n") && sql[i + 1] === "'")) {
      const start = sql.indexOf("'", i) + 1;
      if (mysql) {
        const [text, next] = escaped(start, MYSQL_ESCAPES, false);
        tokens.push({ kind: "string", text, at });
        i = next;
      } else {
        const end = closing("'", start);
        tokens.push({ kind: "string", text: sql.slice(start, end).replaceAll("''", "'"), at });
        i = end + 1;
      }
    } else if ((c === "E" || c === "e") && sql[i + 1] === "'") {
      const [text, next] = escaped(i + 2, E_ESCAPES, true);
      tokens.push({ kind: "string", text, at });
      i = next;
    } else if (c === "$" && dollarTag(sql, i)) {
      // PostgreSQL's $tag$ ... $tag$ strings (function bodies): their text is taken whole.
      const tag = dollarTag(sql, i) as string;
      const end = sql.indexOf(tag, i + tag.length);
      if (end < 0) fail(`unterminated ${tag} string`);
      tokens.push({ kind: "string", text: sql.slice(i + tag.length, end), at });
      i = end + tag.length;
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
    } else {
      tokens.push({ kind: "punct", text: c, at });
      i++;
      if (c === ";") {
        const n = tokens.length;
        if (
          isWord(tokens[statementStart], "COPY") &&
          isWord(tokens[n - 3], "FROM") &&
          isWord(tokens[n - 2], "STDIN")
        )
          copyData();
        else statementStart = n;
      }
    }
  }
  return tokens;
}
