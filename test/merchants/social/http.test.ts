/**
 * The social-data API and its paid proxy served by the merchant kit on 127.0.0.1, unpaid: every error of
 * spec 7 (a search without a filter, more than 50 ids, non-numeric ids, a missing parameter named, a
 * next_token that is not this query's, an upload that is not an image) is a 400 before any payment; a
 * valid call of each of the 19 paths gets the 402 at spec 4.3's price (its table copied here, checked
 * against the catalogue too) with the Bazaar extension, whose resource URL never carries the caller's
 * cookies; the OpenAPI document lists the 19 paths in the spec's order, and the proxy's
 * /pay/{agent_id} at the user lookup's price and description; its day, /pay/{agent_id}/day, at $0.05 with a
 * sign-in-with-x challenge, documented and unlisted.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Listening } from "../../../src/common/listen.ts";
import {
  SOCIAL_SPEC_ORDER,
  socialEndpoints,
  socialMerchant,
  socialProxyMerchant,
} from "../../../src/merchants/social/catalogue.ts";
import { nextTokens } from "../../../src/merchants/social/next-token.ts";
import { socialSetup } from "../../../src/merchants/social/setup.ts";
import { loadConfig } from "../../../src/services/config.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { refusingFacilitator as facilitator, startMerchant } from "../../helpers/merchant.ts";
import { realPng } from "./media-fixtures.ts";

const PAY_TO = "0x1111111111111111111111111111111111111111";
const setup = socialSetup(loadConfig({ env: {} }).social);
let social: Listening;
let proxy: Listening;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  closers.push(opened.close);
  social = await startMerchant(
    (url) => socialMerchant({ payTo: PAY_TO, publicUrl: url }, setup),
    opened.db,
    facilitator,
  );
  closers.push(() => social.close());
  proxy = await startMerchant(
    (url) => socialProxyMerchant({ payTo: PAY_TO, publicUrl: url }, setup),
    opened.db,
    facilitator,
  );
  closers.push(() => proxy.close());
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const get = (path: string, base = social.url) => fetch(`${base}${path}`);

async function refusal(response: Response) {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, paymentAsked: response.headers.has("payment-required"), ...body.error };
}

/** An upload of `bytes` claiming `type`, with a caller's cookies. */
async function upload(bytes: Uint8Array | Promise<Uint8Array>, type: string) {
  const form = new FormData();
  form.append("file", new File([new Uint8Array(await bytes)], "a.png", { type }));
  return fetch(`${social.url}/tweets/mediaUpload?auth_token=abc&ct0=def`, { method: "POST", body: form });
}

function required(response: Response) {
  const header = response.headers.get("payment-required");
  expect(response.status).toBe(402);
  return decodePaymentRequiredHeader(header as string);
}

