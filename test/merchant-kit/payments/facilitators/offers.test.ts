/**
 * Only what can be settled is offered (docs/platform.md, "What is offered"): a sweep of every way to pay
 * (exact by EIP-3009 and by Permit2, upto, a channel's deposit) on the project's merchants and on a test
 * merchant that offers all four, each served by the kit against the project's facilitator over HTTP on a
 * devnet, closed to keyless callers:
 *
 * - with an API key naming the merchants' wallets, every way is settled for them, and every 402 lists what
 *   its catalogue offers;
 * - without one, the same facilitator refuses every way (payee_not_allowed; authorizer_key_required for a
 *   channel): no 402 lists anything, the paid routes answer 503 `facilitator_unavailable` saying why;
 * - open but without a key (as on loopback without keys), exact and upto are settled and a channel is not
 *   (the facilitator would not sign its claims): no 402 lists a channel, and the refund route is gone.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Database } from "../../../../src/common/db/index.ts";
import { type Listening, listen } from "../../../../src/common/listen.ts";
import { addKey } from "../../../../src/facilitator/access/index.ts";
import type { Facilitator } from "../../../../src/facilitator/index.ts";
import {
  type AnyEndpoint,
  defineEndpoint,
  exampleJson,
  type Merchant,
  pathParams,
} from "../../../../src/merchant-kit/endpoint.ts";
import { httpFacilitator } from "../../../../src/merchant-kit/payments/facilitators/failover.ts";
import { wayOf } from "../../../../src/merchant-kit/payments/facilitators/offers.ts";
import { REFUND_PATH } from "../../../../src/merchant-kit/routes.ts";
import { MERCHANTS } from "../../../../src/merchants/index.ts";
import { useDevnet } from "../../../helpers/chain.ts";
import { channelEndpoints } from "../../../helpers/channel-shop.ts";
import { LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
import { devnetFacilitator } from "../../../helpers/facilitator.ts";
import { gates } from "../../../helpers/gates.ts";
import { startMerchant, testConfig, testMerchant } from "../../../helpers/merchant.ts";
import { newMerchant } from "../../../helpers/x402.ts";

const ALL_WAYS = ["exact/eip3009", "exact/permit2", "upto/permit2", "batch-settlement/eip3009"];

/** An exact endpoint payable by Permit2 too: with channelEndpoints', every way the kit offers. */
const permit2 = defineEndpoint({
  method: "GET",
  path: "/api/permit2",
  price: "0.001",
  scheme: "exact",
  exactTransfers: ["eip3009", "permit2"],
  description: "Paid by an EIP-3009 or a Permit2 authorization.",
  input: z.object({}),
  output: z.object({ ok: z.boolean() }),
  example: { input: {}, output: { ok: true } },
  handler: async () => ({ ok: true }),
});

const builds: Record<string, (payTo: `0x${string}`, url: string) => Merchant> = {
  test: (payTo, url) =>
    testMerchant(payTo, url, [
      ...channelEndpoints(gates(), { runs: 0, running: 0, mostAtOnce: 0 }),
      permit2,
    ] as AnyEndpoint[]),
  utility: (payTo, url) => MERCHANTS.utility({ payTo, publicUrl: url }, testConfig()),
  inference: (payTo, url) => MERCHANTS.inference({ payTo, publicUrl: url }, testConfig()),
  social: (payTo, url) => MERCHANTS.social({ payTo, publicUrl: url }, testConfig()),
};
const wallets = Object.fromEntries(Object.keys(builds).map((name) => [name, newMerchant()]));

const chain = useDevnet({ buyers: 1 });
const closing: (() => Promise<unknown>)[] = [];
/** The facilitator closed to keyless callers, and one open to them. */
const served: Record<"closed" | "open", { url: string; facilitator: Facilitator }> = {} as never;
let key: string;

beforeAll(async () => {
  for (const mode of ["closed", "open"] as const) {
    const ledger = await openTestDatabase(LEDGER_KIND);
    closing.push(ledger.close);
    const facilitator = await devnetFacilitator(chain.devnet, ledger.db, {
      access: { open: mode === "open" },
    });
    closing.push(() => facilitator.close());
    const server: Listening = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closing.push(() => server.close());
    served[mode] = { url: server.url, facilitator };
    if (mode === "closed") ({ key } = await keyFor(ledger.db));
  }
}, 60_000);
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

function keyFor(db: Database) {
  return addKey(db, {
    name: "merchants",
    payees: Object.values(wallets).map((w) => w.toLowerCase()),
    gasBudgetWei: parseEther("1"),
    ratePerMinute: 1000,
  });
}

