import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BadInputError } from "../../../../src/common/errors.ts";
import { isAmbiguousString, nestedFromText } from "../../../../src/merchants/utility/data/cell-text.ts";
import { convert as convertEndpoint } from "../../../../src/merchants/utility/data/convert.ts";
import {
  convert,
  type Format,
  MAX_INPUT_BYTES,
} from "../../../../src/merchants/utility/data/convert-engine.ts";
import { MAX_ROWS } from "../../../../src/merchants/utility/data/table.ts";

const run = (data: string, from: Format, to: Format, extra: { table?: string; inferTypes?: boolean } = {}) =>
  convert(data, { from, to, ...extra }).data;

/** The engine's error, for checking its code. */
function refusal(fn: () => unknown): BadInputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof BadInputError) return error;
    throw error;
  }
  throw new Error("expected a BadInputError");
}

describe("examples", () => {
  const records = [
    {
      id: 1,
      name: 'Ada "the Countess", Lovelace',
      note: "line 1\nline 2",
      ok: true,
      tags: ["a", "b"],
      none: null,
    },
    { id: 2.5, name: "Grace", note: " padded ", ok: false, tags: { k: 1 }, none: null },
  ];
  const json = JSON.stringify(records);

  it("writes RFC 4180 CSV: quotes for delimiters, quotes, line breaks and edge spaces; CRLF lines", () => {
    expect(run(json, "json", "csv")).toBe(
      [
        "id,name,note,ok,tags,none",
        '1,"Ada ""the Countess"", Lovelace","line 1\nline 2",true,"[""a"",""b""]",',
        '2.5,Grace," padded ",false,"{""k"":1}",',
        "",
      ].join("\r\n"),
    );
  });

  it("writes TSV with the same quoting and LF lines", () => {
    expect(run('[{"a":"x\\ty","b":"plain"}]', "json", "tsv")).toBe('a\tb\n"x\ty"\tplain\n');
  });

  it("writes one portable INSERT per record, escaping quotes in identifiers and strings", () => {
    expect(
      run('[{"id":1,"it\'s \\"q\\"":"O\'Brien","n":null,"b":true,"j":[1]}]', "json", "sql", {
        table: "my table",
      }),
    ).toBe(`INSERT INTO "my table" ("id","it's ""q""","n","b","j") VALUES (1,'O''Brien',NULL,TRUE,'[1]');\n`);
  });

  it("reads every format back to the same records", () => {
    for (const format of ["csv", "tsv", "sql", "ndjson"] as const) {
      expect(JSON.parse(run(run(json, "json", format), format, "json")), format).toEqual(records);
    }
  });

  it("orders columns by first appearance and fills missing keys with null", () => {
    const result = convert('[{"b":1},{"a":2,"b":3},{"c":4}]', { from: "json", to: "csv" });
    expect(result.columns).toEqual(["b", "a", "c"]);
    expect(result.data).toBe("b,a,c\r\n1,,\r\n3,2,\r\n,,4\r\n");
    expect(JSON.parse(run(result.data, "csv", "json"))).toEqual([
      { b: 1, a: null, c: null },
      { b: 3, a: 2, c: null },
      { b: null, a: null, c: 4 },
    ]);
  });

  it("keeps JSON <-> NDJSON records exactly, missing keys included", () => {
    const sparse = '[{"b":1},{"a":{"x":[1,{"y":null}]}}]';
    expect(run(sparse, "json", "ndjson")).toBe('{"b":1}\n{"a":{"x":[1,{"y":null}]}}\n');
    expect(JSON.parse(run(run(sparse, "json", "ndjson"), "ndjson", "json"))).toEqual(JSON.parse(sparse));
  });

  it("infers CSV types conservatively and keeps text that would be rewritten", () => {
    const csv = 'a,b,c,d,e,f,g,h\r\n1,-0.5,true,,007,1.50,"{""k"":2}",1e+21\r\n';
    expect(JSON.parse(run(csv, "csv", "json"))).toEqual([
      { a: 1, b: -0.5, c: true, d: null, e: "007", f: "1.50", g: { k: 2 }, h: 1e21 },
    ]);
    expect(JSON.parse(run(csv, "csv", "json", { inferTypes: false }))).toEqual([
      { a: "1", b: "-0.5", c: "true", d: "", e: "007", f: "1.50", g: '{"k":2}', h: "1e+21" },
    ]);
  });

  it("reads CSV with LF or CRLF, a BOM, without a final line break, and blank lines between records", () => {
    expect(JSON.parse(run("\uFEFFa,b\n1,2\n\n3,4", "csv", "json"))).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
  });

  it("keeps empty cells of a one-column file", () => {
    const csv = run('[{"a":null},{"a":"x"},{"a":null}]', "json", "csv");
    expect(csv).toBe('a\r\n""\r\nx\r\n""\r\n');
    expect(JSON.parse(run(csv, "csv", "json"))).toEqual([{ a: null }, { a: "x" }, { a: null }]);
  });

  it("treats a column named __proto__ as a column", () => {
    expect(JSON.parse(run("__proto__,b\r\nx,1\r\n", "csv", "json"))).toEqual([
      JSON.parse('{"__proto__":"x","b":1}'),
    ]);
    expect(run(run('INSERT INTO t ("__proto__") VALUES (1);', "sql", "csv"), "csv", "ndjson")).toBe(
      '{"__proto__":1}\n',
    );
  });

  it("reads the common SQL dump variants", () => {
    const dump = `-- dumped by a tool
BEGIN;
/* several tuples, backticks, a schema, an E'' string, N'' and signs */
INSERT INTO public.\`people\` (\`id\`, name, "is ok") VALUES (1, 'O''Brien', TRUE), (-2, E'tab\\there\\nnew\\\\ \\'q\\' \\u00e9', false);
insert into public.people (id, extra) values (+3.5e2, N'n');
COMMIT;`;
    expect(convert(dump, { from: "sql", to: "json" })).toMatchObject({
      rows: 3,
      columns: ["id", "name", "is ok", "extra"],
    });
    expect(JSON.parse(run(dump, "sql", "json"))).toEqual([
      { id: 1, name: "O'Brien", "is ok": true, extra: null },
      { id: -2, name: "tab\there\nnew\\ 'q' é", "is ok": false, extra: null },
      { id: 350, name: null, "is ok": null, extra: "n" },
    ]);
  });

  it("reads long names and numbers whole", () => {
    const name = "c".repeat(1000);
    const digits = "1".repeat(500);
    expect(run(`INSERT INTO t (${name}) VALUES (${digits});`, "sql", "ndjson")).toBe(
      `{"${name}":${digits}}\n`,
    );
  });

  it("keeps SQL integers beyond 2^53 digit for digit", () => {
    expect(
      run("INSERT INTO t (a, b) VALUES (12345678901234567890, 9007199254740991);", "sql", "ndjson"),
    ).toBe('{"a":12345678901234567890,"b":9007199254740991}\n');
  });

  it("converts empty inputs to empty outputs", () => {
    for (const from of ["json", "ndjson", "csv", "tsv", "sql"] as const) {
      const empty = from === "json" ? "[]" : "";
      expect(convert(empty, { from, to: "json" })).toEqual({ data: "[]\n", rows: 0, columns: [] });
    }
    expect(convert("a,b\r\n", { from: "csv", to: "tsv" })).toEqual({
      data: "a\tb\n",
      rows: 0,
      columns: ["a", "b"],
    });
  });
});