describe("the social-data API, unpaid", () => {
  it("refuses spec 7's errors with a 400 before asking for payment, naming the parameter", async () => {
    const cases: [string, RegExp][] = [
      ["/tweets/search", /at least one filter/],
      ["/tweets/search?next_token=abc", /at least one filter/],
      [`/tweets?ids=${Array.from({ length: 51 }, (_, i) => 1000 + i).join(",")}`, /at most 50/],
      ["/tweets?ids=12,abc", /numeric/],
      ["/tweets/by/id?id=12a", /numeric tweet ID/],
      ["/tweets/by/id", /^Missing required query parameter: id$/],
      ["/users/by/username", /^Missing required query parameter: username$/],
      ["/users/by/username?username=not%20a%20name", /screen name/],
      ["/users/search", /^Missing required query parameter: query$/],
      ["/tweets/mentions", /^Missing required query parameter: auth_token$/],
      ["/users/followers?id=-1", /numeric user ID/],
      ["/lists/members", /^Missing required query parameter: id$/],
      ["/tweets/search?since=2026-13-01", /since/],
    ];
    for (const [path, message] of cases) {
      const r = await refusal(await get(path));
      expect(r, path).toMatchObject({ status: 400, paymentAsked: false });
      expect(r.message, path).toMatch(message);
    }
  });

  it("refuses a next_token that is not this query's before the 402, and accepts one that is", async () => {
    const forged = await refusal(await get("/tweets/user?username=alice&next_token=eyJ4Ijo.AAAA"));
    expect(forged).toMatchObject({ status: 400, code: "invalid_next_token", paymentAsked: false });

    // A token sealed with another key, for the right query, is refused all the same.
    const foreign = nextTokens(new Uint8Array(32).fill(7)).seal(
      { route: "/tweets/user", subject: "alice", provider: "archive" },
      "cursor",
    );
    const r = await refusal(await get(`/tweets/user?username=alice&next_token=${foreign}`));
    expect(r).toMatchObject({ status: 400, code: "invalid_next_token", paymentAsked: false });
  });

  it("asks spec 4.3's price on each of its 19 paths, as the catalogue lists it, with the Bazaar extension", async () => {
    // Spec 4.3's table, its price_usd column copied digit for digit (not read from the catalogue), with a
    // valid request of each path; the upload's is a form, asked below.
    const cookie = "9f8e7d6c5b4a9f8e7d6c5b4a9f8e7d6c5b4a9f8e";
    const spec: [path: string, request: string, priceUsd: string][] = [
      ["/tweets/by/id", "/tweets/by/id?id=20", "0.0025"],
      ["/lists/by/id", "/lists/by/id?id=12", "0.0025"],
      ["/users/by/username", "/users/by/username?username=jack", "0.005"],
      ["/tweets/search", "/tweets/search?words=x402", "0.006"],
      ["/tweets/mentions", `/tweets/mentions?auth_token=${cookie}`, "0.006"],
      ["/tweets/mediaUpload", "", "0.006"],
      ["/tweets/user", "/tweets/user?username=jack", "0.01"],
      ["/tweets/quote_tweets", "/tweets/quote_tweets?id=20", "0.01"],
      ["/users/followers", "/users/followers?id=12", "0.01"],
      ["/tweets/replies", "/tweets/replies?id=20", "0.01"],
      ["/users/search", "/users/search?query=jack", "0.01"],
      ["/lists/tweets", "/lists/tweets?id=12", "0.01"],
      ["/users/following", "/users/following?id=12", "0.01"],
      ["/tweets/retweeted_by", "/tweets/retweeted_by?id=20", "0.01"],
      ["/tweets", "/tweets?ids=20,21", "0.01"],
      ["/lists/members", "/lists/members?id=12", "0.01"],
      ["/articles/by/id", "/articles/by/id?id=20", "0.01"],
      ["/lists/followers", "/lists/followers?id=12", "0.01"],
      ["/communities/posts", "/communities/posts?id=12", "0.01"],
    ];
    expect(spec).toHaveLength(19);
    const catalogue = Object.fromEntries(socialEndpoints(setup).map((e) => [e.path, e.price]));
    expect(catalogue).toEqual(Object.fromEntries(spec.map(([path, , price]) => [path, price])));

    const asked = await Promise.all(
      spec.map(([, request]) => (request ? get(request) : upload(realPng(), "image/png"))),
    );
    for (const [i, [path, , price]] of spec.entries()) {
      const req = required(asked[i] as Response);
      // Micro-dollars: USDC's 6 decimals.
      expect(req.accepts[0]?.amount, path).toBe(String(Math.round(Number(price) * 1e6)));
      expect(req.accepts[0]?.payTo.toLowerCase(), path).toBe(PAY_TO);
      expect(req.extensions?.bazaar, path).toBeDefined();
    }
    const mentions = required(asked[spec.findIndex(([path]) => path === "/tweets/mentions")] as Response);
    expect(mentions.resource.url).toMatch(/\/tweets\/mentions$/);
    expect(JSON.stringify(mentions)).not.toContain(cookie);
  });

  it("checks an upload is an image of its claimed type before the 402", async () => {
    const text = await refusal(await upload(new TextEncoder().encode("not an image"), "image/png"));
    expect(text).toMatchObject({ status: 400, code: "unsupported_media_type", paymentAsked: false });
    const png = await realPng();
    const lying = await refusal(await upload(png, "image/jpeg"));
    expect(lying).toMatchObject({ status: 400, code: "media_type_mismatch", paymentAsked: false });
    expect(required(await upload(png, "image/png")).accepts[0]?.amount).toBe("6000");
  });

  it("documents the 19 paths in the spec's order, and the proxy's /pay/{agent_id} as the user lookup", async () => {
    const doc = (await (await get("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { summary?: string; description?: string }>>;
    };
    expect(Object.keys(doc.paths).filter((p) => SOCIAL_SPEC_ORDER.includes(p))).toEqual(SOCIAL_SPEC_ORDER);
    expect(Object.keys(doc.paths["/tweets/mediaUpload"] ?? {})).toEqual(["post"]);

    const proxyDoc = (await (await get("/openapi.json", proxy.url)).json()) as typeof doc;
    expect(Object.keys(proxyDoc.paths)).toContain("/pay/{agent_id}");
    const lookup = doc.paths["/users/by/username"]?.get;
    expect(proxyDoc.paths["/pay/{agent_id}"]?.get?.description).toBe(lookup?.description);

    const pay = required(await get("/pay/jack", proxy.url));
    expect(pay.accepts[0]?.amount).toBe("5000");
    expect(pay.resource.url).toBe(`${proxy.url}/pay/jack`);
    const bad = await refusal(await get("/pay/not-a-name!", proxy.url));
    expect(bad).toMatchObject({ status: 400, paymentAsked: false });
    // The day: its own price, the sign-in challenge of the proxy's host, in the OpenAPI document and unlisted.
    const day = required(await get("/pay/jack/day", proxy.url));
    expect(day.accepts[0]?.amount).toBe("50000");
    expect(day.extensions?.["sign-in-with-x"]).toMatchObject({
      info: { domain: new URL(proxy.url).host, uri: `${proxy.url}/pay/jack/day` },
    });
    expect(pay.extensions?.["sign-in-with-x"]).toBeUndefined();
    expect(Object.keys(proxyDoc.paths)).toContain("/pay/{agent_id}/day");
    // Its refusals of a sign-in are documented with it, and only with it.
    expect(JSON.stringify(proxyDoc.paths["/pay/{agent_id}/day"])).toMatch(
      /sign_in_replayed.*access_not_paid/,
    );
    expect(JSON.stringify(proxyDoc.paths["/pay/{agent_id}"])).not.toContain("sign_in");
    const listed = (await (await get("/.well-known/x402", proxy.url)).json()) as { resources: string[] };
    expect(JSON.stringify(listed)).not.toContain("/day");
  });
});
