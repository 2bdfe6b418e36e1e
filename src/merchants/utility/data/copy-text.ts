/**
 * One data line of a PostgreSQL `COPY ... FROM stdin` block in text format (what pg_dump prints): fields
 * separated by tabs, `\N` for NULL, and backslash escapes for the characters that would break the line.
 */

const ESCAPES: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

/** The fields of one line, NULL as null; tabs and line breaks inside values arrive escaped, so split first. */
export function copyFields(line: string): (string | null)[] {
  return line.split("\t").map((field) => {
    if (field === "\\N") return null;
    if (!field.includes("\\")) return field;
    return field.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_m, e: string) => {
      if (e[0] === "x" && e.length > 1) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
      if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
      return ESCAPES[e] ?? e; // `\\` is a backslash; any other escaped character is itself
    });
  });
}