describe("numbers a double cannot hold", () => {
  // An X API v2 export: ids are past 2^53 (JSON.parse turns 1790000000000000001 into ...000).
  const tweets = `[
  {"id": 1790000000000000001, "author_id": 44196397, "text": "ids like 1790000000000000001 in text stay text", "public_metrics": {"like_count": 12, "quoted_id": 1789999999999999999}},
  {"id": 1790000000000000123, "author_id": 9007199254740993, "text": "\\"quoted\\" 12345678901234567890", "public_metrics": {"like_count": 0, "quoted_id": null}},
  {"id": -9223372036854775808, "author_id": 1, "text": "decimals", "score": 0.12345678901234567890123, "tiny": 1e-400, "huge": 1.5e400, "ok": 0.1}
]`;
  const ids = ["1790000000000000001", "1790000000000000123", "-9223372036854775808"];

  it("JSON and NDJSON out write them as numbers with their exact digits", () => {
    const json = run(tweets, "json", "json");
    expect(json).toContain('"id": 1790000000000000001,');
    expect(json).toContain('"quoted_id": 1789999999999999999');
    expect(json).toContain('"author_id": 9007199254740993,');
    expect(json).toContain('"score": 0.12345678901234567890123,');
    expect(json).toContain('"tiny": 1e-400,');
    expect(json).toContain('"huge": 1.5e400,');
    expect(json).toContain('"ok": 0.1');
    expect(json).toContain('"text": "ids like 1790000000000000001 in text stay text"');
    const ndjson = run(tweets, "json", "ndjson");
    expect(ndjson.split("\n")[0]).toBe(
      '{"id":1790000000000000001,"author_id":44196397,"text":"ids like 1790000000000000001 in text stay text","public_metrics":{"like_count":12,"quoted_id":1789999999999999999}}',
    );
    expect(run(ndjson, "ndjson", "ndjson")).toBe(ndjson);
    expect(run(ndjson, "ndjson", "json")).toBe(json);
  });

  it("CSV, TSV and SQL out write their digits, and read them back as the same numbers", () => {
    const csv = run(tweets, "json", "csv");
    expect(csv.split("\r\n")[1]).toBe(
      '1790000000000000001,44196397,ids like 1790000000000000001 in text stay text,"{""like_count"":12,""quoted_id"":1789999999999999999}",,,,',
    );
    expect(run(tweets, "json", "tsv").split("\n")[3]).toBe(
      "-9223372036854775808\t1\tdecimals\t\t0.12345678901234567890123\t1e-400\t1.5e400\t0.1",
    );
    const sql = run(tweets, "json", "sql");
    expect(sql).toContain("VALUES (1790000000000000001,44196397,");
    expect(sql).toContain("VALUES (-9223372036854775808,1,'decimals',NULL,0.12345678901234567890123,");
    for (const format of ["csv", "tsv", "sql"] as const) {
      const back = run(run(tweets, "json", format), format, "ndjson");
      for (const id of ids) expect(back, format).toContain(`"id":${id},`);
      expect(back, format).toContain('"quoted_id":1789999999999999999');
    }
  });

  it("leaves numbers a double holds as they were", () => {
    expect(run('[{"a":9007199254740991,"b":0.30000000000000004,"c":1e21,"d":-0.5}]', "json", "ndjson")).toBe(
      '{"a":9007199254740991,"b":0.30000000000000004,"c":1e+21,"d":-0.5}\n',
    );
  });

  it("reports JSON errors in the caller's text, not the marked copy", () => {
    const error = refusal(() => run('[{"id": 1790000000000000001}, x]', "json", "json"));
    expect(error.message).toMatch(/not valid JSON: Unexpected token 'x', \.\.\."0000001}, x]"/);
  });
});

