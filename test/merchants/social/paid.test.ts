/**
 * The social-data API paid for real: the stock `@x402/fetch` client, the project's facilitator on a
 * devnet, the archive loaded with the contract's world. A lookup pays spec 4.3's price and answers X API
 * v2's shapes; what is not there is a 404 and costs nothing, nor does a caller's bad session; pages go on
 * through `next_token`, each paid; the proxy's /pay/<agent_id> is the user lookup, and its day is paid once
 * and then served to the wallet signed in (x402's sign-in-with-x, the SDK's client); buyers at once each pay
 * for exactly their own answers; one payment sent six times at once runs once, and a wallet that can pay
 * for one call sending five at once gets one answer and pays once.
 */
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { createSIWxClientExtension, wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import type { Listening } from "../../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../../src/facilitator/index.ts";
import { socialMerchant, socialProxyMerchant } from "../../../src/merchants/social/catalogue.ts";
import type { SocialProvider } from "../../../src/merchants/social/provider.ts";
import { archiveSetup, importArchive } from "../../../src/merchants/social/providers/archive/index.ts";
import { twitterApiProvider } from "../../../src/merchants/social/providers/twitterapi/index.ts";
import type { SocialSetup } from "../../../src/merchants/social/runtime.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { startMerchant } from "../../helpers/merchant.ts";
import { newMerchant, pay, usdcReader, x402ClientFor } from "../../helpers/x402.ts";
import { realPng } from "./media-fixtures.ts";
import { complete } from "./providers/archive/helpers.ts";
import {
  FAKE_API_KEY,
  type FakeTwitterApi,
  startFakeTwitterApi,
} from "./providers/twitterapi/fake-twitterapi.ts";
import {
  ALICE,
  ALICE_SERIES,
  ALICE_SESSION,
  ARTICLE,
  ARTICLE_TWEET,
  HELLO,
  PICTURE,
  UNKNOWN_ID,
  worldArchiveRecords,
} from "./world.ts";

const chain = useDevnet({ buyers: 5 });
let facilitator: Facilitator;
let social: Listening;
let proxy: Listening;
/** The same API over a paid upstream (a fake twitterapi.io that counts its calls). */
let upstreamHost: Listening;
let upstream: FakeTwitterApi;
let usdc: ReturnType<typeof usdcReader>;
let archive: Database;
const payTo = newMerchant();
/** The archive's calls, by method: how many times a handler actually ran. */
const archiveCalls = new Map<string, number>();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db);
  const state = await openTestDatabase("pglite");
  closers.push(state.close);
  archive = state.db;
  await importArchive(state.db, complete(worldArchiveRecords()));
  const plain = archiveSetup();
  const setup: SocialSetup = { ...plain, provider: (db) => counted(plain.provider(db)) };
  const client = inProcessClient(facilitator);
  social = await startMerchant((url) => socialMerchant({ payTo, publicUrl: url }, setup), state.db, client, {
    rpcUrl: chain.devnet.rpc,
  });
  closers.push(() => social.close());
  proxy = await startMerchant(
    (url) => socialProxyMerchant({ payTo, publicUrl: url }, setup),
    state.db,
    client,
    { rpcUrl: chain.devnet.rpc },
  );
  closers.push(() => proxy.close());
  upstream = await startFakeTwitterApi();
  closers.push(upstream.close);
  const upstreamSetup: SocialSetup = {
    provider: () => twitterApiProvider({ apiKey: FAKE_API_KEY, baseUrl: upstream.url, timeoutMs: 5_000 }),
    tokenSecret: null,
    upstream: true,
  };
  upstreamHost = await startMerchant(
    (url) => socialMerchant({ payTo, publicUrl: url }, upstreamSetup),
    state.db,
    client,
    { rpcUrl: chain.devnet.rpc },
  );
  closers.push(() => upstreamHost.close());
}, 120_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await facilitator?.close();
});

