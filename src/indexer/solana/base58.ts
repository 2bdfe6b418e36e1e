/**
 * Base58 (Bitcoin's alphabet) to bytes, for the instruction data a `jsonParsed` transaction leaves unparsed (the
 * payment-channels program's, SPL Token's `Batch`). Written here so that the indexer does not load the SDK for it;
 * the data it reads is at most an instruction's (1,232 bytes), so a bigint does the arithmetic.
 */
const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** The bytes of `text`, or null when it is not base58. */
export function base58Bytes(text: string): Uint8Array | null {
  let value = 0n;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.push(Number(value & 0xffn));
  // Each leading "1" is a leading zero byte, which the number above cannot hold.
  let zeros = 0;
  while (text[zeros] === "1") zeros++;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes.reverse()]);
}
