/**
 * A Solana key's 32 bytes from its base58 text (src/chain/solana/base58.ts), as `@solana/kit`'s own address codec
 * reads it: leading `1`s are zero bytes, and text that is not base58 of exactly 32 bytes has no key.
 */
import { type Address, getAddressEncoder, getBase58Decoder } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { base58Bytes, solanaKeyBytes } from "../../../src/chain/solana/base58.ts";
import { SOLANA_USDC_MINT, SPL_TOKEN_PROGRAM } from "../../../src/chain/solana/constants.ts";
import { solKey } from "../../helpers/solana.ts";

const kit = (key: string) => new Uint8Array(getAddressEncoder().encode(key as Address));
const text = (bytes: number[]) => getBase58Decoder().decode(new Uint8Array(bytes));

describe("solanaKeyBytes", () => {
  it("reads every key as the SDK's codec does, leading zero bytes included", () => {
    const keys = [
      SOLANA_USDC_MINT,
      SPL_TOKEN_PROGRAM,
      // The system program: 32 zero bytes.
      "11111111111111111111111111111111",
      text([...new Array(12).fill(0), ...new Array(20).fill(0xab)]),
      text([0, ...new Array(31).fill(0xff)]),
      text(new Array(32).fill(0xff)),
      ...Array.from({ length: 40 }, (_, i) => solKey(`base58-${i}`)),
    ];
    for (const key of keys) expect(solanaKeyBytes(key), key).toEqual(kit(key));
  });

  it("has no key for text that is not base58 of 32 bytes", () => {
    expect(solanaKeyBytes(text(new Array(31).fill(7)))).toBeUndefined();
    expect(solanaKeyBytes(text(new Array(33).fill(7)))).toBeUndefined();
    expect(solanaKeyBytes(`${SOLANA_USDC_MINT.slice(0, -1)}0`)).toBeUndefined();
    expect(solanaKeyBytes(`${SOLANA_USDC_MINT.slice(0, -1)}l`)).toBeUndefined();
    expect(solanaKeyBytes("")).toBeUndefined();
    expect(base58Bytes("")).toEqual(new Uint8Array());
    expect(base58Bytes("1")).toEqual(new Uint8Array([0]));
    expect(base58Bytes("z")).toEqual(new Uint8Array([57]));
    expect(base58Bytes("21")).toEqual(new Uint8Array([58]));
  });
});
