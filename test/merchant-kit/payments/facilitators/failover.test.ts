/**
 * The failover's decisions, against facilitators that fail the ways `HTTPFacilitatorClient` reports
 * failures and a chain whose answers the test sets: which failures hand a payment on, which answers stand,
 * and that a settlement whose outcome one facilitator left unknown is handed on only once the chain says
 * the authorization is unused (never when it cannot say), and counts as settled only by its own transfer.
 */
import type { FacilitatorClient } from "@x402/core/server";
import {
  FacilitatorTimeoutError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SupportedResponse,
  VerifyError,
} from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { FailoverFacilitator } from "../../../../src/merchant-kit/payments/facilitators/failover.ts";
import { FacilitatorsUnavailableError } from "../../../../src/merchant-kit/payments/facilitators/list.ts";
import type {
  AuthorizationReader,
  ChainWord,
} from "../../../../src/merchant-kit/payments/facilitators/settled-on-chain.ts";

const NETWORK = "eip155:8453";
const PAYER = "0x1111111111111111111111111111111111111111";
const PAY_TO = "0x2222222222222222222222222222222222222222";
const ASSET = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const TX = `0x${"ab".repeat(32)}` as const;

const requirements: PaymentRequirements = {
  scheme: "exact",
  network: NETWORK,
  asset: ASSET,
  amount: "1000",
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2" },
};

let nonces = 0;
function payment(): PaymentPayload {
  const nonce = `0x${(++nonces).toString(16).padStart(64, "0")}`;
  return {
    x402Version: 2,
    resource: { url: "http://shop.test/api/echo" },
    accepted: requirements,
    payload: {
      signature: `0x${nonce.slice(2)}${"00".repeat(33)}`,
      authorization: {
        from: PAYER,
        to: PAY_TO,
        value: "1000",
        validAfter: "0",
        validBefore: "9999999999",
        nonce,
      },
    },
  } as PaymentPayload;
}

const SUPPORTED: SupportedResponse = {
  kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }],
  extensions: [],
  signers: {},
};

type Step = "ok" | "invalid" | Error;

/** A facilitator whose calls do what the test queued (then "ok"), counting them. */
function fake(
  name: string,
  steps: { verify?: Step[]; settle?: Step[]; supported?: SupportedResponse | Error } = {},
) {
  const calls = { verify: 0, settle: 0, supported: 0 };
  const next = (queue: Step[] | undefined) => queue?.shift() ?? "ok";
  const client: FacilitatorClient = {
    async getSupported() {
      calls.supported++;
      if (steps.supported instanceof Error) throw steps.supported;
      return steps.supported ?? SUPPORTED;
    },
    async verify() {
      calls.verify++;
      const step = next(steps.verify);
      if (step instanceof Error) throw step;
      return step === "ok"
        ? { isValid: true, payer: PAYER }
        : { isValid: false, invalidReason: "invalid_signature" };
    },
    async settle() {
      calls.settle++;
      const step = next(steps.settle);
      if (step instanceof Error) throw step;
      return step === "ok"
        ? { success: true, transaction: `0x${name.padEnd(64, "0")}`, network: NETWORK, payer: PAYER }
        : {
            success: false,
            errorReason: "invalid_exact_evm_nonce_already_used",
            transaction: "",
            network: NETWORK,
          };
    },
  };
  return { name, client, calls };
}

/** A chain that answers `words` in turn (the last one again), or cannot be read. */
function chain(...words: (ChainWord | Error)[]): AuthorizationReader & { reads: number } {
  const reader = {
    reads: 0,
    async read() {
      const word = words[Math.min(reader.reads++, words.length - 1)] as ChainWord | Error;
      if (word instanceof Error) throw word;
      return word;
    },
  };
  return reader;
}

const refused = () => Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
const dropped = () => Object.assign(new TypeError("fetch failed"), { cause: { code: "UND_ERR_SOCKET" } });
const status = (code: number) => new Error(`Facilitator settle failed (${code}): {"error":"x"}`);
const timeout = () => new FacilitatorTimeoutError("settle", 100);
const quiet = { log: () => undefined, settledGraceMs: 50, pollMs: 5 };

async function verifyThenSettle(failover: FailoverFacilitator, paid = payment()) {
  expect((await failover.verify(paid, requirements)).isValid).toBe(true);
  return failover.settle(paid, requirements);
}

