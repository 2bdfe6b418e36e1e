/**
 * Retries charged once (x402's `payment-identifier` extension, issue 65 item 4), end to end on a devnet: the
 * SDK's own clients (`@x402/fetch`, with the extension's client helper choosing the id) pay a kit merchant
 * through the SDK's own facilitator. A retry with the same id and request is answered again and charged once,
 * 20 at once too; the same id with another body, or another wallet, is refused and not charged; the answer
 * survives the merchant's restart; upto, a payment channel and MCP alike; a route that requires an id says so
 * in its 402 and refuses a payment without one. On the same host, x402's `sign-in-with-x` (issue 65 item 7): a
 * route that sells a day is paid once by the SDK's client with the extension's client, which then signs in
 * and is served without a second settlement; a signed message replayed, another wallet's, another path's and
 * an ended period are refused; the period survives the merchant's restart.
 */
import type { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import {
  createSIWxClientExtension,
  createSIWxPayload,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxExtension,
  wrapFetchWithSIWx,
} from "@x402/extensions/sign-in-with-x";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DevnetAccount } from "../../../../src/chain/devnet/index.ts";
import { type Database, openDatabase } from "../../../../src/common/db/index.ts";
import { AppError } from "../../../../src/common/errors.ts";
import { type Listening, listenWithUrl } from "../../../../src/common/listen.ts";
import { signedInCalls } from "../../../../src/common/metrics.ts";
import { merchantApp } from "../../../../src/merchant-kit/app.ts";
import { type AnyEndpoint, defineEndpoint } from "../../../../src/merchant-kit/endpoint.ts";
import { callPaidTool, connectMcp } from "../../../../src/merchant-kit/mcp/client.ts";
import { accessForPeriod } from "../../../../src/merchant-kit/payments/extensions/siwx.ts";
import { Streamed } from "../../../../src/merchant-kit/payments/streamed.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { permit2WalletHolding, useDevnet } from "../../../helpers/chain.ts";
import { openTestDatabase } from "../../../helpers/db.ts";
import { testMerchant } from "../../../helpers/merchant.ts";
import { channelClient, channelPayer, stockFacilitator } from "../../../helpers/stock-facilitator.ts";
import { newMerchant, recordingFetch, usdcReader, x402ClientFor } from "../../../helpers/x402.ts";

/** Each run's number, so that a kept answer is told from a second run's. */
let runs = 0;
const input = z.object({
  text: z.string().default("hi"),
  delay: z.coerce.number().int().max(2000).default(0),
});
const output = z.object({ text: z.string(), run: z.number() });
const work = async ({ text, delay }: z.output<typeof input>) => {
  const run = ++runs;
  await new Promise((resolve) => setTimeout(resolve, delay));
  return { text, run };
};
const common = { input, output, example: { input: { text: "hi" }, output: { text: "hi", run: 1 } } };

