import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CSV_COLUMNS, reportsToCsv, reportsToNdjson } from "../../../src/reports/render/dataset.ts";
import { FLAG_KINDS } from "../../../src/reports/screens/index.ts";
import { makeEmptyReport, makeReport, wallet } from "../fixtures.ts";

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes. Throws on anything else. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("unterminated quoted field");
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== "," && text[i] !== "\r") {
        if (text[i] === '"' || text[i] === "\n") throw new Error(`bare ${JSON.stringify(text[i])} at ${i}`);
        field += text[i++];
      }
    }
    row.push(field);
    if (text[i] === ",") i++;
    else if (text.startsWith("\r\n", i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else throw new Error(`expected , or CRLF at ${i}`);
  }
  if (row.length > 0) throw new Error("last record not terminated by CRLF");
  return rows;
}

/** The CSV as objects keyed by header, checking every row has the header's width. */
function readCsv(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  expect(header).toEqual([...CSV_COLUMNS]);
  return rows.map((r) => {
    expect(r).toHaveLength(CSV_COLUMNS.length);
    return Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i] ?? ""]));
  });
}

describe("reportsToNdjson", () => {
  it("writes one compact JSON report per line that parses back to the same report", () => {
    const reports = [
      makeReport(),
      makeEmptyReport({ address: wallet("a"), exchange_flow_note: "Some\nlines." }),
    ];
    const text = reportsToNdjson(reports);
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.slice(0, -1).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => JSON.parse(l))).toEqual(reports);
    for (const line of lines) expect(line).not.toMatch(/^\s|\n|": /);
  });

  it("is empty for no reports", () => {
    expect(reportsToNdjson([])).toBe("");
  });
});

describe("reportsToCsv", () => {
  it("has a header of the documented columns with a flag pair per screen", () => {
    for (const kind of FLAG_KINDS) {
      expect(CSV_COLUMNS).toContain(`flag_${kind}_tx`);
      expect(CSV_COLUMNS).toContain(`flag_${kind}_usd`);
    }
    expect(CSV_COLUMNS.slice(0, 3)).toEqual(["schema_version", "generated_at", "license"]);
    expect(CSV_COLUMNS.slice(-5)).toEqual(["claim", "page", "badge", "methodology_version", "held"]);
    expect(new Set(CSV_COLUMNS).size).toBe(CSV_COLUMNS.length);
    expect(reportsToCsv([])).toBe(`${CSV_COLUMNS.join(",")}\r\n`);
  });

  it("ends every line with CRLF and never uses a bare LF", () => {
    const csv = reportsToCsv([makeReport(), makeEmptyReport({ address: wallet("b") })]);
    expect(csv.split("\r\n")).toHaveLength(4);
    expect(csv.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
  });

  it("flattens one report into its columns", () => {
    const [row] = readCsv(reportsToCsv([makeReport({ rank_by_real_revenue: null, held: true })]));
    expect(row).toMatchObject({
      schema_version: "1",
      address: wallet("1"),
      claimed: "false",
      frozen: "false",
      held: "true",
      rank_by_real_revenue: "",
      window_start_block: "30000000",
      window_end_block: "30302400",
      window_complete: "true",
      window_start: "2025-06-01T12:00:00+00:00",
      tx: "1200",
      usd: "12",
      real_usd: "10",
      top_buyer_share: "0.2345",
      flag_tiny_repeat_tx: "200",
      flag_tiny_repeat_usd: "2",
      flag_self_payment_tx: "0",
      flag_self_payment_usd: "0",
      paid_p25: "0.005",
      listings: "2",
      exchange_flow_note: "",
    });
    expect(row?.claim).toContain("api.example.com received $10.00");
  });

  it("quotes fields with commas, quotes and line breaks, and they read back unchanged", () => {
    const name = 'Acme, "the best" API';
    const note = 'Line one,\r\nline two\nand "three"';
    const csv = reportsToCsv([makeReport({ name, exchange_flow_note: note })]);
    expect(csv).toContain('"Acme, ""the best"" API"');
    const [row] = readCsv(csv);
    expect(row?.name).toBe(name);
    expect(row?.exchange_flow_note).toBe(note);
  });

  it.each(['=HYPERLINK("http://evil")', "+1+1", "-2+3", "@SUM(A1)", "\tx"])(
    "defuses a formula in a merchant's text: %j",
    (name) => {
      const [row] = readCsv(reportsToCsv([makeReport({ name, claim: `${name} received $10.00 …` })]));
      expect(row?.name).toBe(`'${name}`);
      expect(row?.claim).toBe(`'${name} received $10.00 …`);
    },
  );

  it("leaves ordinary names and numbers alone", () => {
    const [row] = readCsv(reportsToCsv([makeReport({ name: "a-b=c@d" })]));
    expect(row?.name).toBe("a-b=c@d");
    expect(row?.usd).toBe("12");
  });

  it("round-trips any name through RFC 4180 quoting", () => {
    const report = makeReport();
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: "binary" }), (name) => {
        const [row] = readCsv(reportsToCsv([{ ...report, name }]));
        expect(row?.name).toBe(/^[=+\-@\t\r]/.test(name) ? `'${name}` : name);
      }),
    );
  });
});
