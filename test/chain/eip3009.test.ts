import crypto from "node:crypto";
import { getAddress, hashTypedData, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { BASE_USDC } from "../../src/chain/base.ts";
import { transferWithAuthorizationDigest } from "../../src/chain/eip3009.ts";
import { eip3009Types, USDC_EIP712_NAME, USDC_EIP712_VERSION } from "../../src/chain/usdc.ts";

const randomAddress = () => getAddress(toHex(crypto.randomBytes(20)));
const randomUint = (bytes: number) => BigInt(toHex(crypto.randomBytes(bytes)));

describe("the EIP-3009 digest", () => {
  it("equals viem's hashTypedData for the same domain and message", () => {
    const domains = [
      {
        name: USDC_EIP712_NAME,
        version: USDC_EIP712_VERSION,
        chainId: 8453,
        verifyingContract: getAddress(BASE_USDC),
      },
      { name: "USDC", version: "2", chainId: 84532, verifyingContract: randomAddress() },
      { name: "Ünïcode tøken", version: "0.1-β", chainId: 1, verifyingContract: randomAddress() },
    ];
    for (const domain of domains) {
      for (let i = 0; i < 20; i++) {
        const message = {
          from: randomAddress(),
          to: i % 2 ? (randomAddress().toLowerCase() as `0x${string}`) : randomAddress(),
          value: i === 0 ? 2n ** 256n - 1n : randomUint(1 + (i % 32)),
          validAfter: i === 1 ? 0n : randomUint(4),
          validBefore: randomUint(8),
          nonce: toHex(crypto.randomBytes(32)),
        };
        const expected = hashTypedData({
          domain,
          types: eip3009Types,
          primaryType: "TransferWithAuthorization",
          message,
        });
        expect(transferWithAuthorizationDigest(domain, message), `${domain.name} ${i}`).toBe(expected);
      }
    }
  });

  it("keeps domains apart that differ in one field", () => {
    const message = {
      from: randomAddress(),
      to: randomAddress(),
      value: 1000n,
      validAfter: 0n,
      validBefore: 1n,
      nonce: toHex(crypto.randomBytes(32)),
    };
    const domain = {
      name: "USD Coin",
      version: "2",
      chainId: 8453,
      verifyingContract: getAddress(BASE_USDC),
    };
    const digests = new Set(
      [domain, { ...domain, version: "1" }, { ...domain, chainId: 84532 }, { ...domain, name: "USDC" }].map(
        (d) => transferWithAuthorizationDigest(d, message),
      ),
    );
    expect(digests.size).toBe(4);
  });
});
