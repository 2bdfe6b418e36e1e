/**
 * Base58 (Bitcoin's alphabet, each leading `1` a zero byte) to bytes: a Solana public key's 32 bytes for what
 * commits to a key (a report's leaf in the attested week's tree, src/reports/attest/tree.ts), and the instruction
 * data a `jsonParsed` transaction leaves unparsed (the indexer: the payment-channels program's, SPL Token's
 * `Batch`; at most an instruction's 1,232 bytes, so a bigint does the arithmetic). Its own few lines rather than
 * `@solana/kit`'s codec: the reports, `verify` and the indexer do not otherwise load the SDK.
 */

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** The bytes `text` encodes in base58, or undefined when a character is not of the alphabet. */
export function base58Bytes(text: string): Uint8Array | undefined {
  let value = 0n;
  for (const c of text) {
    const digit = ALPHABET.indexOf(c);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.push(Number(value & 0xffn));
  let zeros = 0;
  while (text[zeros] === "1") zeros++;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes.reverse()]);
}

/** A public key's 32 bytes, or undefined when `key` is not base58 of exactly 32 bytes. */
export function solanaKeyBytes(key: string): Uint8Array | undefined {
  const bytes = base58Bytes(key);
  return bytes?.length === 32 ? bytes : undefined;
}
