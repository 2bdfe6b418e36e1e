import { describe, expect, it } from "vitest";
import { statementKind } from "../../../../src/merchants/utility/data/sql-statements.ts";
import { tokenize } from "../../../../src/merchants/utility/data/sql-tokens.ts";

const kindOf = (sql: string) => statementKind(tokenize(sql), 0);

describe("which statement of a dump starts at a token", () => {
  it("tells the statements read for data from those that teach columns or are skipped", () => {
    expect(kindOf("INSERT INTO t VALUES (1);")).toBe("insert");
    expect(kindOf("insert ignore into t values (1);")).toBe("insert");
    expect(kindOf("COPY public.t (a) FROM stdin;\n1\n\\.\n")).toBe("copy");
    expect(kindOf("CREATE TABLE t (a int);")).toBe("create_table");
    expect(kindOf("CREATE INDEX i ON t (a);")).toBe("set_up");
    expect(kindOf("SELECT pg_catalog.set_config('search_path', '', false);")).toBe("set_up");
    expect(kindOf("LOCK TABLES `t` WRITE;")).toBe("set_up");
    expect(kindOf(";")).toBe("empty");
    expect(kindOf("BEGIN;")).toBe("transaction");
    expect(kindOf("COMMIT WORK;")).toBe("transaction");
    expect(kindOf("START TRANSACTION;")).toBe("start");
  });

  it("refuses what is neither, quoted keywords included", () => {
    expect(kindOf("SELECT 1;")).toBe("other");
    expect(kindOf("UPDATE t SET a = 1;")).toBe("other");
    expect(kindOf('"INSERT" INTO t VALUES (1);')).toBe("other");
  });
});