/** What each paid route answers unpaid: the ways its 402 lists, or its refusal. */
async function sweep(merchant: Merchant, url: string) {
  const ways = new Set<string>();
  const statuses = new Map<number, number>();
  const codes = new Set<string>();
  const headerBytes = new Map<string, number>();
  for (const e of merchant.endpoints) {
    if (pathParams(e.path).length > 0 || e.body === "multipart") continue;
    const input = exampleJson(e.example.input) as Record<string, unknown>;
    const answer =
      e.method === "GET"
        ? await fetch(
            `${url}${e.path}?${new URLSearchParams(Object.entries(input).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]))}`,
          )
        : await fetch(`${url}${e.path}`, {
            method: e.method,
            headers: { "content-type": "application/json" },
            body: JSON.stringify(input),
          });
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    if (answer.status === 402) {
      let bytes = 0;
      answer.headers.forEach((value, name) => {
        bytes += name.length + value.length + 4;
      });
      headerBytes.set(e.path, bytes);
      const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
      for (const accept of required.accepts) ways.add(wayOf(accept));
    } else if (answer.status === 503) {
      codes.add(((await answer.json()) as { error: { code: string } }).error.code);
    } else await answer.body?.cancel();
  }
  const refund = await fetch(`${url}${REFUND_PATH}`);
  await refund.body?.cancel();
  return { ways, statuses, codes, refund: refund.status, headerBytes };
}

/** Every way the merchant's catalogue offers. */
function catalogued(merchant: Merchant): Set<string> {
  const ways = new Set<string>();
  for (const e of merchant.endpoints) {
    const schemes = typeof e.scheme === "string" ? [e.scheme] : (e.scheme ?? ["exact"]);
    for (const s of schemes)
      if (s === "exact") for (const t of e.exactTransfers ?? ["eip3009"]) ways.add(`exact/${t}`);
      else ways.add(s === "upto" ? "upto/permit2" : "batch-settlement/eip3009");
  }
  return ways;
}

describe.each(Object.keys(builds))("what the %s merchant offers", (name) => {
  const build = builds[name] as (typeof builds)[string];
  const payTo = wallets[name] as `0x${string}`;
  const host = async (mode: "closed" | "open", auth?: string) => {
    const ledger = await openTestDatabase(LEDGER_KIND);
    closing.push(ledger.close);
    const headers: Record<string, string> = auth ? { Authorization: `Bearer ${auth}` } : {};
    const client = httpFacilitator(served[mode].url, async () => ({
      verify: headers,
      settle: headers,
      supported: headers,
    }));
    let merchant: Merchant | undefined;
    const server = await startMerchant(
      (url) => {
        merchant = build(payTo, url);
        return merchant;
      },
      ledger.db,
      client,
      { rpcUrl: chain.devnet.rpc },
    );
    closing.push(() => server.close());
    return { url: server.url, merchant: merchant as Merchant };
  };

  it("lists every way of its catalogue where its key lets the facilitator settle each", async () => {
    const { url, merchant } = await host("closed", key);
    const offered = await sweep(merchant, url);
    expect(offered.statuses.get(402), JSON.stringify([...offered.statuses])).toBeGreaterThan(0);
    expect([...offered.ways].sort()).toEqual([...catalogued(merchant)].sort());
    if (name === "test") expect([...offered.ways].sort()).toEqual(ALL_WAYS.sort());
    // Every way offered, every extension declared: the 402's headers must leave room under Node's 16 KB (undici
    // refuses more: "Headers Overflow Error") for a second chain's options and a longer public URL. An upto tier
    // on two chains passed it once gas sponsoring was declared whole (payments/sponsoring/declare.ts).
    const largest = Math.max(...offered.headerBytes.values());
    expect(largest, JSON.stringify([...offered.headerBytes])).toBeLessThan(12 * 1024);
  }, 60_000);

  it("lists nothing where the facilitator refuses every way for it, and says why", async () => {
    const { url, merchant } = await host("closed");
    const offered = await sweep(merchant, url);
    expect([...offered.ways]).toEqual([]);
    expect(offered.statuses.get(402)).toBeUndefined();
    // Routes whose engine is not configured here refuse before any payment (engine_not_configured).
    expect([...offered.codes]).toContain("facilitator_unavailable");
  }, 60_000);

  it("lists no channel where the facilitator would not sign its claims, and the other ways still", async () => {
    const { url, merchant } = await host("open");
    const offered = await sweep(merchant, url);
    const expected = [...catalogued(merchant)].filter((w) => !w.startsWith("batch-settlement"));
    expect([...offered.ways].sort()).toEqual(expected.sort());
    expect(offered.refund).toBe(404);
  }, 60_000);
});
