/**
 * x402 v1 through the project's facilitator (docs/facilitator.md, "x402 v1"): payments signed by x402 1.2.0's
 * own client and sent by its own facilitator client (`useFacilitator`, what `x402-hono` and `x402-express`
 * call), verified and settled on the devnet under the v2 payment's guarantees: one settlement per
 * authorization whatever arrives, in v1 or v2, the access rules, the ledger, the builder code.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { parseBuilderCodeSuffixFromCalldata } from "@x402/extensions/builder-code";
import { Hono } from "hono";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SupportedPaymentKindSchema } from "../../node_modules/x402-fetch/node_modules/x402/dist/esm/types/index.mjs";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import { register } from "../../src/common/metrics.ts";
import { addKey, type Facilitator, facilitatorOfChains, reasons } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { delta, parseExposition } from "../helpers/metrics.ts";
import { fundedAccount } from "../helpers/settle.ts";
import { newMerchant, requirementsFor, usdcReader } from "../helpers/x402.ts";
import {
  type PaymentPayloadV1,
  type PaymentRequirementsV1,
  payV1,
  v1FacilitatorClient,
  v1RequirementsFor,
} from "../helpers/x402-v1.ts";

const chain = useDevnet({ buyers: 6 });
const BUILDER_CODE = "x402_merchants";

let ledger: { db: Database; close(): Promise<void> };
let facilitator: Facilitator;
let served: Listening;
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  ledger = await openTestDatabase(LEDGER_KIND);
  facilitator = await devnetFacilitator(chain.devnet, ledger.db, { builderCode: BUILDER_CODE });
  served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  usdc = usdcReader(chain.devnet.rpc);
});
afterAll(async () => {
  await served?.close();
  await facilitator?.close();
  await ledger?.close();
});

const buyer = (i: number) => chain.devnet.buyers[i] as Devnet["buyers"][0];

/** The ledger's row of a payment's authorization. */
async function row(db: Database, payload: PaymentPayloadV1) {
  const { authorization } = payload.payload as { authorization: { from: string; nonce: string } };
  const { rows } = await db.query<{ state: string; x402_version: number; tx_hash: string | null }>(
    "SELECT state, x402_version, tx_hash FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2",
    [authorization.from.toLowerCase(), authorization.nonce.toLowerCase()],
  );
  return rows;
}