const ENDPOINTS: AnyEndpoint[] = [
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/tick",
    price: "0.001",
    description: "Counts.",
    handler: work,
  }),
  defineEndpoint({
    ...common,
    method: "POST",
    path: "/api/post",
    price: "0.002",
    description: "Counts.",
    handler: work,
  }),
  defineEndpoint({
    ...common,
    method: "POST",
    path: "/api/metered",
    price: "0.01",
    scheme: "upto",
    description: "Charges 1,234 atomic units of its $0.01.",
    handler: async (value, ctx) => {
      ctx.meter?.(1234n);
      return work(value);
    },
  }),
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/channel",
    price: "0.001",
    scheme: ["exact", "batch-settlement"],
    description: "Counts, through a channel too.",
    handler: work,
  }),
  defineEndpoint({
    method: "GET",
    path: "/api/stream",
    price: "0.001",
    description: "Streams two lines.",
    input,
    output: z.string(),
    outputMedia: ["text/plain"],
    example: { input: {}, output: "start\nrun 1\nend\n" },
    streaming: "Charged its price once delivered.",
    handler: async () => {
      const run = ++runs;
      async function* parts() {
        yield `run ${run}\n`;
      }
      return new Streamed({
        headers: { "content-type": "text/plain" },
        head: "start\n",
        parts: parts(),
        meter: () => 0n,
        end: () => "end\n",
      });
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/api/day/:name",
    price: "0.003",
    accessSeconds: 86_400,
    accessCalls: 3,
    description: "Counts, for a day per name.",
    input: z.object({ name: z.string().regex(/^[a-z]+$/), text: z.string().default("hi") }),
    output,
    example: { input: { name: "alpha" }, output: { text: "hi", run: 1 } },
    handler: async ({ text }) => {
      if (text === "fail") throw new AppError(503, "upstream_unavailable", "the upstream is down");
      return { text, run: ++runs };
    },
  }),
  defineEndpoint({
    ...common,
    method: "GET",
    path: "/api/strict",
    price: "0.001",
    description: "Counts.",
    handler: work,
  }),
];

const chain = useDevnet({ buyers: 3 });
let usdc: ReturnType<typeof usdcReader>;
let facilitator: FacilitatorClient;
/** Settlements the facilitator made (a channel's vouchers settle nothing: their charges are in the store). */
let settled = 0;
let state: Awaited<ReturnType<typeof openTestDatabase>>;
let db: Database;
let host: Listening;
let url: string;
const payTo = newMerchant();
const closers: (() => Promise<void>)[] = [];

/** The merchant as `serve` builds it, on `db`, with `X402M_PAYMENT_ID_REQUIRED=/api/strict`. */
async function startHost(on: Database): Promise<Listening> {
  const config = loadConfig({ env: { X402M_PAYMENT_ID_REQUIRED: "/api/strict" } });
  const payments = { ...config.payments, rpcUrl: chain.devnet.rpc };
  return listenWithUrl(
    async (u) =>
      (
        await merchantApp(testMerchant(payTo, u, ENDPOINTS), {
          services: { db: on, config },
          facilitator,
          payments,
        })
      ).fetch,
    "127.0.0.1",
    0,
  );
}

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  const stock = stockFacilitator(chain.devnet);
  facilitator = {
    verify: (p, r) => stock.verify(p, r),
    settle: async (p, r) => {
      const answer = await stock.settle(p, r);
      if (answer.success && answer.transaction) settled++;
      return answer;
    },
    getSupported: () => stock.getSupported(),
  };
  state = await openTestDatabase("pglite");
  db = state.db;
  host = await startHost(db);
  url = host.url;
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await host?.close();
  await state?.close();
});

const buyer = (i: number) => chain.devnet.buyers[i] as DevnetAccount;

/** The SDK's client with the extension's helper adding `id` to every payment it signs. */
function withId(client: x402Client, id: () => string): x402Client {
  return client.registerExtension({
    key: PAYMENT_IDENTIFIER,
    enrichPaymentPayload: async (payload) => {
      const extensions = structuredClone(payload.extensions ?? {});
      appendPaymentIdentifierToExtensions(extensions, id());
      return { ...payload, extensions };
    },
  });
}
const payWithId = (i: number, id: string, scheme: "exact" | "upto" = "exact") =>
  wrapFetchWithPayment(
    fetch,
    withId(x402ClientFor(buyer(i), scheme), () => id),
  );
const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const receipt = (answer: Response) =>
  decodePaymentResponseHeader(answer.headers.get("payment-response") as string);

