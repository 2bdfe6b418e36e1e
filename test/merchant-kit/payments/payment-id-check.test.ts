/**
 * A payment's id checked with the declared schema compiled once (payments/payment-id-check.ts) gets the SDK's
 * verdict, id and messages, whatever the payment echoes.
 */
import type { PaymentPayload } from "@x402/core/types";
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { checkedPaymentId } from "../../../src/merchant-kit/payments/payment-id-check.ts";

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
  ["a schema of its own", { info: { required: false, id: "pay_0123456789abcdef_long_id" }, schema: strict }],
  [
    "a schema that is no schema",
    { info: { required: false, id: "pay_0123456789abcdef" }, schema: { type: 7 } },
  ],
  ["more fields", { info: { required: false, id: "pay_0123456789abcdef", note: 1 }, schema }],
  ["not an object", "pay_0123456789abcdef"],
];

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
});