describe("real SQL dumps", () => {
  const fixture = (name: string) =>
    readFileSync(new URL(`../../../fixtures/sql/${name}.sql`, import.meta.url), "utf8");
  const dumps = {
    // mysqldump 8.0: /*!...*/ settings, DROP/CREATE TABLE, LOCK TABLES, one multi-row INSERT without a
    // column list, backslash escapes, a bigint past 2^53.
    mysqldump: {
      sql: fixture("mysqldump"),
      columns: ["id", "name", "note", "balance", "active"],
      ndjson: [
        '{"id":1,"name":"Ada Lovelace","note":null,"balance":12.5,"active":1}',
        '{"id":2,"name":"O\'Brien; \\"Pat\\"","note":"line 1\\nline 2\\ttab \\\\ backslash","balance":0,"active":0}',
        '{"id":9223372036854775807,"name":"Zoë","note":"it\'s 100\\\\% done","balance":-3.75,"active":1}',
        "",
      ].join("\n"),
    },
    // pg_dump 16: \restrict, SET lines, set_config, a $$ function body with a ; inside, CREATE TABLE and
    // SEQUENCE, a COPY block with \N, escapes and an empty string, setval, constraints, \unrestrict.
    pg_dump: {
      sql: fixture("pg_dump"),
      columns: ["id", "author id", "text", "lang", "meta"],
      ndjson: [
        '{"id":1790000000000000001,"author id":44196397,"text":"plain text","lang":"en","meta":{"likes":12,"quoted":1789999999999999999}}',
        '{"id":1790000000000000123,"author id":9007199254740993,"text":"tab\\there\\nnew line \\\\ back","lang":null,"meta":null}',
        '{"id":3,"author id":1,"text":"","lang":"ja","meta":[]}',
        "",
      ].join("\n"),
    },
  };

  for (const [tool, dump] of Object.entries(dumps)) {
    it(`reads ${tool} output`, () => {
      const result = convert(dump.sql, { from: "sql", to: "ndjson" });
      expect(result).toMatchObject({ rows: 3, columns: dump.columns });
      expect(result.data).toBe(dump.ndjson);
    });

    it(`converts ${tool} output to every format and back to the same records`, () => {
      const json = run(dump.sql, "sql", "json");
      expect(run(json, "json", "ndjson")).toBe(dump.ndjson);
      for (const to of ["json", "ndjson", "csv", "tsv", "sql"] as const) {
        const out = convert(dump.sql, { from: "sql", to });
        expect(out.rows, to).toBe(3);
        expect(out.columns, to).toEqual(dump.columns);
        // CSV/TSV cannot tell the empty string from NULL: only there may "" come back as null.
        const back = run(out.data, to, "ndjson");
        expect(back.replaceAll('"text":null', '"text":""'), to).toBe(dump.ndjson);
      }
    });
  }

  it("writes the exact cells of each dump", () => {
    expect(run(dumps.mysqldump.sql, "sql", "csv").split("\r\n")[3]).toBe(
      "9223372036854775807,Zoë,it's 100\\% done,-3.75,1",
    );
    expect(run(dumps.pg_dump.sql, "sql", "tsv").split("\n")[1]).toBe(
      '1790000000000000001\t44196397\tplain text\ten\t"{""likes"":12,""quoted"":1789999999999999999}"',
    );
    expect(run(dumps.pg_dump.sql, "sql", "sql", { table: "t" }).split("\n")[0]).toBe(
      `INSERT INTO "t" ("id","author id","text","lang","meta") VALUES (1790000000000000001,44196397,'plain text','en','{"likes":12,"quoted":1789999999999999999}');`,
    );
  });

  it("reads COPY cells as text with infer_types off", () => {
    expect(run(dumps.pg_dump.sql, "sql", "ndjson", { inferTypes: false }).split("\n")[2]).toBe(
      '{"id":"3","author id":"1","text":"","lang":"ja","meta":"[]"}',
    );
  });

  it("refuses a dump with rows of several tables unless source_table chooses one", () => {
    const both = `${dumps.mysqldump.sql}\n${dumps.pg_dump.sql}`;
    expect(refusal(() => run(both, "sql", "json")).message).toMatch(
      /several tables \("customers", "public.tweets"\); choose one with source_table/,
    );
    expect(convert(both, { from: "sql", to: "ndjson", sourceTable: "tweets" }).data).toBe(
      dumps.pg_dump.ndjson,
    );
    expect(convert(both, { from: "sql", to: "ndjson", sourceTable: "customers" }).data).toBe(
      dumps.mysqldump.ndjson,
    );
    expect(refusal(() => convert(both, { from: "sql", to: "json", sourceTable: "x" })).message).toMatch(
      /no rows of a table "x"/,
    );
    // A table that is only created, with no rows, does not count.
    expect(run(`CREATE TABLE a (x int);\nINSERT INTO b (y) VALUES (1);`, "sql", "ndjson")).toBe('{"y":1}\n');
  });

  // Printed by the real programs (test/fixtures/sql/README.md). Each dump must give the records the database
  // itself renders as JSON (PostgreSQL's row_to_json, MariaDB's JSON_OBJECT), but for two things a dump does
  // not say: a timestamp keeps the dump's text, and a decimal's trailing zeros go (12.5000 is 12.5).
  const mariadb = [
    '{"id":1,"sku":"A-1","note":null,"price":12.5,"qty":1,"shipped":1,"at":"2024-05-01 10:00:00"}',
    '{"id":2,"sku":"O\'Brien; \\"Pat\\"","note":"line 1\\nline 2\\ttab \\\\ backslash","price":0,"qty":0,"shipped":0,"at":"2024-05-02 11:30:00"}',
    '{"id":4,"sku":"empty","note":"","price":1,"qty":3,"shipped":0,"at":"2025-01-01 00:00:00"}',
    '{"id":5,"sku":"123","note":"{\\"a\\": 1}","price":2,"qty":1,"shipped":0,"at":"2025-01-02 00:00:00"}',
    '{"id":18446744073709551615,"sku":"Zoë — 日本","note":"it\'s 100% done, /* not a comment */ -- nor this","price":-3.75,"qty":-2,"shipped":1,"at":"2024-12-31 23:59:59"}',
  ];
  const postgres = [
    '{"id":1,"sku":"A-1","note":null,"price":12.5,"qty":1,"shipped":true,"at":"2024-05-01 10:00:00+00","tags":["a","b"],"meta":{"id":1790000000000000001,"likes":12}}',
    '{"id":2,"sku":"O\'Brien; \\"Pat\\"","note":"line 1\\nline 2\\ttab \\\\ backslash","price":0,"qty":0,"shipped":false,"at":"2024-05-02 11:30:00+00","tags":null,"meta":null}',
    '{"id":18446744073709551615,"sku":"Zoë — 日本","note":"it\'s 100% done, /* not a comment */ -- nor this","price":-3.75,"qty":-2,"shipped":true,"at":"2024-12-31 23:59:59+00","tags":["x y","z"],"meta":[]}',
    '{"id":4,"sku":"empty","note":"","price":1,"qty":3,"shipped":false,"at":"2025-01-01 00:00:00+00","tags":[],"meta":{}}',
    '{"id":5,"sku":"123","note":"{\\"a\\": 1}","price":2,"qty":1,"shipped":false,"at":"2025-01-02 00:00:00+00","tags":[null,"\\"q\\"","a,b"],"meta":"str"}',
  ];
  const printed: [string, string[]][] = [
    ["mariadb-dump-10.11", mariadb],
    ["mariadb-dump-10.11-complete", mariadb],
    ["pg_dump-15", postgres],
    ["pg_dump-15-inserts", postgres],
  ];
  for (const [name, records] of printed) {
    it(`gives ${name}'s records as the database renders them, by the types its CREATE TABLE declares`, () => {
      // Before the declared types were read, COPY's "t" stayed a string, "12.5000" a string, a text[] of
      // "{}" became an object and the text "123" a number.
      expect(run(fixture(name), "sql", "ndjson")).toBe(`${records.join("\n")}\n`);
    });
  }

  it("reads pg_dump --inserts and mysqldump --insert-ignore rows by their CREATE TABLE columns", () => {
    const pg = `CREATE TABLE public.events (
    id integer NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    "kind" text,
    CONSTRAINT events_kind CHECK ((kind <> ''::text))
);
INSERT INTO public.events VALUES (1, '2024-05-01 10:00:00+00', 'a\\b');
INSERT IGNORE INTO public.events VALUES (-2, '2024-05-02 10:00:00+00', NULL);`;
    expect(run(pg, "sql", "ndjson")).toBe(
      '{"id":1,"at":"2024-05-01 10:00:00+00","kind":"a\\\\b"}\n{"id":-2,"at":"2024-05-02 10:00:00+00","kind":null}\n',
    );
  });

  it("takes backslashes literally unless the dump shows it is MySQL's, whatever its values hold", () => {
    const rows = '[{"a":"x\\n-- MySQL dump\\n/*!40101 */ \\\\\\\\ \\\\\'"}]';
    expect(JSON.parse(run(run(rows, "json", "sql"), "sql", "json"))).toEqual(JSON.parse(rows));
    expect(run("INSERT INTO `t` (a) VALUES ('It\\'s \\\\');", "sql", "ndjson")).toBe('{"a":"It\'s \\\\"}\n');
  });

  it("takes the source_table parameter at the endpoint", () => {
    const input = convertEndpoint.input.parse({
      data: "",
      from: "sql",
      to: "json",
      source_table: "public.t",
    });
    expect(input.source_table).toBe("public.t");
  });
});

