/**
 * One API key, many settlements at once, on a devnet: the key's gas budget and its settlement rate hold
 * whatever the concurrency, and what they refuse is refused before anything is signed (no transaction
 * leaves the facilitator's account for it, its authorization stays usable).
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Devnet } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { addKey, listKeys } from "../../src/facilitator/access/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { useDevnet } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 4 });

describe.each(DATABASE_KINDS)("one key, many settlements at once (ledger on %s)", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  let facilitator: Facilitator;
  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    // Closed: no allow-list, every payee needs a key.
    facilitator = await devnetFacilitator(chain.devnet, db, { access: { open: false } });
  });
  afterAll(async () => {
    await facilitator?.close();
    await close?.();
  });

  const post = async (
    path: string,
    key: string,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ) => {
    const response = await facilitator.app.request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  /** `count` payments to `payee`, from the devnet's buyers in turn, each verified with `key`. */
  async function verified(key: string, payee: `0x${string}`, count: number) {
    const requirements = requirementsFor(payee, "1000");
    const payments = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        pay(chain.devnet.buyers[i % chain.devnet.buyers.length] as Devnet["buyers"][0], requirements),
      ),
    );
    for (const payment of payments) {
      expect((await post("/verify", key, payment, requirements)).body).toMatchObject({ isValid: true });
    }
    return { requirements, payments };
  }

  async function ledgerStates(payments: PaymentPayload[]) {
    const nonces = payments.map(
      (p) => (p.payload as { authorization: { nonce: string } }).authorization.nonce,
    );
    const { rows } = await db.query<{ nonce: string; state: string }>(
      "SELECT nonce, state FROM facilitator_authorizations WHERE nonce = ANY(string_to_array($1, ','))",
      [nonces.join(",")],
    );
    return new Map(rows.map((r) => [r.nonce, r.state]));
  }

  it("never lets the key's spent and reserved gas pass its budget, and refuses the rest before signing", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    // One settlement first, to learn what its worst case (gas limit x max fee) is on this chain now.
    const probePayee = newMerchant();
    const probe = await addKey(db, {
      name: "probe",
      payees: [probePayee.toLowerCase()],
      gasBudgetWei: parseEther("10"),
      ratePerMinute: 1000,
    });
    const first = await verified(probe.key, probePayee, 1);
    const firstPayment = first.payments[0] as PaymentPayload;
    expect((await post("/settle", probe.key, firstPayment, first.requirements)).body).toMatchObject({
      success: true,
    });
    const { rows } = await db.query<{ reserved_wei: string }>(
      "SELECT reserved_wei FROM facilitator_key_charges WHERE key_id = $1",
      [probe.apiKey.id],
    );
    const worst = BigInt(rows[0]?.reserved_wei ?? 0);
    expect(worst).toBeGreaterThan(0n);

    // Room for three and a half worst cases; twelve settlements at once.
    const budget = (worst * 7n) / 2n;
    const payee = newMerchant();
    const { key, apiKey } = await addKey(db, {
      name: "budget",
      payees: [payee.toLowerCase()],
      gasBudgetWei: budget,
      ratePerMinute: 1000,
    });
    const { requirements, payments } = await verified(key, payee, 12);
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    // What the key's day holds, read over and over while the settlements run.
    let highest = 0n;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows: days } = await db.query<{ spent_wei: string; reserved_wei: string }>(
          "SELECT spent_wei, reserved_wei FROM facilitator_key_days WHERE key_id = $1",
          [apiKey.id],
        );
        for (const d of days) {
          const used = BigInt(d.spent_wei) + BigInt(d.reserved_wei);
          if (used > highest) highest = used;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const answers = await Promise.all(payments.map((p) => post("/settle", key, p, requirements)));
    sampling = false;
    await sampler;

    const settled = answers.filter((a) => a.body.success === true);
    const refused = answers.filter((a) => a.body.success !== true);
    expect(settled.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(answer.body).toMatchObject({
        success: false,
        errorReason: reasons.KEY_OVER_BUDGET,
        errorMessage: expect.stringMatching(new RegExp(`API key ${apiKey.id} (cannot cover|has used)`)),
        transaction: "",
      });
    }
    expect(highest).toBeLessThanOrEqual(budget);
    const day = (await listKeys(db)).find((k) => k.id === apiKey.id);
    expect(day?.reservedWei).toBe(0n);
    expect(day?.spentWei).toBeLessThanOrEqual(budget);
    expect(day?.settlements).toBe(BigInt(settled.length));

    // One transaction per settlement, none for a refusal; the refused authorizations are still usable.
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent + settled.length);
    expect(await usdc.balanceOf(payee)).toBe(1000n * BigInt(settled.length));
    const states = await ledgerStates(payments);
    const byState = [...states.values()].reduce<Record<string, number>>(
      (n, s) => Object.assign(n, { [s]: (n[s] ?? 0) + 1 }),
      {},
    );
    expect(byState).toEqual({ settled: settled.length, verified: refused.length });
  }, 60_000);

  it("gives the key's rate to as many concurrent settlements as it allows, with 429 and Retry-After for the rest", async () => {
    const usdc = usdcReader(chain.devnet.rpc);
    const payee = newMerchant();
    const { key, apiKey } = await addKey(db, {
      name: "rate",
      payees: [payee.toLowerCase()],
      gasBudgetWei: parseEther("10"),
      ratePerMinute: 4,
    });
    const { requirements, payments } = await verified(key, payee, 10);
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    const started = Date.now();
    const answers = await Promise.all(payments.map((p) => post("/settle", key, p, requirements)));
    // A token every 15 s: any that came back while this ran could have been taken.
    const refilled = Math.floor((Date.now() - started) / 15_000);

    const settled = answers.filter((a) => a.body.success === true);
    const refused = answers.filter((a) => a.body.success !== true);
    expect(settled.length).toBeGreaterThanOrEqual(4);
    expect(settled.length).toBeLessThanOrEqual(4 + refilled);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      const wait = Number(answer.retryAfter);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(15);
      expect(answer.body).toMatchObject({
        success: false,
        errorReason: reasons.KEY_OVER_RATE,
        errorMessage: `API key ${apiKey.id} has used its 4 settlements a minute; try again in ${wait} s`,
        transaction: "",
        network: "eip155:8453",
      });
    }
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent + settled.length);
    const states = await ledgerStates(payments);
    expect([...states.values()].filter((s) => s === "verified")).toHaveLength(refused.length);

    // A /verify says the same while the bucket is empty, and takes nothing.
    if (refilled === 0) {
      const more = await pay(chain.devnet.buyers[0] as Devnet["buyers"][0], requirements);
      const verify = await post("/verify", key, more, requirements);
      expect(verify.status).toBe(429);
      expect(verify.body).toMatchObject({ isValid: false, invalidReason: reasons.KEY_OVER_RATE });
    }
  }, 60_000);
});
