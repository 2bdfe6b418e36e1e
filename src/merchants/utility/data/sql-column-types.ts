/**
 * A dump's declared column types, so that its values come out as the database itself would render them as
 * JSON (PostgreSQL's `row_to_json`, MySQL's `JSON_OBJECT`) rather than guessed from their text: a COPY
 * field is text whatever its column holds, and guessing turned `t` into the string "t", a `numeric`'s
 * "12.5000" into a string, a `text[]` of `{}` into an object and a `text` column's "123" into a number.
 * Only the kinds that change a value are told apart; every other type (text, dates, uuid, money...) keeps the
 * dump's text.
 */
import { numberFromText } from "./exact-number.ts";
import { parseLossless } from "./lossless-json.ts";
import type { JsonValue } from "./table.ts";

export type ColumnKind = "integer" | "number" | "boolean" | "json" | "text";

/** A column's declared type: its kind, and whether it is an array of that kind (PostgreSQL's `type[]`). */
export interface ColumnType {
  kind: ColumnKind;
  array: boolean;
}

const KINDS: Record<string, ColumnKind> = {
  smallint: "integer",
  integer: "integer",
  int: "integer",
  bigint: "integer",
  int2: "integer",
  int4: "integer",
  int8: "integer",
  tinyint: "integer",
  mediumint: "integer",
  serial: "integer",
  smallserial: "integer",
  bigserial: "integer",
  numeric: "number",
  decimal: "number",
  real: "number",
  double: "number",
  float: "number",
  float4: "number",
  float8: "number",
  boolean: "boolean",
  bool: "boolean",
  json: "json",
  jsonb: "json",
};

/** The kind of a type by its first word (`character varying(8)`, `bigint(20) unsigned`, `double precision`). */
export function columnKind(typeWord: string): ColumnKind {
  return KINDS[typeWord.toLowerCase()] ?? "text";
}

/** The JSON value of a column's text (a COPY field, or a string literal of an INSERT); null stays null. */
export function typedValue(type: ColumnType, text: string): JsonValue {
  if (type.array) return arrayOf(text, type.kind) ?? text;
  return scalarOf(text, type.kind);
}

function scalarOf(text: string, kind: ColumnKind): JsonValue {
  switch (kind) {
    case "integer":
    case "number":
      // NaN, Infinity and the like are no JSON number: they keep their text, as no digit may be lost.
      return (numberFromText(text) as JsonValue | undefined) ?? text;
    case "boolean": {
      const word = text.toLowerCase();
      if (word === "t" || word === "true") return true;
      if (word === "f" || word === "false") return false;
      return text;
    }
    case "json":
      try {
        return parseLossless(text) as JsonValue;
      } catch {
        return text;
      }
    case "text":
      return text;
  }
}

/**
 * A PostgreSQL array literal (`{a,"x y",NULL}`, `{{1,2},{3,4}}`, `{}`) as a JSON array of its elements' kind,
 * as `row_to_json` renders it; undefined for text that is not one (then the text is kept).
 */
function arrayOf(text: string, kind: ColumnKind): JsonValue[] | undefined {
  let i = 0;
  const parse = (): JsonValue[] | undefined => {
    if (text[i] !== "{") return undefined;
    i++;
    const items: JsonValue[] = [];
    if (text[i] === "}") {
      i++;
      return items;
    }
    for (;;) {
      if (text[i] === "{") {
        const inner = parse();
        if (inner === undefined) return undefined;
        items.push(inner);
      } else if (text[i] === '"') {
        let value = "";
        for (i++; i < text.length && text[i] !== '"'; i++)
          value += text[i] === "\\" ? (text[++i] ?? "") : text[i];
        if (text[i] !== '"') return undefined;
        i++;
        items.push(scalarOf(value, kind));
      } else {
        const end = /[,}]/g;
        end.lastIndex = i;
        const found = end.exec(text);
        if (!found) return undefined;
        const raw = text.slice(i, found.index).trim();
        i = found.index;
        items.push(raw.toUpperCase() === "NULL" ? null : scalarOf(raw, kind));
      }
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return items;
      }
      return undefined;
    }
  };
  const array = parse();
  return array !== undefined && i === text.length ? array : undefined;
}
