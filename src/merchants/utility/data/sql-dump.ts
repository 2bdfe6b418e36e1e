/**
 * Reads an SQL dump into records: this service's own INSERTs, and what mysqldump and pg_dump print.
 * Read: INSERT INTO t [(columns)] VALUES (...), (...); and COPY t (columns) FROM stdin; blocks. CREATE TABLE
 * gives the column names of a later INSERT without a list. Skipped, being set-up rather than data: SET,
 * LOCK/UNLOCK TABLES, CREATE, DROP, ALTER, COMMENT ON, GRANT, REVOKE, USE, SELECT pg_catalog.*, BEGIN/COMMIT.
 * Anything else (UPDATE, expressions, casts, functions in VALUES) is refused, never guessed. A column whose
 * CREATE TABLE declares its type gets values of that type (`sql-column-types.ts`), as the database renders it.
 *
 * One table per conversion: a dump with rows of several tables needs `sourceTable` to choose one, else it
 * is refused with the tables' names (converting the first silently would drop data unnoticed).
 */
import { BadInputError } from "../../../common/errors.ts";
import { inferCell, nestedFromText } from "./cell-text.ts";
import { copyFields } from "./copy-text.ts";
import { numberFromText } from "./exact-number.ts";
import { type ColumnType, columnKind, typedValue } from "./sql-column-types.ts";
import { sqlError, type Token, tokenize } from "./sql-tokens.ts";
import { type JsonValue, MAX_ROWS, type Row, type Table, tableOf, tooMany } from "./table.ts";

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
/** Entries of CREATE TABLE's list that are constraints or keys, not columns. */
const NOT_COLUMNS = new Set([
  "CONSTRAINT",
  "PRIMARY",
  "KEY",
  "INDEX",
  "UNIQUE",
  "FOREIGN",
  "CHECK",
  "FULLTEXT",
  "SPATIAL",
  "EXCLUDE",
  "LIKE",
]);

/**
 * A numeric literal as a number; one a double cannot hold keeps its digits (an `ExactNumber`), or stays text
 * when it is not even JSON's number syntax (`+1e999`), so no digit is lost.
 */
function numberOf(text: string): JsonValue {
  return numberFromText(text.replace(/^\+/, "")) ?? text;
}

/**
 * A COPY field: with `inferTypes`, a value of its column's declared type, else (no CREATE TABLE) read like a
 * TSV cell, except that only `\N` is NULL; without, its text.
 */
function copyValue(field: string | null, inferTypes: boolean, type: ColumnType | undefined): JsonValue {
  if (field === null) return null;
  if (!inferTypes) return field;
  if (type) return typedValue(type, field);
  return field !== "" ? inferCell(field) : field;
}

export interface SqlOptions {
  inferTypes: boolean;
  /** Which table of a dump with several to read: its name, schema-qualified or not. */
  sourceTable?: string | undefined;
}

/**
 * Records of the dump's one table (or `sourceTable`); columns are the union in first-seen order. SQL strings
 * stay strings, except that with `inferTypes` one holding JSON object or array text becomes that nested value
 * (how this service's SQL output stores nested values).
 */
