/**
 * What a dump's CREATE TABLE statements declare: each table's column names (for an INSERT or COPY without a
 * list) and the declared types of its columns.
 */
import { type ColumnType, columnKind } from "./sql-column-types.ts";
import type { SqlCursor } from "./sql-cursor.ts";
import { unqualified } from "./sql-table-name.ts";
import { isWord, type Token } from "./sql-tokens.ts";

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

export interface CreatedTable {
  columns: string[];
  types: Map<string, ColumnType>;
}

/**
 * A CREATE TABLE read from after `CREATE TABLE` up to the end of its column list; undefined (its name read)
 * when it has no list to learn from (CREATE TABLE ... AS SELECT, PARTITION OF ...).
 */
export function readCreateTable(cursor: SqlCursor): { name: string; table: CreatedTable | undefined } {
  if (isWord(cursor.peek(), "IF")) {
    cursor.p++;
    cursor.expectWord("NOT");
    cursor.expectWord("EXISTS");
  }
  const name = cursor.tableName();
  if (!cursor.isPunct("(")) return { name, table: undefined };
  cursor.p++;
  const { tokens } = cursor;
  const columns: string[] = [];
  const types = new Map<string, ColumnType>();
  let depth = 1;
  let entryStart = true;
  /** The column the entry declares, until its type's first word is read. */
  let column: string | undefined;
  let type: ColumnType | undefined;
  while (cursor.p < tokens.length && depth > 0) {
    const t = cursor.peek() as Token;
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
    cursor.p++;
  }
  return { name, table: { columns, types } };
}

/** The dump's CREATE TABLEs so far, by name. */
export class CreatedTables {
  private readonly byName = new Map<string, CreatedTable>();

  /** Reads a CREATE TABLE from after `CREATE TABLE`, and learns its columns when it lists them. */
  read(cursor: SqlCursor): void {
    const { name, table } = readCreateTable(cursor);
    if (table) this.byName.set(name, table);
  }

  /** A table's CREATE TABLE, by full or unqualified name. */
  get(name: string): CreatedTable | undefined {
    return this.byName.get(name) ?? this.byName.get(unqualified(name));
  }

  /** The statement's column list, or else its table's CREATE TABLE columns. */
  columnsFor(cursor: SqlCursor, statement: string, name: string, first: Token): string[] {
    if (cursor.isPunct("(")) return cursor.columnList();
    const columns = this.get(name)?.columns;
    return (
      columns ?? cursor.fail(`${statement} ${name} must list its columns (or follow its CREATE TABLE)`, first)
    );
  }

  /** The declared type of each of `columns` (undefined where the dump declares none). */
  typesFor(name: string, columns: string[]): (ColumnType | undefined)[] {
    const types = this.get(name)?.types;
    return columns.map((c) => types?.get(c));
  }
}
