/**
 * Malformed and oversized extensions in a payment, sent to a kit merchant in process (issue 83): what a buyer
 * writes into `payment-identifier` is refused 400 or judged by the route's declaration, and no schema it carries
 * is compiled (one with a backtracking `pattern` held the host's event loop for seconds, unpaid); what it writes
 * into the other extensions it echoes (`offer-receipt`, `bazaar`, `sign-in-with-x`, one the route never declared)
 * is refused as a payment that does not verify. Never a 5xx, nothing logged at error level, nothing stored. The
 * merchant's facilitator refuses every payment, so nothing here is charged: a paid retry's id is tested end to
 * end on a devnet (payment-identifier.test.ts).
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { PAYMENT_IDENTIFIER, paymentIdentifierSchema } from "@x402/extensions/payment-identifier";
import { Ajv2020 } from "ajv/dist/2020.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { Listening } from "../../../../src/common/listen.ts";
import { defineEndpoint } from "../../../../src/merchant-kit/endpoint.ts";
import { LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
import { capturedLogLines } from "../../../helpers/log.ts";
import { echo, refusingFacilitator, startMerchant, testMerchant } from "../../../helpers/merchant.ts";
import { NETWORK, newMerchant } from "../../../helpers/x402.ts";

const day = defineEndpoint({
  method: "GET",
  path: "/api/day/:name",
  price: "0.003",
  accessSeconds: 86_400,
  accessCalls: 3,
  description: "A day per name.",
  input: z.object({ name: z.string() }),
  output: z.object({ ok: z.boolean() }),
  example: { input: { name: "alpha" }, output: { ok: true } },
  handler: async () => ({ ok: true }),
});

let state: Awaited<ReturnType<typeof openTestDatabase>>;
let host: Listening;

beforeAll(async () => {
  state = await openTestDatabase(LEDGER_KIND);
  // With a receipt key: its 402s carry signed offers, which a payment echoes.
  host = await startMerchant(
    (url) => ({
      ...testMerchant(newMerchant(), url, [echo, day]),
      receiptSigner: privateKeyToAccount(generatePrivateKey()),
    }),
    state.db,
    refusingFacilitator,
  );
}, 60_000);
afterAll(async () => {
  await host?.close();
  await state?.close();
});

/** A payment the SDK's client signs for the route's 402, echoing its extensions. */
async function payment(path: string): Promise<PaymentPayload> {
  const answer = await fetch(`${host.url}${path}`);
  const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
  const wallet = privateKeyToAccount(generatePrivateKey());
  return new x402Client().register(NETWORK, new ExactEvmScheme(wallet)).createPaymentPayload(required);
}

/** Stands for arrays nested `depth` deep, written into the JSON as text: deeper than `JSON.stringify` writes. */
const nested = (depth: number) => `__nested_${depth}__`;
const NESTED = /"__nested_(\d+)__"/g;

/**
 * What the host answered to `path` paid with the route's payment as `change` leaves it (a value of `nested(n)`
 * becomes JSON nested n deep), with the lines logged at error level meanwhile, the payment ids stored, and the
 * schemas compiled other than the declared one (the payment's, which the buyer writes).
 */
async function sent(path: string, change: (extensions: Record<string, unknown>) => void) {
  const paid = await payment(path);
  paid.extensions ??= {};
  change(paid.extensions);
  const json = JSON.stringify(paid).replace(NESTED, (_, n) => `${"[".repeat(n)}1${"]".repeat(n)}`);
  const errors = capturedLogLines("error");
  const compile = vi.spyOn(Ajv2020.prototype, "compile");
  const answer = await fetch(`${host.url}${path}`, {
    headers: { "PAYMENT-SIGNATURE": Buffer.from(json).toString("base64") },
  });
  const body = await answer.text();
  const compiled = compile.mock.calls.filter(([schema]) => schema !== paymentIdentifierSchema).length;
  compile.mockRestore();
  const { rows } = await state.db.query("SELECT payment_id FROM merchant_payment_answers");
  return {
    status: answer.status,
    code: (body ? JSON.parse(body) : {}).error?.code as string | undefined,
    errors: errors.length,
    stored: rows.length,
    compiled,
  };
}