describe("refusals", () => {
  const cases: [string, string, Format, RegExp][] = [
    ["JSON syntax", "[{", "json", /not valid JSON/],
    ["JSON not an array", '{"a":1}', "json", /array of objects/],
    ["JSON element not an object", "[1]", "json", /element 0 is not an object/],
    ["NDJSON line", '{"a":1}\n[2]\n', "ndjson", /line 2 is not an object/],
    ["CSV field count", "a,b\r\n1,2,3\r\n", "csv", /record 2 has 3 fields; the header has 2/],
    ["CSV duplicate header", "a,a\r\n1,2\r\n", "csv", /repeats the column "a"/],
    ["CSV unterminated quote", 'a,b\r\n"x,1\r\n', "csv", /malformed/],
    ["CSV stray quote", 'a,b\r\n"x"y,1\r\n', "csv", /malformed/],
    ["SQL other statement", "DELETE FROM t;", "sql", /expected INSERT or COPY .*found "DELETE" at line 1/],
    ["SQL no column list", "INSERT INTO t VALUES (1);", "sql", /must list its columns/],
    ["SQL expression", "INSERT INTO t (a) VALUES (1 + 1);", "sql", /expected "\)", found "\+"/],
    ["SQL function", "INSERT INTO t (a) VALUES (now());", "sql", /expected a literal .*found "now"/],
    ["SQL cast", "INSERT INTO t (a) VALUES ('1'::int);", "sql", /found ":"/],
    ["SQL tuple length", "INSERT INTO t (a, b) VALUES (1);", "sql", /expected ","/],
    [
      "SQL two tables",
      "INSERT INTO t (a) VALUES (1); INSERT INTO u (a) VALUES (2);",
      "sql",
      /rows of several tables \("t", "u"\); choose one with source_table/,
    ],
    [
      "SQL missing semicolon",
      "INSERT INTO t (a) VALUES (1) INSERT INTO t (a) VALUES (2)",
      "sql",
      /expected ";"/,
    ],
    [
      "SQL backslash outside a MySQL dump is a plain character",
      "INSERT INTO t (a) VALUES ('It\\'s');",
      "sql",
      /unterminated ' literal at line 1/,
    ],
    ["SQL error names its line", "-- dump\nINSERT INTO t (a)\nVALUES (1),\n(2, 3);", "sql", /at line 4/],
    ["SQL COPY without its end", "COPY t (a, b) FROM stdin;\n1\t2\n", "sql", /no \\\. line .* at line 2/],
    [
      "SQL COPY row width",
      "COPY t (a, b) FROM stdin;\n1\t2\n3\n\\.\n",
      "sql",
      /COPY row has 1 fields; .* at line 3/,
    ],
    ["SQL update", "SET x = 1;\nUPDATE t SET a = 1;", "sql", /found "UPDATE" at line 2/],
    ["SQL escape beyond Unicode", "INSERT INTO t (a) VALUES (E'\\U00110000');", "sql", /beyond Unicode/],
    ["SQL duplicate column", "INSERT INTO t (a, a) VALUES (1, 2);", "sql", /named twice/],
  ];
  it.each(cases)("%s", (_name, data, from, message) => {
    const error = refusal(() => convert(data, { from, to: "json" }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_data");
    expect(error.message).toMatch(message);
  });

  it("refuses more than 5 MiB and more than the row cap", () => {
    expect(refusal(() => convert("x".repeat(MAX_INPUT_BYTES + 1), { from: "csv", to: "json" })).code).toBe(
      "too_large",
    );
    const many = `a\n${"1\n".repeat(MAX_ROWS + 1)}`;
    expect(refusal(() => convert(many, { from: "csv", to: "json" })).message).toMatch(
      /limit is 100000 records/,
    );
  });

  it("refuses JSON nested too deeply to handle", () => {
    const deep = `[{"a":${"[".repeat(200_000)}${"]".repeat(200_000)}}]`;
    expect(refusal(() => convert(deep, { from: "json", to: "csv" })).code).toBe("too_deep");
  });

  it("refuses an empty column name in SQL output", () => {
    expect(refusal(() => convert('[{"":1}]', { from: "json", to: "sql" })).message).toMatch(/empty column/);
  });
});

describe("round trips (property)", () => {
  /** Text with the characters that break naive CSV/TSV/SQL writers, mixed with any unicode. */
  const nastyChar = fc.constantFrom(
    ",",
    "\t",
    '"',
    "'",
    "\n",
    "\r",
    " ",
    "\\",
    "a",
    "é",
    "😀",
    "{",
    "[",
    "-",
  );
  const text = fc.oneof(
    fc.string({ unit: nastyChar, maxLength: 12 }),
    fc.string({ unit: "grapheme", maxLength: 12 }),
  );
  const nested = fc.oneof(
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  );
  const scalar = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );

  /** Rectangular records: every record has every column, in the same order. */
  const records = (value: fc.Arbitrary<unknown>) =>
    fc
      .uniqueArray(fc.string({ unit: nastyChar, minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 })
      .chain((columns) =>
        fc.array(
          fc
            .tuple(...columns.map(() => value))
            .map((values) => Object.fromEntries(columns.map((c, i) => [c, values[i]]))),
          {
            maxLength: 8,
          },
        ),
      );

  /** What JSON itself keeps of generated records (e.g. -0 becomes 0). */
  const viaJson = (rows: unknown) => JSON.parse(JSON.stringify(rows));

  const textTypes = fc.oneof(
    scalar,
    nested,
    text.filter((s) => !isAmbiguousString(s)),
  );
  for (const format of ["csv", "tsv"] as const) {
    it(`json -> ${format} -> json keeps records whose strings are unambiguous`, () => {
      fc.assert(
        fc.property(records(textTypes), (rows) => {
          const json = JSON.stringify(rows);
          expect(JSON.parse(run(run(json, "json", format), format, "json"))).toEqual(viaJson(rows));
        }),
        { numRuns: 300 },
      );
    });
  }

  it("json -> sql -> json keeps every string that is not JSON object/array text", () => {
    const sqlTypes = fc.oneof(
      scalar,
      nested,
      text.filter((s) => nestedFromText(s) === undefined),
    );
    fc.assert(
      fc.property(records(sqlTypes), (rows) => {
        const json = JSON.stringify(rows);
        expect(JSON.parse(run(run(json, "json", "sql"), "sql", "json"))).toEqual(viaJson(rows));
      }),
      { numRuns: 300 },
    );
  });

  it("json -> ndjson -> json keeps any records, sparse and nested", () => {
    const anyRecords = fc.array(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }), {
      maxLength: 8,
    });
    fc.assert(
      fc.property(anyRecords, (rows) => {
        const json = JSON.stringify(rows);
        expect(JSON.parse(run(run(json, "json", "ndjson"), "ndjson", "json"))).toEqual(viaJson(rows));
      }),
      { numRuns: 300 },
    );
  });

  it("tsv and csv keep every string (tabs, quotes, line breaks) with infer_types off, and agree with sql", () => {
    fc.assert(
      fc.property(records(text), (rows) => {
        const json = JSON.stringify(rows);
        const tsv = run(json, "json", "tsv");
        expect(JSON.parse(run(tsv, "tsv", "json", { inferTypes: false }))).toEqual(rows);
        const csv = run(tsv, "tsv", "csv", { inferTypes: false });
        expect(run(csv, "csv", "tsv", { inferTypes: false })).toBe(tsv);
        const sql = run(csv, "csv", "sql", { inferTypes: false });
        expect(run(sql, "sql", "tsv", { inferTypes: false })).toBe(tsv);
      }),
      { numRuns: 300 },
    );
  });
});

describe("the catalogue entry", () => {
  it("documents an example the endpoint really gives", async () => {
    const input = convertEndpoint.input.parse(convertEndpoint.example.input);
    expect({
      from: input.from,
      to: input.to,
      ...convert(input.data, { ...input, inferTypes: input.infer_types }),
    }).toEqual(convertEndpoint.example.output);
  });
});
