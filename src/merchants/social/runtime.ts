/**
 * What every social-data route runs on: the provider the operator chose, over the host's database (the
 * archive keeps its tables there), and the host's `next_token` key. Made on a host's first call and kept.
 */
import type { Database } from "../../common/db/index.ts";
import { NotFoundError } from "../../common/errors.ts";
import type { Errors, Tables } from "../../merchant-kit/index.ts";
import { type NextTokens, nextTokens, SOCIAL_MIGRATIONS, SOCIAL_MODULE, tokenKey } from "./next-token.ts";
import type { PageRequest, SocialProvider } from "./provider.ts";

export interface SocialSetup {
  /** The provider, given the host's database. */
  provider: (db: Database) => SocialProvider;
  /** The operator's `next_token` key (`X402M_SOCIAL_TOKEN_SECRET`); null: one kept in the database. */
  tokenSecret: string | null;
  /** The provider costs money or X sessions: the payer's funds are reserved before every call. */
  upstream: boolean;
  /** Tables the provider keeps in the host's database (the archive's), migrated when the host starts. */
  tables?: Tables;
  /**
   * What the provider refuses on a route besides what the route itself does (provider.ts: its upstream's
   * trouble, a caller's session it cannot use, what it cannot do at all), for the route's `errors`.
   */
  errors?: (path: string) => Errors;
}

export interface SocialRuntime {
  provider: SocialProvider;
  tokens: NextTokens;
}

/** The tables every social route declares: the token key's, and the provider's. */
export function socialTables(setup: SocialSetup): Tables[] {
  return [{ module: SOCIAL_MODULE, migrations: SOCIAL_MIGRATIONS }, ...(setup.tables ? [setup.tables] : [])];
}

/** Runtimes made, per setup and database: the social host and the proxy host share one provider. */
const runtimes = new WeakMap<SocialSetup, WeakMap<Database, Promise<SocialRuntime>>>();

/**
 * The runtime of `setup` on a database: one per setup and database, made once. A writing call's database
 * is its payment's transaction, and gets a runtime of its own for that call (the archive's writes then
 * commit with the payment).
 */
export function socialRuntime(setup: SocialSetup): (db: Database) => Promise<SocialRuntime> {
  const made = runtimes.get(setup) ?? new WeakMap<Database, Promise<SocialRuntime>>();
  runtimes.set(setup, made);
  return (db) => {
    let runtime = made.get(db);
    if (!runtime) {
      runtime = tokenKey(db, setup.tokenSecret).then((key) => ({
        provider: setup.provider(db),
        tokens: nextTokens(key),
      }));
      // A failure (the database away for a moment) is not kept: the next call tries again.
      runtime.catch(() => made.delete(db));
      made.set(db, runtime);
    }
    return runtime;
  };
}

/** A page's subject: what its `next_token` is bound to. */
export interface PageScope {
  route: string;
  subject: string;
}

/**
 * One page of `call`: the caller's `next_token` opened into the provider's cursor (a 400 when it is not
 * this query's), the provider asked, its next cursor sealed into the answer's `next_token`. `missing` is
 * the 404's message when the page's subject is not there.
 */
export async function pageOf<P extends { next?: string }>(
  runtime: SocialRuntime,
  scope: PageScope,
  token: string | undefined,
  size: number,
  call: (page: PageRequest) => Promise<P | null>,
  missing: string,
): Promise<{ page: P; nextToken?: string }> {
  const full = { ...scope, provider: runtime.provider.name };
  const cursor = token === undefined ? undefined : runtime.tokens.open(full, token);
  const page = await call({ size, ...(cursor !== undefined && { cursor }) });
  if (!page) throw new NotFoundError(missing);
  return { page, ...(page.next !== undefined && { nextToken: runtime.tokens.seal(full, page.next) }) };
}

/** Spec 8's page sizes, and the live service's where the spec says none. */
export const PAGE_SIZES = {
  search: 20,
  mentions: 20,
  userTweets: 20,
  userSearch: 20,
  listFollowers: 20,
  followers: 50,
  following: 50,
  listTweets: 100,
  listMembers: 100,
  /** Not a documented limit: what clients observe of the live service. */
  quoteTweets: 20,
  retweetedBy: 20,
  communityPosts: 20,
  replies: 30,
} as const;
