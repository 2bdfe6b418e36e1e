/**
 * The payment ids' settings: ids optional everywhere and answers kept a day by default, the paths that require
 * one read from X402M_PAYMENT_ID_REQUIRED (and put on those endpoints), and what cannot work refused at start,
 * naming the variable.
 */
import { describe, expect, it } from "vitest";
import { withPaymentIds } from "../../../../src/merchant-kit/payments/extensions/payment-ids.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { echo, sum, TEST_ENDPOINTS } from "../../../helpers/merchant.ts";

const paymentIds = (env: Record<string, string>) => loadConfig({ env }).paymentIds;

describe("the payment ids' settings", () => {
  it("default to ids optional everywhere, answers kept a day", () => {
    expect(paymentIds({})).toEqual({ required: [], ttlSeconds: 86_400 });
    expect(withPaymentIds({ endpoints: TEST_ENDPOINTS }, paymentIds({})).endpoints).toBe(TEST_ENDPOINTS);
  });

  it("require an id on the paths listed, or on every paid route with *", () => {
    const some = paymentIds({
      X402M_PAYMENT_ID_REQUIRED: " /api/sum, ",
      X402M_PAYMENT_ID_TTL_SECONDS: "600",
    });
    expect(some).toEqual({ required: ["/api/sum"], ttlSeconds: 600 });
    const required = (settings: typeof some) =>
      withPaymentIds({ endpoints: [echo, sum] }, settings).endpoints.map((e) => e.paymentId);
    expect(required(some)).toEqual([undefined, "required"]);
    expect(required(paymentIds({ X402M_PAYMENT_ID_REQUIRED: "*" }))).toEqual(["required", "required"]);
  });

  it("refuse at start what is not a path or a lifetime they can keep, naming the variable", () => {
    expect(() => paymentIds({ X402M_PAYMENT_ID_REQUIRED: "api/sum" })).toThrow(/X402M_PAYMENT_ID_REQUIRED/);
    expect(() => paymentIds({ X402M_PAYMENT_ID_TTL_SECONDS: "10" })).toThrow(/X402M_PAYMENT_ID_TTL_SECONDS/);
    expect(() => paymentIds({ X402M_PAYMENT_ID_TTL_SECONDS: "a day" })).toThrow(
      /X402M_PAYMENT_ID_TTL_SECONDS/,
    );
  });
});
