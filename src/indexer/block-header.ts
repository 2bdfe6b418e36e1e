/**
 * Block headers as the RPC serves them. Their times are checked against Base's clock
 * (`src/chain/block-clock.ts`) by whoever reads them.
 */
import { type BlockHeader, BlockTimeError } from "../chain/block-clock.ts";
import { hexNumber } from "./decode.ts";

/** Reads the fields we use from an eth_getBlockByNumber result. */
export function parseHeader(raw: unknown, expected: number): BlockHeader {
  const block = raw as {
    number?: string;
    hash?: string;
    parentHash?: string;
    timestamp?: string;
    timestampMs?: unknown;
  } | null;
  if (!block?.number || !block.hash || !block.parentHash || !block.timestamp) {
    throw new BlockTimeError(`the RPC returned no usable header for block ${expected}`);
  }
  const ms = block.timestampMs;
  const header: BlockHeader = {
    number: hexNumber(block.number),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    timestamp: hexNumber(block.timestamp),
    // Base's nodes since Denim; a quantity as the other fields are, or a plain number. Anything else is not read.
    ...(typeof ms === "string" && ms.startsWith("0x")
      ? { timestampMs: hexNumber(ms) }
      : typeof ms === "number" && Number.isSafeInteger(ms)
        ? { timestampMs: ms }
        : {}),
  };
  if (header.number !== expected) {
    throw new BlockTimeError(`asked for block ${expected}, the RPC returned block ${header.number}`);
  }
  return header;
}