describe("verify", () => {
  it.each([
    ["refused connection", refused()],
    ["503", new Error("Facilitator verify failed (503): down")],
    ["401 (credentials)", new VerifyError(401, { isValid: false, invalidReason: "unauthorized" })],
    ["429", new Error("Facilitator verify failed (429): slow down")],
    ["time-out", new FacilitatorTimeoutError("verify", 100)],
  ])("a facilitator that fails with %s hands the payment to the next", async (_, error) => {
    const a = fake("a", { verify: [error] });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], quiet);
    expect((await failover.verify(payment(), requirements)).isValid).toBe(true);
    expect([a.calls.verify, b.calls.verify]).toEqual([1, 1]);
  });

  it("an answer stands: an invalid payment or a judged 400 is not asked of the next", async () => {
    const a = fake("a", {
      verify: ["invalid", new VerifyError(400, { isValid: false, invalidReason: "invalid_payload" })],
    });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], quiet);
    expect((await failover.verify(payment(), requirements)).isValid).toBe(false);
    await expect(failover.verify(payment(), requirements)).rejects.toBeInstanceOf(VerifyError);
    expect(b.calls.verify).toBe(0);
  });

  it("with every facilitator failing, says what each said, naming the credentials a refusal concerns", async () => {
    const a = { ...fake("http://a", { verify: [refused()] }) };
    const b = {
      ...fake("http://b", { verify: [new VerifyError(401, { isValid: false, invalidReason: "bad_jwt" })] }),
      credentials: "CDP_API_KEY_ID and CDP_API_KEY_SECRET",
    };
    const failover = new FailoverFacilitator([a, b], quiet);
    const error = await failover.verify(payment(), requirements).then(
      () => new Error("no error"),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(FacilitatorsUnavailableError);
    expect(error.message).toMatch(/http:\/\/a: fetch failed \(ECONNREFUSED\)/);
    expect(error.message).toMatch(
      /http:\/\/b: refused the merchant's credentials, check CDP_API_KEY_ID and CDP_API_KEY_SECRET \(401/,
    );
  });

  it("a facilitator that failed is tried last for a while, and first again once it answers", async () => {
    const a = fake("a", { verify: [refused()] });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], { ...quiet, restMs: 60_000 });
    await failover.verify(payment(), requirements);
    await failover.verify(payment(), requirements);
    expect([a.calls.verify, b.calls.verify]).toEqual([1, 2]);
    // A success elsewhere (its /supported answering) ends its rest.
    await failover.getSupported();
    await failover.verify(payment(), requirements);
    expect([a.calls.verify, b.calls.verify]).toEqual([2, 2]);
  });
});

describe("settle", () => {
  it("goes to the facilitator that verified the payment", async () => {
    const a = fake("a", { verify: [refused()] });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], quiet);
    const answer = await verifyThenSettle(failover);
    expect(answer.success).toBe(true);
    expect([a.calls.settle, b.calls.settle, b.calls.verify]).toEqual([0, 1, 1]);
  });

  it("handed on after a failure that changed nothing (refused, 401, 429), the next verifies it first", async () => {
    for (const error of [
      refused(),
      new SettleError(401, { success: false, transaction: "", network: NETWORK }),
      status(429),
    ]) {
      const a = fake("a", { settle: [error] });
      const b = fake("b");
      const reader = chain({ state: "unused" });
      const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader });
      expect((await verifyThenSettle(failover)).success).toBe(true);
      expect([a.calls.settle, b.calls.verify, b.calls.settle, reader.reads]).toEqual([1, 1, 1, 0]);
    }
  });

  it.each([
    ["a time-out", timeout],
    ["a dropped connection", dropped],
    ["a 500", () => status(500)],
    ["a 503", () => status(503)],
  ])(
    "after %s, a payment the chain shows settled is settled, by that transaction: the next is never asked",
    async (_, error) => {
      const a = fake("a", { settle: [error()] });
      const b = fake("b");
      const reader = chain({ state: "settled", hash: TX });
      const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader });
      const answer = await verifyThenSettle(failover);
      expect(answer).toMatchObject({ success: true, transaction: TX, payer: PAYER, network: NETWORK });
      expect([b.calls.verify, b.calls.settle]).toEqual([0, 0]);
    },
  );

  it("after a time-out, an authorization used without this payment's transfer fails: nothing is handed on", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], { ...quiet, chain: chain({ state: "elsewhere" }) });
    const answer = await verifyThenSettle(failover);
    expect(answer).toMatchObject({ success: false, errorReason: "invalid_exact_evm_nonce_already_used" });
    expect(b.calls.settle).toBe(0);
  });

  it("after a time-out, a chain that cannot be read, or no chain, leaves the outcome unknown: nothing is handed on", async () => {
    for (const reader of [chain(new Error("rpc down")), undefined, chain({ state: "unknown" })]) {
      const a = fake("a", { settle: [timeout()] });
      const b = fake("b");
      const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader });
      await expect(verifyThenSettle(failover)).rejects.toThrow(/outcome is unknown/);
      expect([b.calls.verify, b.calls.settle]).toEqual([0, 0]);
    }
  });

  it("after a time-out, an authorization the chain still shows unused once the grace is over goes to the next", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b");
    const reader = chain({ state: "unused" });
    const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader });
    expect((await verifyThenSettle(failover)).success).toBe(true);
    // Watched more than once: the first facilitator's transaction had the grace to appear.
    expect(reader.reads).toBeGreaterThan(1);
    expect([b.calls.verify, b.calls.settle]).toEqual([1, 1]);
  });

  it("handed on, a refusal from the next while the first one's transaction landed meanwhile is a settlement", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b", { settle: ["invalid"] });
    const failover = new FailoverFacilitator([a, b], {
      ...quiet,
      chain: chain({ state: "unused" }, { state: "settled", hash: TX }),
      settledGraceMs: 0,
    });
    expect(await verifyThenSettle(failover)).toMatchObject({ success: true, transaction: TX });
    expect(b.calls.settle).toBe(1);
  });

  it("after a time-out, an authorization the chain shows used before its transaction is found is read again until it is: a settlement", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b");
    const reader = chain({ state: "unused" }, { state: "unknown" }, { state: "settled", hash: TX });
    const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader, settledGraceMs: 1_000 });
    expect(await verifyThenSettle(failover)).toMatchObject({ success: true, transaction: TX });
    expect(reader.reads).toBe(3);
    expect(b.calls.settle).toBe(0);
  });

  it("handed on and refused, an authorization the chain shows used is read again past a short grace until its transaction is found", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b", { settle: ["invalid"] });
    // The first facilitator's transaction lands while the next one refuses; its logs show a read later.
    const reader = chain(
      { state: "unused" },
      { state: "unknown" },
      { state: "unknown" },
      { state: "settled", hash: TX },
    );
    const failover = new FailoverFacilitator([a, b], { ...quiet, chain: reader, settledGraceMs: 0 });
    expect(await verifyThenSettle(failover)).toMatchObject({ success: true, transaction: TX });
    expect(reader.reads).toBe(4);
  });

  it("an upto payment (Permit2, not readable as an EIP-3009 authorization) is never handed on after a time-out", async () => {
    const a = fake("a", { settle: [timeout()] });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], { ...quiet, chain: chain({ state: "unused" }) });
    const upto = { ...requirements, scheme: "upto" };
    const supported = { ...SUPPORTED, kinds: [{ x402Version: 2, scheme: "upto", network: NETWORK }] };
    Object.assign(a.client, { getSupported: async () => supported });
    Object.assign(b.client, { getSupported: async () => supported });
    const paid = { ...payment(), payload: { signature: "0x01", permit2Authorization: {} } } as PaymentPayload;
    await expect(failover.settle(paid, upto)).rejects.toThrow(/outcome is unknown/);
    expect(b.calls.settle).toBe(0);
  });
});

