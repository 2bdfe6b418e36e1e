/**
 * A position in an SQL dump's tokens (sql-tokens.ts), with the steps every statement's parser reads with:
 * keywords, punctuation, names. A step that does not find what it expects refuses the dump, naming the line.
 */
import { isWord, sqlError, type Token } from "./sql-tokens.ts";

/** A token as an error message names it. */
export function describe(t: Token | undefined): string {
  return t === undefined ? "the end" : t.kind === "copy" ? "COPY data" : `"${t.text}"`;
}

export class SqlCursor {
  /** Index of the next token. */
  p = 0;

  constructor(
    readonly sql: string,
    readonly tokens: Token[],
  ) {}

  peek(): Token | undefined {
    return this.tokens[this.p];
  }

  atEnd(): boolean {
    return this.p >= this.tokens.length;
  }

  fail(message: string, token = this.peek()): never {
    throw sqlError(this.sql, message, token?.at ?? this.sql.length);
  }

  expectWord(word: string): void {
    if (!isWord(this.peek(), word)) this.fail(`expected ${word}, found ${describe(this.peek())}`);
    this.p++;
  }

  isPunct(text: string): boolean {
    const t = this.peek();
    return t?.kind === "punct" && t.text === text;
  }

  expectPunct(text: string): void {
    if (!this.isPunct(text)) this.fail(`expected "${text}", found ${describe(this.peek())}`);
    this.p++;
  }

  identifier(): string {
    const t = this.peek();
    if (t?.kind !== "ident") return this.fail(`expected a name, found ${describe(t)}`);
    this.p++;
    return t.text;
  }

  /** A table name, schema-qualified or not, as its parts joined by dots. */
  tableName(): string {
    const parts = [this.identifier()];
    while (this.isPunct(".")) {
      this.p++;
      parts.push(this.identifier());
    }
    return parts.join(".");
  }

  /** A parenthesised list of column names. */
  columnList(): string[] {
    this.expectPunct("(");
    const columns = [this.identifier()];
    while (this.isPunct(",")) {
      this.p++;
      columns.push(this.identifier());
    }
    this.expectPunct(")");
    if (new Set(columns).size !== columns.length)
      this.fail("a column is named twice", this.tokens[this.p - 1]);
    return columns;
  }

  /** Up to the statement's semicolon (not past it). */
  skipStatement(): void {
    while (this.p < this.tokens.length && !this.isPunct(";")) this.p++;
  }
}
