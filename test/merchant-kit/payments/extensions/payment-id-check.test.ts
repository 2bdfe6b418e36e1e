/**
 * A payment's id checked with the declared schema compiled once (payments/extensions/payment-id-check.ts) gets the SDK's
 * verdict, id and messages when the payment echoes the declared schema or none; a payment that carries a schema
 * of its own gets the declared schema's verdict, its own never compiled (issue 83: a `pattern` that backtracks
 * held the host for seconds per unpaid request).
 */
import type { PaymentPayload } from "@x402/core/types";
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it, vi } from "vitest";
import { checkedPaymentId } from "../../../../src/merchant-kit/payments/extensions/payment-id-check.ts";

const { schema } = declarePaymentIdentifierExtension(false);
const strict = { ...schema, properties: { id: { type: "string", maxLength: 20 } } };

const extensions: [string, unknown][] = [
  ["a valid id", { info: { required: false, id: "pay_0123456789abcdef" }, schema }],
  ["a required valid id", { info: { required: true, id: `a${"b".repeat(127)}` }, schema }],
  ["no id", { info: { required: true }, schema }],
  ["an id too short", { info: { required: false, id: "short" }, schema }],
  ["an id too long", { info: { required: false, id: "x".repeat(129) }, schema }],
  ["an id of other characters", { info: { required: false, id: "pay 0123456789abcdef" }, schema }],
  ["an id that is a number", { info: { required: false, id: 1234567890123456 }, schema }],
  ["required not a boolean", { info: { required: "yes", id: "pay_0123456789abcdef" }, schema }],
  ["no info", { schema }],
  ["info an array", { info: [], schema }],
  ["no schema", { info: { required: false, id: "pay_0123456789abcdef" } }],
  ["more fields", { info: { required: false, id: "pay_0123456789abcdef", note: 1 }, schema }],
  ["not an object", "pay_0123456789abcdef"],
];

/** Schemas a payment may carry instead of the declared one: each judged as if it carried the declared one. */
const backtracking = { type: "object", properties: { x: { type: "string", pattern: "^(a+)+$" } } };
const foreign: [string, unknown][] = [
  ["a schema of its own", { info: { required: false, id: "pay_0123456789abcdef_long_id" }, schema: strict }],
  [
    "a schema that is no schema",
    { info: { required: false, id: "pay_0123456789abcdef" }, schema: { type: 7 } },
  ],
  [
    "a schema with an external $ref",
    { info: { required: false, id: "pay_0123456789abcdef" }, schema: { $ref: "http://127.0.0.1:1/s.json" } },
  ],
  [
    "a pattern that backtracks, and what it backtracks on",
    { info: { required: false, id: "pay_0123456789abcdef", x: `${"a".repeat(20)}!` }, schema: backtracking },
  ],
  [
    "a schema of 900 properties",
    {
      info: { required: false, id: "pay_0123456789abcdef" },
      schema: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: 900 }, (_, i) => [`p${i}`, { type: "string", pattern: `^p${i}$` }]),
        ),
      },
    },
  ],
  ["a schema and a malformed id", { info: { required: false, id: "short" }, schema: backtracking }],
];

const paying = (extension: unknown) =>
  ({ x402Version: 2, extensions: { [PAYMENT_IDENTIFIER]: extension } }) as unknown as PaymentPayload;

describe("a payment's id, its schema compiled once", () => {
  it.each(extensions)("is judged as the SDK judges it: %s", (_name, extension) => {
    const payload = {
      x402Version: 2,
      extensions: { [PAYMENT_IDENTIFIER]: extension },
    } as unknown as PaymentPayload;
    // Twice: compiled, then kept.
    expect(checkedPaymentId(payload)).toEqual(extractAndValidatePaymentIdentifier(payload));
    expect(checkedPaymentId(payload)).toEqual(extractAndValidatePaymentIdentifier(payload));
  });

  it.each(foreign)(
    "carrying %s, is judged by the declared schema, its own never compiled",
    (_name, extension) => {
      const compile = vi.spyOn(Ajv2020.prototype, "compile");
      const verdict = checkedPaymentId(paying(extension));
      // Only the declared schema is compiled, and that once per process (it may have been already).
      expect(compile.mock.calls.every(([compiled]) => compiled === schema)).toBe(true);
      compile.mockRestore();
      expect(verdict).toEqual(
        extractAndValidatePaymentIdentifier(paying({ ...(extension as object), schema })),
      );
    },
  );
});
