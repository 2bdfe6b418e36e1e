/** next_token: the provider's cursor, bound to its query and signed; anything else is a 400 before payment. */
import { describe, expect, it } from "vitest";
import { migrate } from "../../../src/common/db/index.ts";
import {
  nextTokens,
  SOCIAL_MIGRATIONS,
  SOCIAL_MODULE,
  tokenKey,
} from "../../../src/merchants/social/next-token.ts";
import { openTestDatabase } from "../../helpers/db.ts";

const scope = { route: "/users/followers", subject: "1790000000000000001", provider: "archive" };
const refused = { status: 400, code: "invalid_next_token", param: "next_token" };

describe("next_token", () => {
  const tokens = nextTokens(new Uint8Array(32).fill(7));

  it("gives the provider's cursor back for the same query", () => {
    const token = tokens.seal(scope, "cursor:42|x");
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(token).not.toContain("cursor");
    expect(tokens.open(scope, token)).toBe("cursor:42|x");
  });

  it("refuses a token of another query, route, provider or key, an edited one and garbage", () => {
    const token = tokens.seal(scope, "c1");
    expect(() => tokens.open({ ...scope, subject: "1790000000000000002" }, token)).toThrow(
      expect.objectContaining(refused),
    );
    expect(() => tokens.open({ ...scope, route: "/users/following" }, token)).toThrow(
      expect.objectContaining(refused),
    );
    expect(() => tokens.open({ ...scope, provider: "x-web" }, token)).toThrow(
      expect.objectContaining(refused),
    );
    expect(() => nextTokens(new Uint8Array(32).fill(8)).open(scope, token)).toThrow(
      expect.objectContaining(refused),
    );
    const [body, signature] = token.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify([scope.route, scope.subject, scope.provider, "c999"])).toString(
      "base64url",
    );
    expect(() => tokens.open(scope, `${forged}.${signature}`)).toThrow(expect.objectContaining(refused));
    for (const bad of ["", "abc", `${body}.`, `${body}.${signature}.x`, "!!!.???"])
      expect(() => tokens.open(scope, bad)).toThrow(expect.objectContaining(refused));
  });

  it("keeps one key per database, made once even by concurrent first uses; an operator's secret wins", async () => {
    const { db, close } = await openTestDatabase("pglite");
    try {
      await migrate(db, SOCIAL_MODULE, SOCIAL_MIGRATIONS);
      const keys = await Promise.all([tokenKey(db, null), tokenKey(db, null), tokenKey(db, null)]);
      expect(Buffer.from(keys[1] as Uint8Array).equals(Buffer.from(keys[0] as Uint8Array))).toBe(true);
      expect(Buffer.from(keys[2] as Uint8Array).equals(Buffer.from(keys[0] as Uint8Array))).toBe(true);
      expect(keys[0]?.length).toBe(32);
      const operator = await tokenKey(db, "s3cret");
      expect(Buffer.from(operator).equals(Buffer.from(keys[0] as Uint8Array))).toBe(false);
      expect(Buffer.from(await tokenKey(db, "s3cret")).equals(Buffer.from(operator))).toBe(true);
    } finally {
      await close();
    }
  });
});
