import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { AnalyticsDamagedError } from "../../src/analytics/store-errors.ts";
import { DatabaseDamagedError } from "../../src/common/db/database.ts";
import { BadInputError } from "../../src/common/errors.ts";
import { onError } from "../../src/common/http.ts";
import { setLogDestination } from "../../src/common/log.ts";

function appThrowing(error: Error) {
  return new Hono()
    .get("/", () => {
      throw error;
    })
    .onError(onError);
}

describe("onError", () => {
  it("gives a caller the message of an error written for it", async () => {
    const res = await appThrowing(new BadInputError("expr is required")).request("/");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "bad_request", message: "expr is required" } });
  });

  it.each([
    [
      new DatabaseDamagedError("/srv/x402/data/postgres: table public.kept (file base/5/16384) is damaged"),
      503,
      "database_damaged",
    ],
    [
      new AnalyticsDamagedError("/srv/x402/data/analytics.duckdb", "block 40 fails its checksum"),
      500,
      "analytics_damaged",
    ],
  ] as const)(
    "keeps an operator's message (the server's paths) in the log, not in the answer (%#)",
    async (damaged, status, code) => {
      const logged: string[] = [];
      setLogDestination({ write: (line) => logged.push(line) });
      try {
        const res = await appThrowing(damaged).request("/");
        expect(res.status).toBe(status);
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe(code);
        expect(body.error.message).not.toContain("/srv/x402");
        expect(logged.join("")).toContain("/srv/x402/data/");
      } finally {
        setLogDestination(undefined);
      }
    },
  );
});