describe("exact", () => {
  it("declares the extension, optional, in every paid route's 402, and required where the operator says so", async () => {
    const required = async (path: string) =>
      decodePaymentRequiredHeader((await fetch(`${url}${path}`)).headers.get("payment-required") as string)
        .extensions?.[PAYMENT_IDENTIFIER];
    expect(await required("/api/tick")).toMatchObject({
      info: { required: false },
      schema: { type: "object" },
    });
    expect(await required("/api/strict")).toMatchObject({ info: { required: true } });
    // A payment without an id, where one is required: refused before it is verified, nothing charged.
    const before = await usdc.balanceOf(payTo);
    const answer = await wrapFetchWithPayment(fetch, x402ClientFor(buyer(0), "exact"))(`${url}/api/strict`);
    expect(answer.status).toBe(400);
    expect((await answer.json()).error.code).toBe("payment_id_required");
    const ok = await payWithId(0, generatePaymentId(), "exact")(`${url}/api/strict`);
    expect(ok.status).toBe(200);
    expect((await usdc.balanceOf(payTo)) - before).toBe(1000n);
  });

  it("answers a retry with the same id again, from the kept answer, and charges once", async () => {
    const id = generatePaymentId();
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const first = await payWithId(0, id)(`${url}/api/tick?text=once`, {
      headers: { Origin: "https://buyer.test" },
    });
    expect(first.status).toBe(200);
    // The kept answer's bytes are sent with the request's own CORS headers, the first time and the next.
    expect(first.headers.get("access-control-allow-origin")).toBe("*");
    const body = await first.json();
    // The retry signs a payment of its own (a fresh nonce): the id, not the authorization, makes it a retry.
    const again = await payWithId(0, id)(`${url}/api/tick?text=once`, {
      headers: { Origin: "https://buyer.test" },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect(again.headers.get("payment-id-replayed")).toBe("true");
    // A browser's client may read it too.
    expect(again.headers.get("access-control-allow-origin")).toBe("*");
    expect(again.headers.get("access-control-expose-headers")).toMatch(/Payment-Id-Replayed/i);
    expect(receipt(again).transaction).toBe(receipt(first).transaction);
    expect(runs - before.runs).toBe(1);
    expect(settled - before.settled).toBe(1);
    expect((await usdc.balanceOf(payTo)) - before.balance).toBe(1000n);
    // Another id is another payment.
    const other = await payWithId(0, generatePaymentId())(`${url}/api/tick?text=once`);
    expect((await other.json()).run).toBe(body.run + 1);
  });

  it("answers the very payment sent again (its authorization spent) with the kept answer, before any verification", async () => {
    const id = generatePaymentId();
    const recording = recordingFetch();
    const first = await wrapFetchWithPayment(
      recording.fetch,
      withId(x402ClientFor(buyer(0), "exact"), () => id),
    )(`${url}/api/post`, post({ text: "resent" }));
    const body = await first.json();
    const signature = recording.signatures[0] as string;
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const resend = (text: string) =>
      fetch(`${url}/api/post`, {
        ...post({ text }),
        headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": signature },
      });
    const again = await resend("resent");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    // With another body the same payment is no retry: verified, and refused for its spent authorization.
    expect((await resend("other")).status).not.toBe(200);
    expect({ balance: await usdc.balanceOf(payTo), settled, runs }).toEqual(before);
  });

  it("runs 20 retries at once with one id once: one settlement, 20 identical answers", async () => {
    const id = generatePaymentId();
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const pay = payWithId(1, id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => pay(`${url}/api/post`, post({ text: "twenty", delay: 300 }))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const bodies = await Promise.all(answers.map((a) => a.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(new Set(answers.map((a) => receipt(a).transaction)).size).toBe(1);
    expect(runs - before.runs).toBe(1);
    expect(settled - before.settled).toBe(1);
    expect((await usdc.balanceOf(payTo)) - before.balance).toBe(2000n);
  });

  it("refuses the same id with another body, or from another wallet, and charges neither", async () => {
    const id = generatePaymentId();
    const first = await payWithId(0, id)(`${url}/api/post`, post({ text: "a" }));
    expect(first.status).toBe(200);
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const otherBody = await payWithId(0, id)(`${url}/api/post`, post({ text: "b" }));
    expect(otherBody.status).toBe(409);
    expect(await otherBody.json()).toMatchObject({ error: { code: "payment_id_conflict" } });
    const otherQuery = await payWithId(0, id)(`${url}/api/post?x=1`, post({ text: "a" }));
    expect(otherQuery.status).toBe(409);
    const otherWallet = await payWithId(2, id)(`${url}/api/post`, post({ text: "a" }));
    expect(otherWallet.status).toBe(409);
    expect((await otherWallet.json()).error.message).toMatch(/another request \(or by another wallet\)/);
    expect(otherWallet.headers.get("payment-response")).toBeNull();
    expect({ balance: await usdc.balanceOf(payTo), settled, runs }).toEqual(before);
  });

  it("keeps the answer across a restart of the merchant, its database closed and opened again", async () => {
    const id = generatePaymentId();
    const first = await payWithId(0, id)(`${url}/api/tick?text=restart`);
    const body = await first.json();
    await host.close();
    await db.close();
    db = await openDatabase(state.options);
    host = await startHost(db);
    url = host.url;
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const again = await payWithId(0, id)(`${url}/api/tick?text=restart`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect({ balance: await usdc.balanceOf(payTo), settled, runs }).toEqual(before);
  });
});

describe("what is not kept", () => {
  it("refuses a retry of a streamed answer's id, neither answered nor charged again", async () => {
    const id = generatePaymentId();
    const first = await payWithId(0, id)(`${url}/api/stream`);
    expect(first.status).toBe(200);
    expect(await first.text()).toMatch(/^start\nrun \d+\nend\n$/);
    const before = { balance: await usdc.balanceOf(payTo), settled, runs };
    const again = await payWithId(0, id)(`${url}/api/stream`);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "payment_id_unstored" } });
    expect({ balance: await usdc.balanceOf(payTo), settled, runs }).toEqual(before);
  });
});

describe("upto, channels and MCP", () => {
  it("charges a metered call once, what it metered, however often it is retried with its id", async () => {
    const wallet = await permit2WalletHolding(chain.devnet, 100_000n);
    const id = generatePaymentId();
    const pay = wrapFetchWithPayment(
      fetch,
      withId(x402ClientFor(wallet, "upto"), () => id),
    );
    const before = { balance: await usdc.balanceOf(payTo), runs };
    const first = await pay(`${url}/api/metered`, post({ text: "metered" }));
    expect(first.status).toBe(200);
    const body = await first.json();
    const again = await pay(`${url}/api/metered`, post({ text: "metered" }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect(runs - before.runs).toBe(1);
    expect((await usdc.balanceOf(payTo)) - before.balance).toBe(1234n);
  });

  it("charges a channel's call once when it is retried with its id", async () => {
    const client = channelClient(chain.devnet, buyer(2), { salt: 65n, deposit: 100_000n });
    const id = generatePaymentId();
    const pay = wrapFetchWithPayment(
      fetch,
      withId(channelPayer(client), () => id),
    );
    const charged = async () =>
      BigInt(
        (
          await db.query<{ charged: string }>(
            "SELECT coalesce(sum(charged), 0)::text AS charged FROM merchant_channels WHERE lower(receiver) = lower($1)",
            [payTo],
          )
        ).rows[0]?.charged ?? "0",
      );
    const before = { charged: await charged(), runs };
    const first = await pay(`${url}/api/channel?text=channel`);
    expect(first.status).toBe(200);
    expect(receipt(first).extra?.chargedAmount).toBe("1000");
    const body = await first.json();
    const again = await pay(`${url}/api/channel?text=channel`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    expect(runs - before.runs).toBe(1);
    expect((await charged()) - before.charged).toBe(1000n);
    // The channel goes on: a new id is a new call, charged.
    const next = await wrapFetchWithPayment(
      fetch,
      withId(channelPayer(client), generatePaymentId),
    )(`${url}/api/channel?text=next`);
    expect(next.status).toBe(200);
    expect((await charged()) - before.charged).toBe(2000n);
  });

  it("answers a tool call over MCP retried with its id again, charged once", async () => {
    const mcp = await connectMcp(`${url}/mcp`);
    closers.push(() => mcp.close());
    const id = generatePaymentId();
    const payer = withId(x402ClientFor(buyer(1), "exact"), () => id);
    const before = { balance: await usdc.balanceOf(payTo), runs };
    const first = await callPaidTool(mcp, payer, "api_tick", { text: "mcp" });
    expect(first.result.isError).toBeFalsy();
    const again = await callPaidTool(mcp, payer, "api_tick", { text: "mcp" });
    expect(again.result.structuredContent).toEqual(first.result.structuredContent);
    expect(again.settlement?.transaction).toBe(first.settlement?.transaction);
    expect(runs - before.runs).toBe(1);
    expect((await usdc.balanceOf(payTo)) - before.balance).toBe(1000n);
  });
});

describe("sign-in-with-x", () => {
  const account = (i: number) => privateKeyToAccount(buyer(i).privateKey);
  /** The SDK's exact client with the extension's client: it signs the 402's challenge, and pays when refused. */
  const signingPayer = (i: number, f: typeof fetch = fetch) =>
    wrapFetchWithPayment(
      f,
      x402ClientFor(buyer(i), "exact").registerExtension(
        createSIWxClientExtension({ signers: [account(i)] }),
      ),
    );
  /** A fetch that keeps the signed messages it sends. */
  const recordingSignIns = () => {
    const sent: string[] = [];
    const f: typeof fetch = (input, init) => {
      const header = (input as Request).headers?.get(SIGN_IN_WITH_X);
      if (header) sent.push(header);
      return fetch(input, init);
    };
    return { fetch: f, sent };
  };
  const challenge = async (path: string) => {
    const answer = await fetch(`${url}${path}`);
    const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
    return required.extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  };
  const signIn = (header: string, path: string) =>
    fetch(`${url}${path}`, { headers: { [SIGN_IN_WITH_X]: header } });
  const now = async () => ({ balance: await usdc.balanceOf(payTo), settled, runs });

  it("declares a challenge of this host and chain on the route that sells a day, and on no other", async () => {
    const declared = await challenge("/api/day/alpha?text=x");
    expect(declared?.info).toMatchObject({ domain: new URL(url).host, uri: `${url}/api/day/alpha?text=x` });
    expect(declared?.supportedChains).toEqual([{ chainId: "eip155:8453", type: "eip191" }]);
    expect((await challenge("/api/day/alpha"))?.info.nonce).not.toBe(declared?.info.nonce);
    expect(await challenge("/api/tick")).toBeUndefined();
  });

  it("pays once, then signs in and is served without a second settlement; the message is used once", async () => {
    const recording = recordingSignIns();
    const pay = signingPayer(0, recording.fetch);
    const before = await now();
    // No period yet: the client's sign-in is refused with the 402, and it pays.
    const first = await pay(`${url}/api/day/alpha?text=paid`);
    expect(first.status).toBe(200);
    expect(first.headers.get("payment-response")).not.toBeNull();
    const until = Date.parse(first.headers.get("access-until") as string);
    expect(Math.abs(until - Date.now() - 86_400_000)).toBeLessThan(60_000);
    expect({
      settled: settled - before.settled,
      paid: (await usdc.balanceOf(payTo)) - before.balance,
    }).toEqual({
      settled: 1,
      paid: 3000n,
    });
    const paid = await now();
    const again = await pay(`${url}/api/day/alpha?text=signed`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ text: "signed", run: paid.runs + 1 });
    expect(again.headers.get("payment-response")).toBeNull();
    expect(Date.parse(again.headers.get("access-until") as string)).toBe(until);
    expect(await now()).toEqual({ ...paid, runs: paid.runs + 1 });
    // The message that was served, sent again: refused, nothing run, nothing charged.
    const replay = await signIn(recording.sent.at(-1) as string, "/api/day/alpha?text=signed");
    expect(replay.status).toBe(402);
    expect((await replay.json()).error.code).toBe("sign_in_replayed");
    expect(replay.headers.get("payment-required")).not.toBeNull();
    expect(await now()).toEqual({ ...paid, runs: paid.runs + 1 });
  });

  it("refuses another wallet, another path, another host's message, a forged one and a replay at once", async () => {
    await signingPayer(0)(`${url}/api/day/alpha`);
    const before = await now();
    // Wallet 1 never paid for the day: its own valid sign-in gets the 402 (the SDK's sign-in-only fetch).
    const other = await wrapFetchWithSIWx(fetch, account(1))(`${url}/api/day/alpha`);
    expect(other.status).toBe(402);
    expect((await other.json()).error.code).toBe("access_not_paid");
    // Wallet 0 paid for alpha, not beta.
    const beta = await wrapFetchWithSIWx(fetch, account(0))(`${url}/api/day/beta`);
    expect((await beta.json()).error.code).toBe("access_not_paid");
    const info = (await challenge("/api/day/alpha"))?.info as SIWxExtension["info"];
    const complete = { ...info, chainId: "eip155:8453", type: "eip191" as const };
    // Signed for another host.
    const elsewhere = { ...complete, domain: "shop.test", uri: "http://shop.test/api/day/alpha" };
    const foreign = await createSIWxPayload(elsewhere, account(0), elsewhere.uri);
    const refusedForeign = await signIn(encodeSIWxHeader(foreign), "/api/day/alpha");
    expect(await refusedForeign.json()).toMatchObject({ error: { code: "sign_in_invalid" } });
    // Signed by wallet 1, claiming wallet 0.
    const own = await createSIWxPayload(complete, account(1), `${url}/api/day/alpha`);
    const forged = await signIn(encodeSIWxHeader({ ...own, address: account(0).address }), "/api/day/alpha");
    expect((await forged.json()).error.code).toBe("sign_in_invalid");
    // Signed for alpha, sent to beta.
    const mine = await createSIWxPayload(complete, account(0), `${url}/api/day/alpha`);
    expect((await (await signIn(encodeSIWxHeader(mine), "/api/day/beta")).json()).error.code).toBe(
      "sign_in_invalid",
    );
    // One message sent five times at once: served once.
    const once = encodeSIWxHeader(await createSIWxPayload(complete, account(0), `${url}/api/day/alpha`));
    const five = await Promise.all(Array.from({ length: 5 }, () => signIn(once, "/api/day/alpha")));
    expect(five.map((a) => a.status).sort()).toEqual([200, 402, 402, 402, 402]);
    before.runs++;
    const bad = await signIn("not a message", "/api/day/alpha");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe("invalid_sign_in");
    expect(await now()).toEqual(before);
  });

  it("refuses a period that ended, and the client pays for the next", async () => {
    const pay = signingPayer(2);
    expect((await pay(`${url}/api/day/gamma`)).status).toBe(200);
    await db.query(
      "UPDATE merchant_access_grants SET expires_at = now() - interval '1 second' WHERE payer = $1",
      [buyer(2).address.toLowerCase()],
    );
    const ended = await wrapFetchWithSIWx(fetch, account(2))(`${url}/api/day/gamma`);
    expect((await ended.json()).error.code).toBe("access_not_paid");
    const before = await now();
    const renewed = await pay(`${url}/api/day/gamma`);
    expect(renewed.status).toBe(200);
    expect(renewed.headers.get("payment-response")).not.toBeNull();
    expect(settled - before.settled).toBe(1);
  });

  it("serves a period's calls and no more, gives back a failed call's, and the client pays for more", async () => {
    /** The signed-in calls counted on the route, by outcome (x402m_signed_in_calls_total). */
    const counted = async () => {
      const { values } = await signedInCalls.get();
      const of = (outcome: string) =>
        values
          .filter((v) => v.labels.route === "/api/day/:name" && v.labels.outcome === outcome)
          .reduce((n, v) => n + v.value, 0);
      return { served: of("served"), failed: of("failed") };
    };
    const countedBefore = await counted();
    const pay = signingPayer(2);
    const path = `${url}/api/day/epsilon`;
    const first = await pay(path);
    expect(first.headers.get("access-calls-left")).toBe("3");
    // A failed answer costs the period nothing, as it costs no payment.
    const failed = await pay(`${path}?text=fail`);
    expect(failed.status).toBe(503);
    const left = [];
    for (let i = 0; i < 3; i++) {
      const answer = await pay(path);
      expect(answer.headers.get("payment-response")).toBeNull();
      left.push(answer.headers.get("access-calls-left"));
    }
    expect(left).toEqual(["2", "1", "0"]);
    expect(await counted()).toEqual({ served: countedBefore.served + 3, failed: countedBefore.failed + 1 });
    // The period runs, its calls are spent: the sign-in is refused, and the SDK's client pays for more calls.
    const used = await wrapFetchWithSIWx(fetch, account(2))(path);
    expect((await used.json()).error.code).toBe("access_used");
    const before = await now();
    const more = await pay(path);
    expect(more.headers.get("payment-response")).not.toBeNull();
    expect(more.headers.get("access-calls-left")).toBe("3");
    expect(settled - before.settled).toBe(1);
    // Its last call asked for by five different signed messages at once: one served, four refused, none run.
    await db.query("UPDATE merchant_access_grants SET calls_left = 1 WHERE payer = $1 AND resource = $2", [
      buyer(2).address.toLowerCase(),
      "/api/day/epsilon",
    ]);
    const messages = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const fresh = (await challenge("/api/day/epsilon"))?.info as SIWxExtension["info"];
        const signed = { ...fresh, chainId: "eip155:8453", type: "eip191" as const };
        return encodeSIWxHeader(await createSIWxPayload(signed, account(2), path));
      }),
    );
    const runsBefore = runs;
    const last = await Promise.all(messages.map((m) => signIn(m, "/api/day/epsilon")));
    expect(last.map((a) => a.status).sort()).toEqual([200, 402, 402, 402, 402]);
    const codes = await Promise.all(
      last.filter((a) => a.status === 402).map(async (a) => (await a.json()).error.code),
    );
    expect(codes).toEqual(["access_used", "access_used", "access_used", "access_used"]);
    expect(runs).toBe(runsBefore + 1);
  });

  it("is refused on a route whose calls are metered or write: a signed-in call settles nothing", () => {
    const day = ENDPOINTS.find((e) => e.accessSeconds) as AnyEndpoint;
    const access = {} as Parameters<typeof accessForPeriod>[1];
    expect(() => accessForPeriod({ ...day, scheme: "upto" }, access)).toThrow(/no upto/);
    expect(() => accessForPeriod({ ...day, effects: ["writes"] }, access)).toThrow(/write nothing/);
    expect(() => accessForPeriod({ ...day, accessCalls: undefined }, access)).toThrow(/accessCalls/);
  });

  it("keeps the period across a restart of the merchant, its database closed and opened again", async () => {
    expect((await signingPayer(1)(`${url}/api/day/delta`)).status).toBe(200);
    await host.close();
    await db.close();
    db = await openDatabase(state.options);
    host = await startHost(db);
    url = host.url;
    const before = await now();
    const again = await signingPayer(1)(`${url}/api/day/delta`);
    expect(again.status).toBe(200);
    expect(again.headers.get("payment-response")).toBeNull();
    expect(await now()).toEqual({ ...before, runs: before.runs + 1 });
  });
});
