/** A payment header decoded once for the kit's several readers: the SDK's answer, its error, kept per text. */
import { decodePaymentSignatureHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { decodedPayment } from "../../../src/merchant-kit/payments/decoded.ts";

const payload = (n: number) =>
  ({
    x402Version: 2,
    accepted: {
      scheme: "exact",
      network: "eip155:8453",
      amount: String(n),
      asset: "0x",
      payTo: "0x",
      maxTimeoutSeconds: 60,
      extra: {},
    },
    payload: { n },
  }) as unknown as PaymentPayload;

describe("decodedPayment", () => {
  it("answers what the SDK decodes, the same object for the same header", () => {
    const header = encodePaymentSignatureHeader(payload(1));
    const first = decodedPayment(header);
    expect(first).toEqual(decodePaymentSignatureHeader(header));
    expect(decodedPayment(header)).toBe(first);
    expect(decodedPayment(encodePaymentSignatureHeader(payload(2)))).toMatchObject({ payload: { n: 2 } });
  });

  it("throws the SDK's error for a header that does not decode, each time", () => {
    const sdk = (() => {
      try {
        decodePaymentSignatureHeader("bm90IGpzb24=");
      } catch (error) {
        return error;
      }
    })();
    expect(sdk).toBeInstanceOf(SyntaxError);
    expect(() => decodedPayment("bm90IGpzb24=")).toThrow(SyntaxError);
    expect(() => decodedPayment("bm90IGpzb24=")).toThrow(SyntaxError);
    expect(() => decodedPayment("%%%")).toThrow();
  });

  it("keeps a bounded number of headers: one decoded long ago is decoded again, equal", () => {
    const header = encodePaymentSignatureHeader(payload(3));
    const first = decodedPayment(header);
    for (let i = 0; i < 300; i++) decodedPayment(encodePaymentSignatureHeader(payload(1_000 + i)));
    const again = decodedPayment(header);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
