/** The reads of the chain a run makes outside its batches: the head, one header, the earliest block. */
import { type BlockHeader, clockOf } from "../../chain/block-clock.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import { fetchHeaders } from "../block-data.ts";
import { hexNumber } from "../decode.ts";
import { IndexerInputError } from "../options.ts";
import type { RpcClient } from "../rpc/client.ts";
import { RpcGaveUpError } from "../rpc/rpc-errors.ts";
import type { Cursor } from "../state.ts";

export async function headNumber(client: RpcClient): Promise<number> {
  return hexNumber(await client.call<string>("eth_blockNumber", []));
}

export async function header(client: RpcClient, block: number, signal?: AbortSignal): Promise<BlockHeader> {
  return (await fetchHeaders(client, [block], { signal }))[0] as BlockHeader;
}

/**
 * The cursor standing just before `block`: the parent's hash and time, from `block`'s own header (and, on a
 * chain whose rule does not give the parent's time, from the parent's).
 */
export async function cursorBefore(
  client: RpcClient,
  block: number,
  chain: ChainRecord,
  signal?: AbortSignal,
): Promise<Cursor> {
  const h = await header(client, block, signal).catch((error) => {
    // An RPC that is down says nothing about the block: that is an outage, not a bad range.
    if (error instanceof RpcGaveUpError) throw error;
    throw new IndexerInputError(`cannot start at block ${block}: ${(error as Error).message}`);
  });
  const time =
    clockOf(chain, h.number, h.timestamp).parentTime(h) ??
    (block > 0 ? (await header(client, block - 1, signal)).timestamp : h.timestamp);
  return { block: block - 1, hash: h.parentHash, time };
}

/**
 * The chain's first block the node serves: Base's is 0, a test devnet may start higher (anvil's
 * `--number`), and a node that expired old history may answer its oldest kept one (and refuse logs below it).
 */
export async function earliestBlock(client: RpcClient): Promise<number> {
  const earliest = await client.call<{ number?: string } | null>("eth_getBlockByNumber", ["earliest", false]);
  return earliest?.number ? hexNumber(earliest.number) : 0;
}
