import crypto from "node:crypto";
import { hashTypedData, type TypedDataDefinition, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { fastHashTypedData } from "../../src/chain/typed-data.ts";
import { CHARGE_DOMAIN, CHARGE_TYPES } from "../../src/merchant-kit/payments/receipts/charge.ts";

const randomHash = () => toHex(crypto.randomBytes(32));
const address = () => privateKeyToAccount(generatePrivateKey()).address;
/** viem's answer: the hash, or the error's class where it throws. */
const viemHashes = (typed: TypedDataDefinition) => {
  try {
    return hashTypedData(typed);
  } catch (error) {
    return (error as Error).constructor.name;
  }
};
const fastHashes = (typed: TypedDataDefinition) => {
  try {
    return fastHashTypedData(typed);
  } catch (error) {
    return (error as Error).constructor.name;
  }
};

describe("EIP-712 hashing with the domain and types kept", () => {
  it("hashes a charge, a receipt and flat structs of every kind it writes as viem does, with any domain", () => {
    for (let i = 0; i < 30; i++) {
      const text = crypto.randomBytes(i * 7).toString("base64") + (i % 3 === 0 ? "é€😀" : "");
      const charge: TypedDataDefinition = {
        domain: CHARGE_DOMAIN,
        types: CHARGE_TYPES,
        primaryType: "Charge",
        message: {
          version: 1n,
          resourceUrl: `https://shop.example/api/calc/${text}`,
          network: "eip155:8453",
          asset: address(),
          payTo: address(),
          payer: address().toLowerCase(),
          scheme: "exact",
          amount: String(i * 1000),
          ceiling: String(i * 1000 + 1),
          requestHash: randomHash(),
          transaction: i % 2 ? randomHash() : "",
          channel: "",
          issuedAt: 1_767_225_600 + i,
        },
      };
      const flat: TypedDataDefinition = {
        domain: {
          name: text,
          version: String(i),
          chainId: BigInt(i + 1),
          verifyingContract: address(),
          ...(i % 2 === 0 && { salt: randomHash() }),
        },
        types: {
          Flat: [
            { name: "who", type: "address" },
            { name: "ok", type: "bool" },
            { name: "small", type: "uint8" },
            { name: "big", type: "uint256" },
            { name: "tag", type: "bytes32" },
            { name: "note", type: "string" },
          ],
        },
        primaryType: "Flat",
        message: {
          who: address(),
          ok: i % 2 === 0,
          small: i,
          big: 2n ** 255n + BigInt(i),
          tag: randomHash().toUpperCase().replace("0X", "0x"),
          note: text,
        },
      };
      const empty: TypedDataDefinition = {
        types: { Empty: [{ name: "n", type: "uint256" }] },
        primaryType: "Empty",
        message: { n: BigInt(i) },
      };
      for (const typed of [charge, flat, empty]) expect(fastHashTypedData(typed)).toBe(hashTypedData(typed));
    }
  });

  it("hashes what it does not write itself (nested structs, arrays, bytes, signed integers) by viem", () => {
    const to = address();
    const typed: TypedDataDefinition = {
      domain: { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: to },
      types: {
        Party: [
          { name: "wallet", type: "address" },
          { name: "tags", type: "string[]" },
        ],
        Order: [
          { name: "from", type: "Party" },
          { name: "data", type: "bytes" },
          { name: "delta", type: "int256" },
        ],
      },
      primaryType: "Order",
      message: { from: { wallet: to, tags: ["a", "b"] }, data: "0x0102", delta: -5n },
    };
    expect(fastHashTypedData(typed)).toBe(hashTypedData(typed));
  });

  it("refuses what viem refuses, and hashes values of another kind than their type's as viem does", () => {
    const base = {
      domain: CHARGE_DOMAIN,
      types: {
        T: [
          { name: "a", type: "address" },
          { name: "n", type: "uint8" },
          { name: "h", type: "bytes32" },
        ],
      },
      primaryType: "T",
    } as const;
    const cases: Record<string, unknown>[] = [
      { a: "0x0000000000000000000000000000000000000001", n: 256, h: randomHash() },
      { a: "0x0000000000000000000000000000000000000001", n: -1n, h: randomHash() },
      { a: "0xnot an address", n: 1, h: randomHash() },
      { a: "0x0000000000000000000000000000000000000001", n: 1, h: "0x1234" },
      { a: "0x0000000000000000000000000000000000000001", n: "7", h: randomHash() },
      { a: "0x0000000000000000000000000000000000000001", n: 1 },
    ];
    for (const message of cases) {
      const typed = { ...base, message } as unknown as TypedDataDefinition;
      expect(fastHashes(typed)).toBe(viemHashes(typed));
    }
    const numberAsText = {
      types: { S: [{ name: "s", type: "string" }] },
      primaryType: "S",
      message: { s: 5 },
    } as unknown as TypedDataDefinition;
    expect(fastHashes(numberAsText)).toBe(viemHashes(numberAsText));
  });
});
