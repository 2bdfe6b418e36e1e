/**
 * Where a run starts: after the stored checkpoint (a resume), else at the first block asked for, else
 * at the registry's earliest start date. A range that would leave a gap, or lies past the head, is a
 * usage mistake.
 */
import { clockOf } from "../../chain/block-clock.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import type { FacilitatorRegistry } from "../../chain/facilitators.ts";
import { parseHeader } from "../block-header.ts";
import { hexNumber } from "../decode.ts";
import { IndexerInputError, type IndexerOptions } from "../options.ts";
import type { RpcClient } from "../rpc/client.ts";
import { type Cursor, readState } from "../state.ts";
import { cursorBefore, headNumber } from "./chain-reads.ts";
import type { RunTools } from "./run.ts";
import type { RunStart } from "./run-state.ts";

export async function findStart(tools: RunTools): Promise<RunStart> {
  const { options, client, registry, chain } = tools;
  const state = await tools.serial.run(() => readState(tools.analytics, chain));
  const head = await headNumber(client);
  let start: RunStart;
  if (state) {
    checkResume(options, state.cursor);
    start = { startBlock: state.startBlock, cursor: state.cursor, committed: true, head };
  } else {
    const startBlock = options.fromBlock ?? (await defaultFromBlock(client, registry, head, chain));
    if (startBlock > head)
      throw new IndexerInputError(`--from-block ${startBlock} is past the chain head ${head}`);
    const cursor = await cursorBefore(client, startBlock, chain, tools.signal);
    start = { startBlock, cursor, committed: false, head };
  }
  checkToBlock(options, head);
  return start;
}

/** A resumed run goes on from its checkpoint: a --from-block after it would leave a gap. */
export function checkResume(options: IndexerOptions, cursor: Cursor): void {
  if (options.fromBlock !== undefined && options.fromBlock > cursor.block + 1) {
    throw new IndexerInputError(
      `--from-block ${options.fromBlock} would leave blocks ${cursor.block + 1}-${options.fromBlock - 1} unindexed ` +
        `after this analytics database's checkpoint ${cursor.block}; use a fresh --data directory for another range`,
    );
  }
}

export function checkToBlock(options: IndexerOptions, head: number): void {
  if (options.toBlock !== undefined && options.toBlock > head && !options.follow) {
    throw new IndexerInputError(
      `--to-block ${options.toBlock} is past the chain head ${head} (use --follow to wait for it)`,
    );
  }
}

/**
 * The first block at or after the registry's earliest start date (by the chain's clock from the head's time:
 * exact on Base, an estimate where blocks say their own time), or the chain's earliest block.
 */
async function defaultFromBlock(
  client: RpcClient,
  registry: FacilitatorRegistry,
  head: number,
  chain: ChainRecord,
): Promise<number> {
  const [latest, earliest] = await client.batch<unknown>([
    { method: "eth_getBlockByNumber", params: [`0x${head.toString(16)}`, false] },
    { method: "eth_getBlockByNumber", params: ["earliest", false] },
  ]);
  const headHeader = parseHeader(latest, head);
  const first = earliest ? hexNumber((earliest as { number: string }).number) : 0;
  const since = registry.earliestSince();
  const clock = clockOf(chain, headHeader.number, headHeader.timestamp);
  return Math.max(first, clock.blockAtMs(since * 1000 - 1) + 1, 0);
}
