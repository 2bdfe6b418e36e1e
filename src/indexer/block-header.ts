/**
 * Block headers as the RPC serves them. Their times are checked against Base's clock
 * (`src/chain/block-clock.ts`) by whoever reads them.
 */
import { type BlockHeader, BlockTimeError } from "../chain/block-clock.ts";
import { hexNumber } from "./decode.ts";

/** Reads the fields we use from an eth_getBlockByNumber result. */
export function parseHeader(raw: unknown, expected: number): BlockHeader {
  const block = raw as { number?: string; hash?: string; parentHash?: string; timestamp?: string } | null;
  if (!block?.number || !block.hash || !block.parentHash || !block.timestamp) {
    throw new BlockTimeError(`the RPC returned no usable header for block ${expected}`);
  }
  const header = {
    number: hexNumber(block.number),
    hash: block.hash.toLowerCase(),
    parentHash: block.parentHash.toLowerCase(),
    timestamp: hexNumber(block.timestamp),
  };
  if (header.number !== expected) {
    throw new BlockTimeError(`asked for block ${expected}, the RPC returned block ${header.number}`);
  }
  return header;
}