/** `provider`, counting each call of its methods in `archiveCalls`. */
function counted(provider: SocialProvider): SocialProvider {
  return new Proxy(provider, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        archiveCalls.set(String(name), (archiveCalls.get(String(name)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
}
const callsOf = (method: string) => archiveCalls.get(method) ?? 0;

const buyer = (i: number) => chain.devnet.buyers[i] as DevnetAccount;
const paying = (b: DevnetAccount) => wrapFetchWithPayment(fetch, x402ClientFor(b, "exact"));

/** What `b` spends on `calls` (made by `run`), once the chain has every settlement. */
async function spent(b: DevnetAccount, run: () => Promise<void>): Promise<bigint> {
  const before = await usdc.balanceOf(b.address);
  await run();
  await chain.miner.pending();
  return before - (await usdc.balanceOf(b.address));
}

describe("the social-data API, paid on the devnet", () => {
  it("answers a paid lookup in X API v2's shape for spec 4.3's price; what is not there costs nothing", async () => {
    const b = buyer(0);
    const charged = await spent(b, async () => {
      const found = await paying(b)(`${social.url}/tweets/by/id?id=${HELLO.id}`);
      expect(found.status, await found.clone().text()).toBe(200);
      expect(found.headers.has("payment-response")).toBe(true);
      const body = (await found.json()) as {
        data: Record<string, unknown>;
        includes: { users: { id: string; username: string }[] };
      };
      expect(body.data).toMatchObject({
        id: HELLO.id,
        text: HELLO.text,
        author_id: ALICE.id,
        created_at: "Sun Nov 01 12:00:00 +0000 2026",
        public_metrics: { like_count: 42, reply_count: 1, retweet_count: 2, quote_count: 1 },
      });
      expect(body.includes.users.map((u) => u.username)).toContain("alice");

      const missing = await paying(b)(`${social.url}/tweets/by/id?id=${UNKNOWN_ID}`);
      expect(missing.status).toBe(404);
      expect(missing.headers.has("payment-response")).toBe(false);
      const noArticle = await paying(b)(`${social.url}/articles/by/id?id=${HELLO.id}`);
      expect(noArticle.status).toBe(404);
      const badSession = await paying(b)(`${social.url}/tweets/mentions?auth_token=${"0".repeat(40)}`);
      expect(badSession.status).toBe(401);
      expect(((await badSession.json()) as { error: { code: string } }).error.code).toBe("invalid_session");
    });
    expect(charged).toBe(2_500n);
  });

  it("pages a timeline through next_token, each page paid, to its end", async () => {
    const b = buyer(1);
    const seen: string[] = [];
    let pages = 0;
    const charged = await spent(b, async () => {
      let token: string | undefined;
      do {
        const url = `${social.url}/tweets/user?username=alice${token ? `&next_token=${token}` : ""}`;
        const page = await paying(b)(url);
        expect(page.status, await page.clone().text()).toBe(200);
        const body = (await page.json()) as {
          data: { id: string }[];
          meta: { result_count: number; next_token?: string };
        };
        expect(body.meta.result_count).toBe(body.data.length);
        seen.push(...body.data.map((t) => t.id));
        token = body.meta.next_token;
        pages++;
      } while (token);
    });
    expect(pages).toBe(2);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(3 + ALICE_SERIES.length);
    expect(charged).toBe(20_000n);
  });

  it("serves the article as Markdown, the caller's mentions, an upload, and the proxy's /pay/<agent_id>", async () => {
    const b = buyer(2);
    const charged = await spent(b, async () => {
      const article = await paying(b)(`${social.url}/articles/by/id?id=${ARTICLE_TWEET.id}`);
      expect(article.status, await article.clone().text()).toBe(200);
      const { data } = (await article.json()) as { data: { title: string; article_content: string } };
      expect(data.title).toBe(ARTICLE.title);
      expect(data.article_content).toMatch(/^# /m);

      const mentions = await paying(b)(`${social.url}/tweets/mentions?auth_token=${ALICE_SESSION.authToken}`);
      expect(mentions.status, await mentions.clone().text()).toBe(200);
      expect(((await mentions.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);

      const form = new FormData();
      form.append("file", new File([new Uint8Array(await realPng())], "a.png", { type: "image/png" }));
      const uploaded = await paying(b)(
        `${social.url}/tweets/mediaUpload?auth_token=${ALICE_SESSION.authToken}&ct0=${ALICE_SESSION.ct0}`,
        { method: "POST", body: form },
      );
      expect(uploaded.status, await uploaded.clone().text()).toBe(200);
      const { media_key } = (await uploaded.json()) as { media_id: string; media_key: string };
      // Written in the payment's transaction: there once the payment settled.
      const kept = await archive.query("SELECT 1 FROM social_archive_media WHERE media_key = $1", [
        media_key,
      ]);
      expect(kept.rowCount).toBe(1);

      const agent = await paying(b)(`${proxy.url}/pay/ALICE`);
      expect(agent.status, await agent.clone().text()).toBe(200);
      expect(((await agent.json()) as { data: { id: string } }).data.id).toBe(ALICE.id);
    });
    expect(charged).toBe(10_000n + 6_000n + 6_000n + 5_000n);
  });

  it("sells a day of the proxy's /pay/<agent_id>: paid once, then signed in and served with no second charge", async () => {
    const b = buyer(1);
    const signer = privateKeyToAccount(b.privateKey);
    const extension = createSIWxClientExtension({ signers: [signer] });
    const day = wrapFetchWithPayment(fetch, x402ClientFor(b, "exact").registerExtension(extension));
    const lookups = callsOf("userByUsername");
    const charged = await spent(b, async () => {
      const first = await day(`${proxy.url}/pay/alice/day`);
      expect(first.status, await first.clone().text()).toBe(200);
      expect(first.headers.has("payment-response")).toBe(true);
      const again = await day(`${proxy.url}/pay/alice/day`);
      expect(again.status, await again.clone().text()).toBe(200);
      expect(again.headers.has("payment-response")).toBe(false);
      expect(((await again.json()) as { data: { id: string } }).data.id).toBe(ALICE.id);
      // A day of alice is not a day of bob: signed in alone, the wallet gets bob's 402.
      const bob = await wrapFetchWithSIWx(fetch, signer)(`${proxy.url}/pay/bob/day`);
      expect(bob.status).toBe(402);
      expect(((await bob.json()) as { error: { code: string } }).error.code).toBe("access_not_paid");
    });
    expect(charged).toBe(50_000n);
    expect(callsOf("userByUsername") - lookups).toBe(2);
  });

  it("charges buyers at once for exactly their own answers, never for a refusal", async () => {
    const buyers = [buyer(3), buyer(4)];
    const calls = [
      [`/tweets/by/id?id=${PICTURE.id}`, 2_500n],
      [`/tweets?ids=${HELLO.id},${UNKNOWN_ID}`, 10_000n],
      [`/tweets/by/id?id=${UNKNOWN_ID}`, 0n],
      ["/users/by/username?username=bob", 5_000n],
      ["/users/by/username?username=nobody_here_42", 0n],
      [`/tweets/retweeted_by?id=${PICTURE.id}`, 10_000n],
      ["/tweets/search?words=hello", 6_000n],
    ] as const;
    const shopBefore = await usdc.balanceOf(payTo);
    const before = await Promise.all(buyers.map((b) => usdc.balanceOf(b.address)));
    const answers = await Promise.all(
      buyers.flatMap((b) => calls.map(([path]) => paying(b)(`${social.url}${path}`).then((r) => r.status))),
    );
    expect(answers).toEqual(buyers.flatMap(() => calls.map(([, price]) => (price > 0n ? 200 : 404))));
    await chain.miner.pending();
    const expected = calls.reduce((sum, [, price]) => sum + price, 0n);
    for (const [i, b] of buyers.entries())
      expect((before[i] as bigint) - (await usdc.balanceOf(b.address))).toBe(expected);
    expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(2n * expected);
  });

  it("runs one payment sent six times at once once, and settles it once on chain", async () => {
    const b = await walletHolding(chain.devnet, 20_000n, 1);
    const url = `${social.url}/users/search?query=ali`;
    const asked = await fetch(url);
    const required = decodePaymentRequiredHeader(asked.headers.get("payment-required") as string);
    const [requirements] = required.accepts;
    if (!requirements) throw new Error("no requirements");
    const header = encodePaymentSignatureHeader(
      await pay(b, requirements, required.resource, required.extensions),
    );
    const shopBefore = await usdc.balanceOf(payTo);
    const runsBefore = callsOf("searchUsers");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } })),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(","),
    ).toHaveLength(1);
    for (const status of statuses) expect([200, 402, 409]).toContain(status);
    expect(callsOf("searchUsers") - runsBefore).toBe(1);
    await chain.miner.pending();
    expect(await usdc.balanceOf(b.address)).toBe(10_000n);
    expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(10_000n);
  });

  it("answers one of five different payments at once from a wallet that can pay one, and charges one", async () => {
    const poor = await walletHolding(chain.devnet, 2_500n, 2);
    const shopBefore = await usdc.balanceOf(payTo);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => paying(poor)(`${social.url}/tweets/by/id?id=${HELLO.id}`)),
    );
    const statuses = answers.map((a) => a.status);
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(","),
    ).toHaveLength(1);
    // A read is not guarded (docs/platform.md): each verified payment may run it, but only the one that
    // settles is answered; the others are refused with nothing of the tweet in them.
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(402);
      expect(await answer.text()).not.toContain(HELLO.id);
    }
    await chain.miner.pending();
    expect(await usdc.balanceOf(poor.address)).toBe(0n);
    expect((await usdc.balanceOf(payTo)) - shopBefore).toBe(2_500n);
  });

  it("never calls a paid upstream for more than the payer can pay, however many calls come at once", async () => {
    // Enough for two timeline pages at 0.01: six at once must not cost the operator six upstream calls.
    const poor = await walletHolding(chain.devnet, 25_000n, 0);
    const timelineCalls = () => upstream.requests.filter((r) => r.path.endsWith("/user/last_tweets")).length;
    const before = timelineCalls();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => paying(poor)(`${upstreamHost.url}/tweets/user?username=alice`)),
    );
    const statuses = answers.map((a) => a.status);
    const served = statuses.filter((s) => s === 200).length;
    expect(served, statuses.join(",")).toBeGreaterThanOrEqual(1);
    expect(served).toBeLessThanOrEqual(2);
    for (const status of statuses) expect([200, 402, 409]).toContain(status);
    expect(timelineCalls() - before).toBe(served);
    await chain.miner.pending();
    expect(25_000n - (await usdc.balanceOf(poor.address))).toBe(BigInt(served) * 10_000n);
  });

  it("answers an upstream's rate limit with a 503 and its Retry-After, charging nothing", async () => {
    const b = buyer(0);
    upstream.override = () => ({
      status: 429,
      headers: { "retry-after": "17" },
      body: '{"detail":"slow down"}',
    });
    try {
      const charged = await spent(b, async () => {
        const limited = await paying(b)(`${upstreamHost.url}/users/by/username?username=carol`);
        expect(limited.status).toBe(503);
        expect(limited.headers.get("retry-after")).toBe("17");
        expect(limited.headers.has("payment-response")).toBe(false);
      });
      expect(charged).toBe(0n);
    } finally {
      upstream.override = undefined;
    }
  });
});
