import crypto from "node:crypto";
import {
  type Hex,
  keccak256,
  parseGwei,
  recoverAddress,
  recoverTypedDataAddress,
  serializeTransaction,
  type TransactionSerializable,
  type TypedDataDefinition,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, sign } from "viem/accounts";
import { base } from "viem/chains";
import { describe, expect, it } from "vitest";
import { fastAccount, recoverSigner, secp256k1Backend, signDigest } from "../../src/chain/secp256k1.ts";

/** The curve's order: an s above n/2 is "high", and n - s with the other parity is the same signature. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;

const word = (value: bigint) => toHex(value, { size: 32 }).slice(2);
const randomHash = () => toHex(crypto.randomBytes(32));

/** viem's answer: the address, or undefined where it throws. */
const viemRecovers = (hash: Hex, signature: Hex) =>
  recoverAddress({ hash, signature }).catch(() => undefined);

async function signed() {
  const privateKey = generatePrivateKey();
  const hash = randomHash();
  const { r, s, yParity } = await sign({ hash, privateKey });
  return {
    address: privateKeyToAccount(privateKey).address,
    hash,
    r: BigInt(r),
    s: BigInt(s),
    yParity: yParity ?? 0,
  };
}

const compact = (r: bigint, s: bigint, v: number) =>
  `0x${word(r)}${word(s)}${v.toString(16).padStart(2, "0")}` as Hex;

describe("secp256k1 by libsecp256k1", () => {
  it("loads the native addon on this machine", () => {
    expect(secp256k1Backend).toBe("libsecp256k1");
  });

  it("recovers what viem recovers, for v as parity and as 27/28", async () => {
    for (let i = 0; i < 40; i++) {
      const { address, hash, r, s, yParity } = await signed();
      for (const v of [yParity, yParity + 27]) {
        const signature = compact(r, s, v);
        expect(await recoverSigner(hash, signature)).toBe(address);
        expect(await viemRecovers(hash, signature)).toBe(address);
      }
      // The wrong parity recovers another key, for both.
      const other = compact(r, s, 1 - yParity);
      expect(await recoverSigner(hash, other)).toBe(await viemRecovers(hash, other));
      expect(await recoverSigner(hash, other)).not.toBe(address);
    }
  });

  it("recovers the same signer from the malleable high-s twin, as viem and ecrecover do", async () => {
    for (let i = 0; i < 20; i++) {
      const { address, hash, r, s, yParity } = await signed();
      const twin = compact(r, N - s, 1 - yParity + 27);
      expect(N - s > N / 2n).toBe(true);
      expect(await recoverSigner(hash, twin)).toBe(address);
      expect(await viemRecovers(hash, twin)).toBe(address);
    }
  });

  it("refuses exactly what viem refuses", async () => {
    const { hash, r, s, yParity } = await signed();
    const cases: Hex[] = [
      compact(0n, s, 27),
      compact(r, 0n, 27),
      compact(N, s, 27),
      compact(r, N, 27),
      compact(r + N < 2n ** 256n ? r + N : r, s, 27),
      compact(P - 1n, s, 27), // may or may not be an x on the curve: both must agree
      compact(2n ** 256n - 1n, s, 27),
      compact(r, s, 2),
      compact(r, s, 26),
      compact(r, s, 29),
      compact(r, s, 255),
      compact(r, s, yParity + 27).slice(0, -2) as Hex, // 64 bytes
      `${compact(r, s, yParity + 27)}00`, // 66 bytes
    ];
    for (let x = 1n; x < 12n; x++) cases.push(compact(x, s, 27), compact(x, s, 28)); // small r: some not on the curve
    for (const signature of cases) {
      expect(await recoverSigner(hash, signature), signature).toBe(await viemRecovers(hash, signature));
    }
    // Refusals the addon sees first.
    expect(await recoverSigner(hash, "0xzz" as Hex)).toBeUndefined();
    expect(await recoverSigner("0x1234", compact(r, s, 27))).toBeUndefined();
  });

  it("signs the very bytes viem signs (RFC 6979, low s)", async () => {
    for (let i = 0; i < 20; i++) {
      const privateKey = generatePrivateKey();
      const hash = randomHash();
      expect(await signDigest(hash, privateKey)).toEqual(await sign({ hash, privateKey }));
    }
  });

  it("signs transactions byte for byte as privateKeyToAccount does, with the chain's serializer", async () => {
    const privateKey = generatePrivateKey();
    const fast = fastAccount(privateKey);
    const stock = privateKeyToAccount(privateKey);
    expect(fast.address).toBe(stock.address);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const txs: TransactionSerializable[] = [
      {
        chainId: 8453,
        type: "eip1559",
        to,
        nonce: 7,
        gas: 90_000n,
        maxFeePerGas: parseGwei("1"),
        maxPriorityFeePerGas: 1n,
        data: "0xdeadbeef",
      },
      { chainId: 31337, type: "legacy", to, nonce: 0, gas: 21_000n, gasPrice: parseGwei("2"), value: 5n },
      { chainId: 8453, type: "eip2930", to, nonce: 3, gas: 50_000n, gasPrice: 1n, accessList: [] },
    ];
    for (const tx of txs) {
      const mine = await fast.signTransaction(tx);
      expect(mine).toBe(await stock.signTransaction(tx));
      const serializer = base.serializers?.transaction;
      expect(await fast.signTransaction(tx, { serializer })).toBe(
        await stock.signTransaction(tx, { serializer }),
      );
      // And the signature is over the unsigned transaction's hash.
      expect(keccak256(mine)).not.toBe(keccak256(serializeTransaction(tx)));
    }
  });

  it("signs EIP-712 typed data byte for byte as privateKeyToAccount does (a receipt's and a charge's shapes)", async () => {
    const to = privateKeyToAccount(generatePrivateKey()).address;
    for (let i = 0; i < 10; i++) {
      const privateKey = generatePrivateKey();
      const fast = fastAccount(privateKey);
      const stock = privateKeyToAccount(privateKey);
      const charge = {
        domain: { name: "x402-merchants charge", version: "1", chainId: 1 },
        types: {
          Charge: [
            { name: "resourceUrl", type: "string" },
            { name: "payTo", type: "address" },
            { name: "amount", type: "uint256" },
            { name: "requestHash", type: "bytes32" },
            { name: "issuedAt", type: "uint256" },
          ],
        },
        primaryType: "Charge",
        message: {
          resourceUrl: `https://shop.example/api/calc/${i}`,
          payTo: to,
          amount: BigInt(i) * 1000n + 1n,
          requestHash: randomHash(),
          issuedAt: 1_767_225_600n + BigInt(i),
        },
      } as const;
      const nested = {
        domain: { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: to },
        types: {
          Party: [
            { name: "wallet", type: "address" },
            { name: "tags", type: "string[]" },
          ],
          Order: [
            { name: "from", type: "Party" },
            { name: "values", type: "uint256[]" },
            { name: "ok", type: "bool" },
          ],
        },
        primaryType: "Order",
        message: { from: { wallet: to, tags: ["a", `${i}`] }, values: [1n, BigInt(i)], ok: i % 2 === 0 },
      } as const;
      for (const typed of [charge, nested] as TypedDataDefinition[]) {
        const mine = await fast.signTypedData(typed);
        expect(mine).toBe(await stock.signTypedData(typed));
        expect(await recoverTypedDataAddress({ ...typed, signature: mine })).toBe(stock.address);
      }
    }
  });
});
