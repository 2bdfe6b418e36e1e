/**
 * The records a dump's statements read, by table, and the one table a conversion takes of them: the dump's
 * only one, or `sourceTable`. Several without a choice are refused with their names (converting the first
 * silently would drop data unnoticed).
 */
import { BadInputError } from "../../../common/errors.ts";
import { isNamed } from "./sql-table-name.ts";
import { type JsonValue, MAX_ROWS, type Row, type Table, tableOf, tooMany } from "./table.ts";

/** A record of `values` under `columns`, in order. */
export function recordOf(columns: string[], values: JsonValue[]): Row {
  // fromEntries defines own properties, so a column named "__proto__" is a column like any other.
  return Object.fromEntries(columns.map((c, j) => [c, values[j] as JsonValue]));
}

export class DumpRows {
  private readonly byTable = new Map<string, Row[]>();
  private total = 0;

  /** `sourceTable`: which table to keep, schema-qualified or not; undefined: the dump's only one. */
  constructor(private readonly sourceTable: string | undefined) {}

  add(name: string, row: Row): void {
    // With a table chosen, the others' rows are neither kept nor counted against the cap.
    if (this.sourceTable !== undefined && !isNamed(name, this.sourceTable)) return;
    let rows = this.byTable.get(name);
    if (!rows) {
      rows = [];
      this.byTable.set(name, rows);
    }
    rows.push(row);
    this.total++;
    if (this.total > MAX_ROWS) throw tooMany(`more than ${MAX_ROWS} records`, `${MAX_ROWS} records`);
  }

  /** The one table's records, with its name (undefined when the dump has no rows). */
  table(): Table & { table: string | undefined } {
    const { sourceTable } = this;
    const names = [...this.byTable.keys()];
    if (sourceTable !== undefined && names.length === 0) {
      throw new BadInputError(`SQL: the dump has no rows of a table "${sourceTable}"`, "invalid_data");
    }
    if (names.length > 1) {
      const list = names.map((n) => `"${n}"`).join(", ");
      const advice = sourceTable === undefined ? "choose one with source_table" : "name it with its schema";
      throw new BadInputError(
        `SQL: the dump has rows of several tables (${list}); ${advice}`,
        "invalid_data",
      );
    }
    const chosen = names[0];
    return { ...tableOf(chosen === undefined ? [] : (this.byTable.get(chosen) as Row[])), table: chosen };
  }
}
