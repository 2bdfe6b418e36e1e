/**
 * The facilitator's access control (docs/facilitator.md, "Access control"): the key store's statements on
 * each database kind, under concurrent callers; the decision at start; and the HTTP face refusing in the
 * x402 facilitator's own shapes, before anything is read from the chain or signed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { parseEther } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type Devnet, startDevnet } from "../../src/chain/devnet/index.ts";
import { type Database, migrate } from "../../src/common/db/index.ts";
import {
  addKey,
  countLiveKeys,
  decideOpen,
  isLoopback,
  listKeys,
  revokeKey,
} from "../../src/facilitator/access/index.ts";
import {
  endReservation,
  findKey,
  hashKey,
  reserveGas,
  takeRateToken,
} from "../../src/facilitator/access/keys.ts";
import { secondsToNextUtcDay } from "../../src/facilitator/access/units.ts";
import { FACILITATOR_MIGRATIONS, type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { loadConfig } from "../../src/services/config.ts";
import { startMiner } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

const BASE = "eip155:8453";
const POLYGON = "eip155:137";

const authorization = (nonce: number, network = BASE) => ({
  network,
  asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
  payer: "0x1111111111111111111111111111111111111111",
  nonce: `0x${nonce.toString(16).padStart(64, "0")}`,
});

describe.each(DATABASE_KINDS)("the key store (on %s)", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
  });
  afterAll(async () => {
    await close?.();
  });

  it("keeps only a key's hash, finds it by what a request sends, and forgets it once revoked", async () => {
    const payee = newMerchant().toLowerCase();
    const { key, apiKey } = await addKey(db, {
      name: "shop",
      payees: [payee],
      gasBudgetWei: parseEther("0.01"),
      ratePerMinute: 10,
    });
    expect(key).toMatch(/^x402m_[A-Za-z0-9_-]{43}$/);
    const { rows } = await db.query<Record<string, unknown>>(
      "SELECT * FROM facilitator_api_keys WHERE id = $1",
      [apiKey.id],
    );
    expect(rows[0]?.key_hash).toBe(hashKey(key));
    expect(JSON.stringify(rows[0])).not.toContain(key.slice(6));

    expect(await findKey(db, key, BASE)).toMatchObject({
      id: apiKey.id,
      payees: [payee],
      usedWei: 0n,
      tokens: 10,
    });
    expect(await findKey(db, `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`, BASE)).toBeUndefined();
    expect(await findKey(db, "not a key", BASE)).toBeUndefined();

    const live = await countLiveKeys(db);
    expect(await revokeKey(db, apiKey.id)).toBe("revoked");
    expect(await revokeKey(db, apiKey.id)).toBe("already revoked");
    expect(await revokeKey(db, "k_nope")).toBe("unknown");
    expect(await findKey(db, key, BASE)).toBeUndefined();
    expect(await countLiveKeys(db)).toBe(live - 1);
    const listed = (await listKeys(db)).find((k) => k.id === apiKey.id);
    expect(listed).toMatchObject({ name: "shop", revokedAt: expect.any(Date), spentWei: 0n });
  });

  it("counts a key's gas per chain, against its budget there: the key's, or its own for that chain", async () => {
    const wei = 1_000_000_000_000n;
    const { key, apiKey } = await addKey(db, {
      name: "two chains",
      payees: null,
      gasBudgetWei: wei * 2n,
      chainGasBudgetsWei: { [POLYGON]: wei * 3n },
      ratePerMinute: 1000,
    });
    expect(apiKey.chainGasBudgetsWei).toEqual({ [POLYGON]: wei * 3n });
    // Base's day holds two, Polygon's three, in its own coin: a full Base day leaves Polygon's whole.
    const on = (network: string, from: number, n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) => reserveGas(db, apiKey.id, authorization(from + i, network), wei)),
      );
    expect((await on(BASE, 5000, 4)).filter(Boolean)).toHaveLength(2);
    const onPolygon = await on(POLYGON, 6000, 5);
    expect(onPolygon.filter(Boolean)).toHaveLength(3);
    expect(await findKey(db, key, BASE)).toMatchObject({ usedWei: wei * 2n, budgetWei: wei * 2n });
    expect(await findKey(db, key, POLYGON)).toMatchObject({ usedWei: wei * 3n, budgetWei: wei * 3n });
    // A chain without a day yet has its whole budget.
    expect(await findKey(db, key, "eip155:42161")).toMatchObject({ usedWei: 0n, budgetWei: wei * 2n });
    // Ending a Polygon reservation (one of those granted, whichever they were) moves Polygon's day alone.
    const granted = 6000 + onPolygon.findIndex(Boolean);
    await endReservation(db, authorization(granted, POLYGON), {
      charged: wei / 2n,
      txHash: `0x${"cd".repeat(32)}`,
    });
    const listed = (await listKeys(db)).find((k) => k.id === apiKey.id);
    expect(listed?.chains).toEqual({
      [BASE]: { spentWei: 0n, reservedWei: wei * 2n, settlements: 0n },
      [POLYGON]: { spentWei: wei / 2n, reservedWei: wei * 2n, settlements: 1n },
    });
  });

  it("never reserves beyond a key's budget, whatever the number of concurrent reservations", async () => {
    const worst = 1_000_000_000_000n; // 1e12 wei per settlement
    const { apiKey } = await addKey(db, {
      name: "budget",
      payees: null,
      gasBudgetWei: worst * 7n + worst / 2n,
      ratePerMinute: 1000,
    });
    const attempts = await Promise.all(
      Array.from({ length: 40 }, (_, i) => reserveGas(db, apiKey.id, authorization(1000 + i), worst)),
    );
    const granted = attempts.filter((a) => a !== undefined);
    expect(granted).toHaveLength(7);
    const day = async () =>
      (await listKeys(db)).find((k) => k.id === apiKey.id) as Awaited<ReturnType<typeof listKeys>>[0];
    expect(await day()).toMatchObject({ reservedWei: worst * 7n, spentWei: 0n });

    // Each settles to what its receipt says (less than reserved), or is released; then there is room again.
    const indexes = attempts.flatMap((a, i) => (a ? [i] : []));
    await Promise.all(
      indexes.map((i, n) =>
        endReservation(
          db,
          authorization(1000 + i),
          n % 2 === 0 ? { charged: worst / 4n, txHash: `0x${"ab".repeat(32)}` } : "released",
        ),
      ),
    );
    // Ending twice changes nothing.
    expect(await endReservation(db, authorization(1000 + (indexes[0] as number)), "released")).toBe(false);
    const after = await day();
    expect(after).toMatchObject({ reservedWei: 0n, spentWei: (worst / 4n) * 4n, settlements: 4n });
    // 6.5 worst cases left: 6 more fit, concurrently, and not a 7th.
    const more = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reserveGas(db, apiKey.id, authorization(2000 + i), worst)),
    );
    expect(more.filter((a) => a !== undefined)).toHaveLength(6);
    // A revoked key reserves nothing.
    await revokeKey(db, apiKey.id);
    expect(await reserveGas(db, apiKey.id, authorization(3000), 1n)).toBeUndefined();
  });

  it("gives a key's rate to as many concurrent settlements as it has tokens, and says when the next comes", async () => {
    const { apiKey } = await addKey(db, {
      name: "rate",
      payees: null,
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 5,
    });
    const taken = await Promise.all(Array.from({ length: 30 }, () => takeRateToken(db, apiKey.id)));
    expect(taken.filter((wait) => wait === undefined)).toHaveLength(5);
    const waits = taken.filter((wait): wait is number => wait !== undefined);
    expect(waits).toHaveLength(25);
    // One token every 12 s at 5 a minute.
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(12);
    }
  });
});

describe("the facilitator's settings", () => {
  it("reads the allow-list from X402M_FACILITATOR_PAYEES, lower-case, and refuses what is not an address", () => {
    const a = newMerchant();
    const b = newMerchant();
    expect(loadConfig({ env: { X402M_FACILITATOR_PAYEES: ` ${a}, ${b} ,` } }).facilitatorPayees).toEqual([
      a.toLowerCase(),
      b.toLowerCase(),
    ]);
    expect(loadConfig({ env: {} }).facilitatorPayees).toEqual([]);
    expect(() => loadConfig({ env: { X402M_FACILITATOR_PAYEES: `${a},0x12` } })).toThrow(
      /invalid X402M_FACILITATOR_PAYEES: wallet addresses separated by commas/,
    );
  });

  it("reads the signing key from a file, trimmed; refuses both settings, or a file that is not a key, without its content", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-key-"));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const key = generatePrivateKey();
    const file = path.join(dir, "key");
    fs.writeFileSync(file, `\n ${key} \n`);
    expect(loadConfig({ env: { X402M_FACILITATOR_KEY_FILE: file } }).facilitatorKey).toBe(key);
    expect(() =>
      loadConfig({ env: { X402M_FACILITATOR_KEY_FILE: file, X402M_FACILITATOR_KEY: key } }),
    ).toThrow(/pick one/);
    fs.writeFileSync(file, "hunter2-secret");
    const refusal = (() => {
      try {
        loadConfig({ env: { X402M_FACILITATOR_KEY_FILE: file } });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(refusal).toMatch(/X402M_FACILITATOR_KEY_FILE: .* must hold a 32-byte private key/);
    expect(refusal).not.toContain("hunter2");
  });
});

describe("the decision at start", () => {
  const base = { host: "127.0.0.1", configuredPayees: [], inProcessPayees: [], liveKeys: 0, open: false };
  it("keeps loopback open unless the operator set up an allow-list or keys", () => {
    expect(decideOpen(base)).toEqual({ open: true });
    expect(decideOpen({ ...base, inProcessPayees: ["0xa"] })).toEqual({ open: true });
    expect(decideOpen({ ...base, configuredPayees: ["0xa"] })).toEqual({ open: false });
    expect(decideOpen({ ...base, liveKeys: 1 })).toEqual({ open: false });
    for (const host of ["127.0.0.1", "::1", "[::1]", "localhost", "127.1.2.3"])
      expect(isLoopback(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "example.com"]) expect(isLoopback(host)).toBe(false);
  });

  it("refuses an open facilitator beyond loopback unless --open, and closes it on whatever was set up", () => {
    const wide = { ...base, host: "0.0.0.0" };
    const refused = decideOpen(wide);
    expect(refused).toEqual({ refused: expect.stringMatching(/--open/) });
    expect((refused as { refused: string }).refused).not.toContain("\n");
    expect(decideOpen({ ...wide, open: true })).toEqual({ open: true });
    expect(decideOpen({ ...wide, liveKeys: 2 })).toEqual({ open: false });
    expect(decideOpen({ ...wide, configuredPayees: ["0xa"] })).toEqual({ open: false });
    expect(decideOpen({ ...wide, inProcessPayees: ["0xa"] })).toEqual({ open: false });
  });

  it("decides a loopback facilitator behind a reverse proxy as one beyond loopback", () => {
    const proxied = { ...base, behindProxy: true };
    const refused = decideOpen(proxied);
    expect(refused).toEqual({
      refused: expect.stringMatching(/behind a proxy \(X402M_TRUSTED_PROXIES\).*--open/),
    });
    expect(decideOpen({ ...proxied, open: true })).toEqual({ open: true });
    expect(decideOpen({ ...proxied, liveKeys: 1 })).toEqual({ open: false });
    expect(decideOpen({ ...proxied, inProcessPayees: ["0xa"] })).toEqual({ open: false });
  });

  it("counts the seconds to the next UTC day", () => {
    expect(secondsToNextUtcDay(new Date("2026-01-01T23:59:30Z"))).toBe(30);
    expect(secondsToNextUtcDay(new Date("2026-01-01T00:00:00Z"))).toBe(86_400);
  });
});

describe("the HTTP face of a closed facilitator", () => {
  let devnet: Devnet;
  let miner: ReturnType<typeof startMiner>;
  let db: Database;
  let close: () => Promise<void>;
  let facilitator: Facilitator;
  const allowed = newMerchant();

  beforeAll(async () => {
    devnet = await startDevnet({ port: 0, buyers: 2, blockTime: 0 });
    miner = startMiner(devnet);
    ({ db, close } = await openTestDatabase("pglite"));
    facilitator = await devnetFacilitator(devnet, db, { access: { open: false, payees: [allowed] } });
  }, 60_000);
  afterAll(async () => {
    await facilitator?.close();
    await close?.();
    await miner?.stop();
    await devnet?.stop();
  });

  const post = (path: string, body: unknown, key?: string) =>
    facilitator.app.request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
  const request = (payload: PaymentPayload, requirements: PaymentRequirements) => ({
    x402Version: 2,
    paymentPayload: payload,
    paymentRequirements: requirements,
  });
  const buyer = () => devnet.buyers[0] as Devnet["buyers"][0];

  it("serves an allow-listed payee to anyone, without a key", async () => {
    const requirements = requirementsFor(allowed, "1000");
    const payment = await pay(buyer(), requirements);
    expect(await (await post("/verify", request(payment, requirements))).json()).toMatchObject({
      isValid: true,
    });
    expect(await (await post("/settle", request(payment, requirements))).json()).toMatchObject({
      success: true,
    });
  });

  it("refuses another payee without a key (401), with an unknown key (401), or a key for others (403)", async () => {
    const payee = newMerchant();
    const requirements = requirementsFor(payee, "1000");
    const payment = await pay(buyer(), requirements);
    const nonce = await usdcReader(devnet.rpc).nonceOf(devnet.facilitatorAccount.address);

    const noKey = await post("/verify", request(payment, requirements));
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({
      isValid: false,
      invalidReason: reasons.PAYEE_NOT_ALLOWED,
      invalidMessage: `payee ${payee.toLowerCase()} is not on this facilitator's allow-list; send an API key that allows it (Authorization: Bearer <key>, see docs/facilitator.md)`,
    });
    const settleNoKey = await post("/settle", request(payment, requirements));
    expect(settleNoKey.status).toBe(401);
    expect(await settleNoKey.json()).toMatchObject({
      success: false,
      errorReason: reasons.PAYEE_NOT_ALLOWED,
      errorMessage: expect.stringContaining(payee.toLowerCase()),
      transaction: "",
      network: "eip155:8453",
    });

    for (const bad of [`x402m_${"A".repeat(43)}`, "garbage"]) {
      const unknown = await post("/verify", request(payment, requirements), bad);
      expect(unknown.status).toBe(401);
      expect(await unknown.json()).toMatchObject({ isValid: false, invalidReason: reasons.API_KEY_INVALID });
    }
    const malformed = await facilitator.app.request("/verify", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Basic dXNlcjpwYXNz" },
      body: JSON.stringify(request(payment, requirements)),
    });
    expect(malformed.status).toBe(401);

    const { key: other, apiKey } = await addKey(db, {
      name: "another shop",
      payees: [newMerchant().toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 60,
    });
    const wrongPayee = await post("/settle", request(payment, requirements), other);
    expect(wrongPayee.status).toBe(403);
    expect(await wrongPayee.json()).toMatchObject({
      success: false,
      errorReason: reasons.PAYEE_NOT_ALLOWED,
      errorMessage: expect.stringContaining(`API key ${apiKey.id} does not allow payee`),
      transaction: "",
    });
    // Nothing was sent, nothing was verified.
    expect(await usdcReader(devnet.rpc).nonceOf(devnet.facilitatorAccount.address)).toBe(nonce);
    const { rows } = await db.query("SELECT 1 FROM facilitator_authorizations WHERE pay_to = $1", [
      payee.toLowerCase(),
    ]);
    expect(rows).toHaveLength(0);
  });

  it("settles with a key that allows the payee, charges its gas from the receipt, and stops at revocation", async () => {
    const payee = newMerchant();
    const { key, apiKey } = await addKey(db, {
      name: "partner",
      payees: [payee.toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 60,
    });
    const requirements = requirementsFor(payee, "1200");
    const payment = await pay(buyer(), requirements);
    expect(await (await post("/verify", request(payment, requirements), key)).json()).toMatchObject({
      isValid: true,
    });
    const settled = await post("/settle", request(payment, requirements), key);
    const body = (await settled.json()) as { success: boolean; transaction: `0x${string}` };
    expect(body.success).toBe(true);
    expect(await usdcReader(devnet.rpc).balanceOf(payee)).toBe(1200n);

    const receipt = await usdcReader(devnet.rpc).receipt(body.transaction);
    const usage = (await listKeys(db)).find((k) => k.id === apiKey.id);
    expect(usage).toMatchObject({
      spentWei: receipt.gasUsed * receipt.effectiveGasPrice,
      reservedWei: 0n,
      settlements: 1n,
    });
    const { rows } = await db.query<{ state: string; reserved_wei: string; charged_wei: string }>(
      "SELECT state, reserved_wei, charged_wei FROM facilitator_key_charges WHERE tx_hash = $1",
      [body.transaction.toLowerCase()],
    );
    expect(rows[0]?.state).toBe("charged");
    // The reservation was the worst case: at least what it cost.
    expect(BigInt(rows[0]?.reserved_wei ?? 0)).toBeGreaterThanOrEqual(BigInt(rows[0]?.charged_wei ?? 0));

    await revokeKey(db, apiKey.id);
    const again = await pay(buyer(), requirements);
    const revoked = await post("/verify", request(again, requirements), key);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ invalidReason: reasons.API_KEY_INVALID });
  });

  it("keeps /supported, /healthz and /discovery/resources open", async () => {
    for (const path of ["/supported", "/healthz", "/discovery/resources"]) {
      expect((await facilitator.app.request(path)).status).toBe(200);
    }
  });

  it("refuses a key whose day is spent with 429 and Retry-After until 00:00 UTC, at verify already", async () => {
    const payee = newMerchant();
    const { key, apiKey } = await addKey(db, {
      name: "spent",
      payees: [payee.toLowerCase()],
      gasBudgetWei: 1000n,
      ratePerMinute: 60,
    });
    await reserveGas(db, apiKey.id, authorization(9000), 1000n);
    const requirements = requirementsFor(payee, "1000");
    const payment = await pay(buyer(), requirements);
    const refused = await post("/verify", request(payment, requirements), key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({
      isValid: false,
      invalidReason: reasons.KEY_OVER_BUDGET,
      invalidMessage: expect.stringMatching(/gas budget for today/),
    });
  });
});
