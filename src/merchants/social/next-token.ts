/**
 * `next_token`, the social-data API's page cursor (docs/social.md, "Pages and `next_token`"): opaque to callers and tamper-proof. It
 * carries the provider's own cursor for the next page, bound to the route and the query it continues
 * (the tweet, user or list id, the search's filters) and to the provider that made it, and signed with
 * HMAC-SHA256: a token edited, made up, or taken from another query is a 400 `invalid_next_token`
 * before payment, never charged.
 *
 * The key is the operator's (`X402M_SOCIAL_TOKEN_SECRET`), or else one made once and kept in the
 * merchant's database, so tokens outlive a restart and work on every host that shares the database.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Database, Migration } from "../../common/db/index.ts";
import { BadInputError } from "../../common/errors.ts";

export const SOCIAL_MODULE = "social";

export const SOCIAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "the key of next_token's signatures",
    up: `CREATE TABLE social_secrets (name TEXT PRIMARY KEY, secret BYTEA NOT NULL)`,
  },
];

/** What a token continues: the route, the query's subject, the provider. */
export interface TokenScope {
  route: string;
  /** The query a page belongs to, canonical: an id, a username, the search filters as sorted JSON. */
  subject: string;
  provider: string;
}

const SIGNATURE_BYTES = 16;

export interface NextTokens {
  seal(scope: TokenScope, cursor: string): string;
  /** The provider's cursor inside `token`; a 400 `invalid_next_token` when it was not sealed for `scope`. */
  open(scope: TokenScope, token: string): string;
}

/** Tokens signed with `key`. */
export function nextTokens(key: Uint8Array): NextTokens {
  const sign = (body: string) => createHmac("sha256", key).update(body).digest().subarray(0, SIGNATURE_BYTES);
  const invalid = () =>
    new BadInputError(
      "next_token is not one this API gave for this query: pass meta.next_token of the previous page as it is",
      "invalid_next_token",
      "next_token",
    );
  return {
    seal(scope, cursor) {
      const body = Buffer.from(JSON.stringify([scope.route, scope.subject, scope.provider, cursor])).toString(
        "base64url",
      );
      return `${body}.${sign(body).toString("base64url")}`;
    },
    open(scope, token) {
      const [body, signature, ...rest] = token.split(".");
      if (!body || !signature || rest.length > 0) throw invalid();
      const given = Buffer.from(signature, "base64url");
      const expected = sign(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      let fields: unknown;
      try {
        fields = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(fields) || fields.length !== 4 || fields.some((f) => typeof f !== "string"))
        throw invalid();
      const [route, subject, provider, cursor] = fields as string[];
      if (route !== scope.route || subject !== scope.subject || provider !== scope.provider) throw invalid();
      return cursor as string;
    },
  };
}

/**
 * The key of this merchant's tokens: the operator's secret when set, else the database's (made on first
 * use; concurrent first uses agree on one).
 */
export async function tokenKey(db: Database, operatorSecret: string | null): Promise<Uint8Array> {
  if (operatorSecret)
    return createHmac("sha256", "x402-merchants next_token").update(operatorSecret).digest();
  await db.query(
    `INSERT INTO social_secrets (name, secret) VALUES ('next_token', $1) ON CONFLICT (name) DO NOTHING`,
    [randomBytes(32)],
  );
  const { rows } = await db.query<{ secret: Uint8Array }>(
    `SELECT secret FROM social_secrets WHERE name = 'next_token'`,
  );
  const secret = rows[0]?.secret;
  if (!secret) throw new Error("social_secrets holds no next_token key");
  return new Uint8Array(secret);
}