export function parseSql(sql: string, options: SqlOptions): Table & { table: string | undefined } {
  const { inferTypes, sourceTable } = options;
  const tokens = tokenize(sql);
  let p = 0;
  const peek = (): Token | undefined => tokens[p];
  const fail = (message: string, token = peek()): never => {
    throw sqlError(sql, message, token?.at ?? sql.length);
  };
  const describe = (t: Token | undefined) =>
    t === undefined ? "the end" : t.kind === "copy" ? "COPY data" : `"${t.text}"`;
  const isWord = (t: Token | undefined, word: string) =>
    t?.kind === "ident" && !t.quoted && t.text.toUpperCase() === word;
  const expectWord = (word: string) => {
    if (!isWord(peek(), word)) fail(`expected ${word}, found ${describe(peek())}`);
    p++;
  };
  const isPunct = (text: string) => {
    const t = peek();
    return t?.kind === "punct" && t.text === text;
  };
  const expectPunct = (text: string) => {
    if (!isPunct(text)) fail(`expected "${text}", found ${describe(peek())}`);
    p++;
  };
  const identifier = (): string => {
    const t = peek();
    if (t?.kind !== "ident") return fail(`expected a name, found ${describe(t)}`);
    p++;
    return t.text;
  };
  /** A table name, schema-qualified or not, as its parts joined by dots. */
  const tableName = (): string => {
    const parts = [identifier()];
    while (isPunct(".")) {
      p++;
      parts.push(identifier());
    }
    return parts.join(".");
  };
  /** A parenthesised list of column names. */
  const columnList = (): string[] => {
    expectPunct("(");
    const columns = [identifier()];
    while (isPunct(",")) {
      p++;
      columns.push(identifier());
    }
    expectPunct(")");
    if (new Set(columns).size !== columns.length) fail("a column is named twice", tokens[p - 1]);
    return columns;
  };
  const value = (type: ColumnType | undefined): JsonValue => {
    const t = peek();
    p++;
    if (t?.kind === "number") return numberOf(t.text);
    if (t?.kind === "string") {
      if (!inferTypes) return t.text;
      return type ? typedValue(type, t.text) : (nestedFromText(t.text) ?? t.text);
    }
    if (t?.kind === "ident" && !t.quoted) {
      const word = t.text.toUpperCase();
      if (word === "NULL") return null;
      if (word === "TRUE") return true;
      if (word === "FALSE") return false;
    }
    p--;
    return fail(`expected a literal (number, 'string', NULL, TRUE or FALSE), found ${describe(t)}`);
  };
  const skipStatement = () => {
    while (p < tokens.length && !isPunct(";")) p++;
  };

  /** Each CREATE TABLE's column names (for INSERTs without a list) and declared types. */
  const created = new Map<string, { columns: string[]; types: Map<string, ColumnType> }>();
  const createTable = () => {
    if (isWord(peek(), "IF")) {
      p++;
      expectWord("NOT");
      expectWord("EXISTS");
    }
    const name = tableName();
    if (!isPunct("(")) return; // CREATE TABLE ... AS SELECT, PARTITION OF ...: no list to learn from
    p++;
    const columns: string[] = [];
    const types = new Map<string, ColumnType>();
    let depth = 1;
    let entryStart = true;
    /** The column the entry declares, until its type's first word is read. */
    let column: string | undefined;
    let type: ColumnType | undefined;
    while (p < tokens.length && depth > 0) {
      const t = peek() as Token;
      if (
        entryStart &&
        depth === 1 &&
        t.kind === "ident" &&
        !(t.quoted === false && NOT_COLUMNS.has(t.text.toUpperCase()))
      ) {
        columns.push(t.text);
        column = t.text;
        type = undefined;
      } else if (!entryStart && column !== undefined && depth === 1) {
        if (t.kind === "ident" && type === undefined) {
          type = { kind: columnKind(t.text), array: false };
          types.set(column, type);
        } else if (type && ((t.kind === "punct" && t.text === "[") || isWord(t, "ARRAY"))) {
          type.array = true;
        }
      }
      entryStart = false;
      if (t.kind === "punct" && t.text === "(") depth++;
      else if (t.kind === "punct" && t.text === ")") depth--;
      else if (t.kind === "punct" && t.text === "," && depth === 1) {
        entryStart = true;
        column = undefined;
      }
      p++;
    }
    created.set(name, { columns, types });
  };
  /** A table's CREATE TABLE, by full or unqualified name. */
  const createdTable = (name: string) => created.get(name) ?? created.get(unqualified(name));
  /** The statement's column list, or else its table's CREATE TABLE columns. */
  const columnsFor = (statement: string, name: string, first: Token): string[] => {
    if (isPunct("(")) return columnList();
    const columns = createdTable(name)?.columns;
    return columns ?? fail(`${statement} ${name} must list its columns (or follow its CREATE TABLE)`, first);
  };
  /** The declared type of each of `columns` (undefined where the dump declares none). */
  const typesFor = (name: string, columns: string[]) => {
    const types = createdTable(name)?.types;
    return columns.map((c) => types?.get(c));
  };

  const rowsByTable = new Map<string, Row[]>();
  let total = 0;
  const add = (name: string, row: Row) => {
    // With a table chosen, the others' rows are neither kept nor counted against the cap.
    if (sourceTable !== undefined && !isNamed(name, sourceTable)) return;
    let rows = rowsByTable.get(name);
    if (!rows) {
      rows = [];
      rowsByTable.set(name, rows);
    }
    rows.push(row);
    total++;
    if (total > MAX_ROWS) throw tooMany(`more than ${MAX_ROWS} records`, `${MAX_ROWS} records`);
  };
  // fromEntries defines own properties, so a column named "__proto__" is a column like any other.
  const record = (columns: string[], values: JsonValue[]): Row =>
    Object.fromEntries(columns.map((c, j) => [c, values[j] as JsonValue]));

  while (p < tokens.length) {
    const first = peek() as Token;
    const word = first.kind === "ident" && !first.quoted ? first.text.toUpperCase() : "";
    if (isPunct(";")) {
      p++;
      continue;
    }
    if (word === "BEGIN" || word === "COMMIT") {
      p++;
      if (isWord(peek(), "TRANSACTION") || isWord(peek(), "WORK")) p++;
    } else if (word === "START") {
      p++;
      expectWord("TRANSACTION");
    } else if (word === "CREATE" && isWord(tokens[p + 1], "TABLE")) {
      p += 2;
      createTable();
      skipStatement();
    } else if (SKIPPED.has(word) || (word === "SELECT" && isWord(tokens[p + 1], "PG_CATALOG"))) {
      skipStatement();
    } else if (word === "COPY") {
      p++;
      const name = tableName();
      const columns = columnsFor("COPY", name, first);
      const types = typesFor(name, columns);
      expectWord("FROM");
      expectWord("STDIN");
      expectPunct(";");
      const data = peek();
      if (data?.kind !== "copy") return fail("expected COPY data lines");
      p++;
      data.lines.forEach((line, k) => {
        const fields = copyFields(line);
        if (fields.length !== columns.length) {
          throw sqlError(
            sql,
            `COPY row has ${fields.length} fields; the column list has ${columns.length}`,
            data.at + data.lines.slice(0, k).reduce((n, l) => n + l.length + 1, 0),
          );
        }
        add(
          name,
          record(
            columns,
            fields.map((f, j) => copyValue(f, inferTypes, types[j])),
          ),
        );
      });
      continue; // the data token ends the statement
    } else if (word === "INSERT") {
      p++;
      if (isWord(peek(), "IGNORE")) p++; // mysqldump --insert-ignore
      expectWord("INTO");
      const name = tableName();
      const columns = columnsFor("INSERT INTO", name, first);
      const types = typesFor(name, columns);
      expectWord("VALUES");
      for (;;) {
        expectPunct("(");
        const values = columns.map((_c, j) => {
          if (j > 0) expectPunct(",");
          return value(types[j]);
        });
        expectPunct(")");
        add(name, record(columns, values));
        if (!isPunct(",")) break;
        p++;
      }
    } else {
      fail(`expected INSERT or COPY (or a set-up statement of a dump), found ${describe(first)}`);
    }
    if (p < tokens.length) expectPunct(";");
  }

  const names = [...rowsByTable.keys()];
  if (sourceTable !== undefined && names.length === 0) {
    throw new BadInputError(`SQL: the dump has no rows of a table "${sourceTable}"`, "invalid_data");
  }
  if (names.length > 1) {
    const list = names.map((n) => `"${n}"`).join(", ");
    const advice = sourceTable === undefined ? "choose one with source_table" : "name it with its schema";
    throw new BadInputError(`SQL: the dump has rows of several tables (${list}); ${advice}`, "invalid_data");
  }
  const chosen = names[0];
  return { ...tableOf(chosen === undefined ? [] : (rowsByTable.get(chosen) as Row[])), table: chosen };
}

function unqualified(name: string): string {
  return name.slice(name.lastIndexOf(".") + 1);
}

/** Whether a table is the one asked for: "public.users", or "users" in any schema. */
function isNamed(name: string, asked: string): boolean {
  return name === asked || unqualified(name) === asked;
}