const backtracking = (as: number) => ({
  info: { required: false, id: "pay_0123456789abcdef", x: `${"a".repeat(as)}!` },
  schema: { type: "object", properties: { x: { type: "string", pattern: "^(a+)+$" } } },
});

describe("a payment's payment-identifier", () => {
  /** Refused as a payment the facilitator does not verify: the id was read, and found well formed. */
  const notVerified = { status: 402, errors: 0, stored: 0, compiled: 0 };
  const malformed = { status: 400, code: "invalid_payment_id", errors: 0, stored: 0, compiled: 0 };

  it("with a schema of its own that backtracks is judged by the declaration: its schema never compiled", async () => {
    const answer = await sent("/api/echo?text=a", (e) => {
      e[PAYMENT_IDENTIFIER] = backtracking(20);
    });
    expect(answer).toMatchObject(notVerified);
  });

  it.each([
    [
      "a schema of 900 properties",
      {
        info: { required: false, id: "pay_0123456789abcdef" },
        schema: {
          type: "object",
          properties: Object.fromEntries(
            Array.from({ length: 900 }, (_, i) => [`p${i}`, { type: "number" }]),
          ),
        },
      },
      notVerified,
    ],
    [
      "a schema that refuses its own id",
      {
        info: { required: false, id: "pay_0123456789abcdef" },
        schema: { properties: { id: { maxLength: 4 } } },
      },
      notVerified,
    ],
    [
      "a schema with an external $ref",
      {
        info: { required: false, id: "pay_0123456789abcdef" },
        schema: { $ref: "http://127.0.0.1:1/s.json" },
      },
      notVerified,
    ],
    [
      "info nested 20,000 deep",
      { info: { required: false, id: "pay_0123456789abcdef", x: nested(20_000) } },
      notVerified,
    ],
    ["no extension (null)", null, notVerified],
    ["an id of 129 characters", { info: { required: false, id: "x".repeat(129) } }, malformed],
    ["an id with a space", { info: { required: false, id: "pay 0123456789abcdef" } }, malformed],
    ["an id that is a number", { info: { required: false, id: 1234567890123456 } }, malformed],
    ["a string", "pay_0123456789abcdef", malformed],
    ["an array", [], malformed],
    ["info a string", { info: "pay_0123456789abcdef" }, malformed],
  ])("that is %s is refused, never a 5xx, nothing stored", async (_, extension, expected) => {
    const answer = await sent("/api/echo?text=a", (e) => {
      e[PAYMENT_IDENTIFIER] = extension;
    });
    expect(answer).toMatchObject(expected);
  });
});

describe("the other extensions a payment echoes", () => {
  it.each([
    [
      "offer-receipt's info nested 20,000 deep",
      (e: Record<string, unknown>) => {
        e["offer-receipt"] = { info: { offers: nested(20_000) } };
      },
    ],
    [
      "offer-receipt's 1,000 offers",
      (e: Record<string, unknown>) => {
        e["offer-receipt"] = { info: { offers: Array.from({ length: 1000 }, () => ({ format: "eip712" })) } };
      },
    ],
    [
      "offer-receipt null",
      (e: Record<string, unknown>) => {
        e["offer-receipt"] = null;
      },
    ],
    [
      "bazaar's info nested 20,000 deep",
      (e: Record<string, unknown>) => {
        e.bazaar = { info: nested(20_000) };
      },
    ],
    [
      "an extension the route never declared, nested 20,000 deep",
      (e: Record<string, unknown>) => {
        e.undeclared = { info: nested(20_000) };
      },
    ],
  ])("with %s is a payment that does not verify, never a 5xx", async (_, change) => {
    expect(await sent("/api/echo?text=a", change)).toMatchObject({
      status: 402,
      errors: 0,
      stored: 0,
      compiled: 0,
    });
  });

  it("with sign-in-with-x's info nested 20,000 deep is a payment that does not verify, never a 5xx", async () => {
    const answer = await sent("/api/day/alpha", (e) => {
      e["sign-in-with-x"] = { info: nested(20_000) };
    });
    expect(answer).toMatchObject({ status: 402, errors: 0, stored: 0, compiled: 0 });
  });
});