describe("supported", () => {
  it("merges the facilitators' kinds, the first listing a kind giving it, and routes a pinned payment to its signer", async () => {
    const upto = (address: string): SupportedResponse => ({
      kinds: [
        { x402Version: 2, scheme: "exact", network: NETWORK },
        { x402Version: 2, scheme: "upto", network: NETWORK, extra: { facilitatorAddress: address } },
      ],
      extensions: ["bazaar"],
      signers: { "eip155:*": [address] },
    });
    const a = fake("a", { supported: upto("0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") });
    const b = fake("b", { supported: upto("0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb") });
    const failover = new FailoverFacilitator([a, b], quiet);
    const merged = await failover.getSupported();
    expect(merged.kinds.map((k) => k.scheme)).toEqual(["exact", "upto"]);
    expect(merged.kinds[1]?.extra?.facilitatorAddress).toBe("0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    expect(merged.signers["eip155:*"]).toHaveLength(2);
    // A payment signed for b's signer is b's alone, whatever the order.
    const pinned = {
      ...requirements,
      scheme: "upto",
      extra: { facilitatorAddress: "0xBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
    };
    expect((await failover.verify(payment(), pinned)).isValid).toBe(true);
    expect([a.calls.verify, b.calls.verify]).toEqual([0, 1]);
  });

  it("answers while one facilitator answers; fails naming each when none does", async () => {
    const a = fake("http://a", { supported: refused() });
    const b = fake("http://b");
    expect((await new FailoverFacilitator([a, b], quiet).getSupported()).kinds).toHaveLength(1);
    const c = fake("http://c", { supported: new Error("Facilitator getSupported failed (500): x") });
    await expect(new FailoverFacilitator([a, c], quiet).getSupported()).rejects.toThrow(
      /no facilitator answered \/supported: http:\/\/a: .*ECONNREFUSED.*; http:\/\/c: .*500/,
    );
  });

  it("a facilitator that lists no such kind is never asked to verify it", async () => {
    const a = fake("a", {
      supported: {
        kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:1" }],
        extensions: [],
        signers: {},
      },
    });
    const b = fake("b");
    const failover = new FailoverFacilitator([a, b], quiet);
    await failover.getSupported();
    await failover.verify(payment(), requirements);
    expect([a.calls.verify, b.calls.verify]).toEqual([0, 1]);
  });
});