/** POST a v1 body as `useFacilitator` sends it, answering the status and the JSON. */
async function post(path: "/verify" | "/settle", payload: unknown, requirements: unknown) {
  const response = await fetch(`${served.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ x402Version: 1, paymentPayload: payload, paymentRequirements: requirements }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The same authorization as the v2 payment it is: the v2 envelope around the v1 payload's signed part. */
function asV2(payment: PaymentPayloadV1, payTo: `0x${string}`, amount: string) {
  const requirements = requirementsFor(payTo, amount);
  const payload: PaymentPayload = {
    x402Version: 2,
    resource: { url: "http://127.0.0.1/weather" },
    accepted: requirements,
    payload: payment.payload as unknown as Record<string, unknown>,
  };
  return { payload, requirements };
}

describe("x402 v1 through the facilitator", () => {
  it("verifies and settles a v1 payment from x402 1.2.0's client: money moves once, with the builder code", async () => {
    const client = v1FacilitatorClient(served.url);
    const payTo = newMerchant();
    const requirements = v1RequirementsFor(payTo, "1500");
    const { payload } = await payV1(buyer(0), requirements);
    const before = await usdc.balanceOf(buyer(0).address);
    const metricsBefore = parseExposition(await register.metrics());

    expect(await client.verify(payload, requirements)).toEqual({
      isValid: true,
      payer: buyer(0).address,
    });
    expect(await row(ledger.db, payload)).toEqual([
      expect.objectContaining({ state: "verified", x402_version: 1 }),
    ]);
    const settled = await client.settle(payload, requirements);
    // In v1's words: its network's v1 name, as the v1 packages' schemas know it.
    expect(settled).toEqual({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: "base",
      payer: buyer(0).address,
    });
    expect(await usdc.balanceOf(payTo)).toBe(1500n);
    expect(await usdc.balanceOf(buyer(0).address)).toBe(before - 1500n);
    expect(await row(ledger.db, payload)).toEqual([
      { state: "settled", x402_version: 1, tx_hash: settled.transaction.toLowerCase() },
    ]);
    // The same transaction a v2 payment gets: the token's transferWithAuthorization ending in the
    // facilitator's ERC-8021 code.
    const tx = await usdc.client.getTransaction({ hash: settled.transaction as `0x${string}` });
    expect(tx.from.toLowerCase()).toBe(chain.devnet.facilitatorAccount.address.toLowerCase());
    expect(parseBuilderCodeSuffixFromCalldata(tx.input)).toMatchObject({ w: BUILDER_CODE });

    // Again: refused as the official facilitator refuses a used nonce; nothing more moves.
    expect(await client.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      network: "base",
    });
    expect(await client.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await usdc.balanceOf(payTo)).toBe(1500n);

    // The metrics say which version spoke.
    const after = parseExposition(await register.metrics());
    const moved = (name: string, labels: Record<string, string>) => delta(metricsBefore, after, name, labels);
    const v1 = { x402_version: "1" };
    expect(moved("x402m_facilitator_verifications_total", { result: "valid", reason: "none", ...v1 })).toBe(
      1,
    );
    expect(moved("x402m_facilitator_settlements_total", { outcome: "settled", reason: "none", ...v1 })).toBe(
      1,
    );
    expect(
      moved("x402m_facilitator_settlements_total", {
        outcome: "failed",
        reason: reasons.NONCE_ALREADY_USED,
        ...v1,
      }),
    ).toBe(1);
  });

  it("settles one v1 authorization once when it is sent 6 times at once, never verified before", async () => {
    const client = v1FacilitatorClient(served.url);
    const payTo = newMerchant();
    const requirements = v1RequirementsFor(payTo, "700");
    const { payload } = await payV1(buyer(1), requirements);
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    const answers = await Promise.all(Array.from({ length: 6 }, () => client.settle(payload, requirements)));
    const won = answers.filter((a) => a.success);
    expect(won, JSON.stringify(answers)).toHaveLength(1);
    for (const lost of answers.filter((a) => !a.success)) {
      expect(lost).toMatchObject({
        errorReason: reasons.NONCE_ALREADY_USED,
        transaction: "",
        network: "base",
      });
    }
    expect(await usdc.balanceOf(payTo)).toBe(700n);
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce + 1);
  });

  it("settles once an authorization sent as v1 and as v2 at once, and refuses the other version after", async () => {
    const client = v1FacilitatorClient(served.url);
    const payTo = newMerchant();
    const requirements = v1RequirementsFor(payTo, "900");
    const { payload } = await payV1(buyer(2), requirements);
    const v2 = asV2(payload, payTo, "900");
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    // Both verify: one authorization, one ledger row, whichever version spoke last.
    expect(await client.verify(payload, requirements)).toMatchObject({ isValid: true });
    expect(await facilitator.verify(v2.payload, v2.requirements)).toMatchObject({ isValid: true });
    expect(await row(ledger.db, payload)).toEqual([expect.objectContaining({ x402_version: 2 })]);

    const v2Settle = (): Promise<Record<string, unknown>> =>
      fetch(`${served.url}/settle`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: v2.payload,
          paymentRequirements: v2.requirements,
        }),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const answers = await Promise.all([
      client.settle(payload, requirements),
      v2Settle(),
      client.settle(payload, requirements),
      v2Settle(),
    ]);
    expect(
      answers.filter((a) => a.success),
      JSON.stringify(answers),
    ).toHaveLength(1);
    // Each answered in its own version's words.
    expect(answers.map((a) => a.network)).toEqual(["base", "eip155:8453", "base", "eip155:8453"]);
    expect(await usdc.balanceOf(payTo)).toBe(900n);
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce + 1);
    const [settled] = await row(ledger.db, payload);
    expect(settled?.state).toBe("settled");

    // Neither version can have it again.
    expect(await client.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await facilitator.settle(v2.payload, v2.requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
    });
  });

  it("refuses a v1 payment on a network it has no name for, another chain, or a mismatched one, in 4xx or isValid false", async () => {
    const payTo = newMerchant();
    const requirements = v1RequirementsFor(payTo, "500");
    const { payload } = await payV1(buyer(3), requirements);
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    const on = (network: string) => ({
      payload: { ...payload, network },
      requirements: { ...requirements, network },
    });
    const cases: { name: string; payload: unknown; requirements: unknown; message: RegExp }[] = [
      // Arbitrum One has no v1 name.
      { name: "arbitrum", ...on("arbitrum"), message: /"arbitrum" is not an x402 v1 network name/ },
      // A CAIP-2 id is v2's word.
      { name: "caip-2", ...on("eip155:8453"), message: /"eip155:8453" is not an x402 v1 network name/ },
      // Polygon is named in v1, but this facilitator settles on Base.
      { name: "polygon", ...on("polygon"), message: /network "polygon" \(eip155:137\) is not settled here/ },
      {
        name: "mismatch",
        payload,
        requirements: { ...requirements, network: "base-sepolia" },
        message: /paymentPayload.network "base" is not the requirements' "base-sepolia"/,
      },
    ];
    for (const c of cases) {
      const verified = await post("/verify", c.payload, c.requirements);
      expect([c.name, verified.status]).toEqual([c.name, 200]);
      expect(verified.body).toMatchObject({ isValid: false, invalidReason: reasons.INVALID_NETWORK });
      expect(verified.body.invalidMessage).toMatch(c.message);
      const settled = await post("/settle", c.payload, c.requirements);
      expect([c.name, settled.status]).toEqual([c.name, 200]);
      expect(settled.body).toMatchObject({
        success: false,
        errorReason: reasons.INVALID_NETWORK,
        transaction: "",
        // The request's own network name, as the SDK's v1 scheme answers.
        network: (c.payload as { network: string }).network,
      });
    }

    // Malformed v1 bodies: 400, never 5xx.
    const noAmount: Record<string, unknown> = { ...requirements };
    delete noAmount.maxAmountRequired;
    const malformed: [unknown, unknown, number, string][] = [
      [payload, noAmount, 400, reasons.INVALID_PAYMENT_REQUIREMENTS],
      [{ ...payload, payload: "nope" }, requirements, 400, reasons.INVALID_PAYLOAD],
      [{ ...payload, payload: { signature: "0x12" } }, requirements, 400, reasons.INVALID_PAYLOAD],
      [{ ...payload, scheme: "upto" }, { ...requirements, scheme: "upto" }, 200, reasons.UNSUPPORTED_SCHEME],
    ];
    for (const [p, r, status, reason] of malformed) {
      const verified = await post("/verify", p, r);
      expect([reason, verified.status]).toEqual([reason, status]);
      expect(verified.body).toMatchObject({ isValid: false, invalidReason: reason });
      const settled = await post("/settle", p, r);
      expect([reason, settled.status]).toEqual([reason, status]);
      expect(settled.body).toMatchObject({ success: false, errorReason: reason, network: "base" });
    }
    // A v1 payload under a v2 body, or the reverse, is not judged under the other's word.
    for (const [bodyVersion, p] of [
      [2, payload],
      [1, asV2(payload, payTo, "500").payload],
    ] as const) {
      const response = await fetch(`${served.url}/verify`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          x402Version: bodyVersion,
          paymentPayload: p,
          paymentRequirements: requirements,
        }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ invalidReason: reasons.INVALID_X402_VERSION });
    }
    // Nothing was sent or recorded; the payment itself is still good on its own network.
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce);
    expect(await row(ledger.db, payload)).toEqual([]);
    expect(await v1FacilitatorClient(served.url).verify(payload, requirements)).toMatchObject({
      isValid: true,
    });
  });

  it("lists v1's exact kind on base beside the v2 kinds, in a shape x402 1.2.0 reads", async () => {
    const supported = await v1FacilitatorClient(served.url).supported();
    const kinds = supported.kinds as { x402Version: number; scheme: string; network: string }[];
    expect(kinds).toContainEqual({ x402Version: 1, scheme: "exact", network: "base" });
    expect(kinds).toContainEqual({ x402Version: 2, scheme: "exact", network: "eip155:8453" });
    // The v1 kinds are the ones x402 1.2.0's schema admits; the v2 ones are for v2 clients.
    const v1 = kinds.filter((k) => SupportedPaymentKindSchema.safeParse(k).success);
    expect(v1).toEqual([{ x402Version: 1, scheme: "exact", network: "base" }]);
  });
});

describe("x402 v1 on a facilitator of several chains", () => {
  it("hands a v1 request to the chain its network's v1 name stands for", async () => {
    // Base is the file's facilitator; Polygon a stand-in that records what reaches it.
    const reached: string[] = [];
    const polygonApp = new Hono();
    polygonApp.post("/verify", (c) => {
      reached.push("http");
      return c.json({ isValid: false, invalidReason: "polygon_stand_in" });
    });
    const polygon: Facilitator = {
      ...facilitator,
      network: "eip155:137",
      app: polygonApp,
      verify: async () => {
        reached.push("in process");
        return { isValid: false, invalidReason: "polygon_stand_in" };
      },
    };
    const front = facilitatorOfChains([facilitator, polygon]);
    const requirements = v1RequirementsFor(newMerchant(), "600");
    const { payload } = await payV1(buyer(5), requirements);
    const body = (network: string) =>
      JSON.stringify({
        x402Version: 1,
        paymentPayload: { ...payload, network },
        paymentRequirements: { ...requirements, network },
      });
    const verify = async (network: string) =>
      (await front.app.request("/verify", { method: "POST", body: body(network) })).json();

    expect(await verify("polygon")).toEqual({ isValid: false, invalidReason: "polygon_stand_in" });
    expect(await verify("base")).toMatchObject({ isValid: true, payer: buyer(5).address });
    expect(
      await front.verify(
        { ...payload, network: "polygon" } as unknown as PaymentPayload,
        { ...requirements, network: "polygon" } as unknown as PaymentRequirements,
      ),
    ).toMatchObject({ invalidReason: "polygon_stand_in" });
    expect(reached).toEqual(["http", "in process"]);
  });
});

describe("the access rules on a v1 payment", () => {
  let closed: Facilitator;
  let closedDb: { db: Database; close(): Promise<void> };
  let url: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    // A facilitator of its own, closed, settling from another account than the file's open one.
    const key = generatePrivateKey();
    await fundedAccount(chain.devnet, { address: privateKeyToAccount(key).address, privateKey: key });
    closedDb = await openTestDatabase(LEDGER_KIND);
    closed = await devnetFacilitator(chain.devnet, closedDb.db, { privateKey: key, access: { open: false } });
    const listening = await listen(closed.app.fetch, "127.0.0.1", 0);
    url = listening.url;
    stop = listening.close;
  });
  afterAll(async () => {
    await stop?.();
    await closed?.close();
    await closedDb?.close();
  });

  it("refuses a payee without a key (401) or with another's (403), settles with its key and charges it", async () => {
    const payTo = newMerchant();
    const requirements: PaymentRequirementsV1 = v1RequirementsFor(payTo, "800");
    const { payload } = await payV1(buyer(4), requirements);
    const nonce = await usdc.nonceOf(closed.address);

    await expect(v1FacilitatorClient(url).verify(payload, requirements)).rejects.toMatchObject({
      statusCode: 401,
      invalidReason: reasons.PAYEE_NOT_ALLOWED,
    });
    await expect(v1FacilitatorClient(url).settle(payload, requirements)).rejects.toMatchObject({
      statusCode: 401,
      errorReason: reasons.PAYEE_NOT_ALLOWED,
      network: "base",
    });
    const { key: other } = await addKey(closedDb.db, {
      name: "another shop",
      payees: [newMerchant().toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 60,
    });
    await expect(v1FacilitatorClient(url, other).settle(payload, requirements)).rejects.toMatchObject({
      statusCode: 403,
      errorReason: reasons.PAYEE_NOT_ALLOWED,
    });
    expect(await usdc.nonceOf(closed.address)).toBe(nonce);

    const { key, apiKey } = await addKey(closedDb.db, {
      name: "v1 shop",
      payees: [payTo.toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 60,
    });
    const client = v1FacilitatorClient(url, key);
    expect(await client.verify(payload, requirements)).toMatchObject({ isValid: true });
    const settled = await client.settle(payload, requirements);
    expect(settled).toMatchObject({ success: true, network: "base" });
    expect(await usdc.balanceOf(payTo)).toBe(800n);
    const { rows } = await closedDb.db.query<{ key_id: string; state: string }>(
      "SELECT key_id, state FROM facilitator_key_charges WHERE tx_hash = $1",
      [settled.transaction.toLowerCase()],
    );
    expect(rows).toEqual([{ key_id: apiKey.id, state: "charged" }]);
  });
});
