/**
 * The configs of batch-settlement channels created before anything the store holds (a store indexed from a
 * later `--from-block`): their `ChannelCreated` logs, by channel id, read newest first below the batch
 * until every id is found or the chain's first block. A channel is created by its first deposit, so what
 * the store misses is older than its start; a run from the registry's earliest date never needs this.
 */
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../../chain/base.ts";
import { CHANNEL_TOPICS, type ChannelConfig, decodeChannelLog } from "../channel-logs.ts";
import type { ConfigLookup } from "../channels.ts";
import { hexNumber } from "../decode.ts";
import { LogFetcher } from "../logs.ts";
import type { IndexerOptions } from "../options.ts";
import { DEFAULT_BATCH_BLOCKS, HISTORY_FIRST_SPAN } from "../options.ts";
import type { RpcClient } from "../rpc/client.ts";

export function channelLookup(
  tools: { client: RpcClient; options: IndexerOptions; signal: AbortSignal | undefined },
  floor: () => Promise<number>,
): ConfigLookup {
  const logs = new LogFetcher(
    tools.client,
    { address: X402_BATCH_SETTLEMENT_ADDRESS, topic0: [CHANNEL_TOPICS.created] },
    {
      maxSpan: Number.MAX_SAFE_INTEGER,
      initialSpan: Math.max(tools.options.batchBlocks ?? DEFAULT_BATCH_BLOCKS, HISTORY_FIRST_SPAN),
      signal: tools.signal,
    },
  );
  return async (ids, below) => {
    const found = new Map<string, ChannelConfig>();
    const bottom = await floor();
    let top = below - 1;
    while (top >= bottom && found.size < ids.length) {
      const from = Math.max(bottom, top - logs.span + 1);
      const wanted = ids.filter((id) => !found.has(id));
      for (const raw of await logs.fetch(from, top, undefined, wanted)) {
        const position = {
          block: hexNumber(raw.blockNumber),
          blockHash: raw.blockHash.toLowerCase(),
          blockTime: undefined,
          tx: raw.transactionHash.toLowerCase(),
          logIndex: hexNumber(raw.logIndex),
        };
        const log = decodeChannelLog(raw, position);
        // The newest creation is the config: an id is a hash of its config, so every one is the same.
        if (log?.config && !found.has(log.channelId)) found.set(log.channelId, log.config);
      }
      top = from - 1;
    }
    return found;
  };
}
