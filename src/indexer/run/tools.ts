/** Opens a run: the RPC client, the batches' log fetcher, the registry as this node needs it, the writer. */
import {
  BASE_USDC,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
  X402_UPTO_PROXY_ADDRESS,
} from "../../chain/base.ts";
import { DEVNET_FACILITATOR_SIGNER, isAnvil } from "../../chain/devnet-signer.ts";
import type { FacilitatorRegistry } from "../../chain/facilitators.ts";
import { CHANNEL_TOPICS } from "../channel-logs.ts";
import { countEvent } from "../counted.ts";
import {
  AUTHORIZATION_USED_TOPIC,
  TRANSFER_TOPIC,
  UPTO_SETTLED_TOPIC,
  UPTO_SETTLED_WITH_PERMIT_TOPIC,
} from "../decode.ts";
import type { IndexerEvent } from "../events.ts";
import { LogFetcher } from "../logs.ts";
import { DEFAULT_BATCH_BLOCKS, DEFAULT_CONCURRENCY, type IndexerOptions } from "../options.ts";
import { RpcClient } from "../rpc/client.ts";
import { Serial } from "../serial.ts";
import { BatchWriter } from "../writer.ts";
import { earliestBlock } from "./chain-reads.ts";
import { channelLookup } from "./channel-lookup.ts";
import type { RunTools } from "./run.ts";

export async function openTools(options: IndexerOptions): Promise<RunTools> {
  const onEvent = options.onEvent;
  // Every event goes to the metrics too (counted.ts).
  const emit = (event: IndexerEvent) => {
    countEvent(event);
    onEvent?.(event);
  };
  const signal = options.signal;
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const client = new RpcClient({
    ...options.rpc,
    signal,
    onRetry: (event) => emit({ type: "retry", ...event }),
  });
  const logs = new LogFetcher(
    client,
    // USDC's transfers and EIP-3009 settlements, the Permit2 proxies' settlements and the batch-settlement
    // escrow's events: one query for all (the OR of addresses and of first topics).
    {
      address: [BASE_USDC, X402_UPTO_PROXY_ADDRESS, X402_EXACT_PROXY_ADDRESS, X402_BATCH_SETTLEMENT_ADDRESS],
      topic0: [
        TRANSFER_TOPIC,
        AUTHORIZATION_USED_TOPIC,
        UPTO_SETTLED_TOPIC,
        UPTO_SETTLED_WITH_PERMIT_TOPIC,
        ...Object.values(CHANNEL_TOPICS),
      ],
    },
    {
      maxSpan: Math.max(1, options.batchBlocks ?? DEFAULT_BATCH_BLOCKS),
      onSpanChange: (change) => emit({ type: "span", ...change }),
      signal,
    },
  );
  const registry = await withDevnetSigner(client, options.registry);
  const analytics = options.analytics;
  return {
    options,
    analytics,
    client,
    logs,
    registry,
    serial: new Serial(),
    writer: new BatchWriter(analytics),
    channelConfigs: channelLookup({ client, options, signal }, () => earliestBlock(client)),
    concurrency,
    signal,
    emit,
  };
}

/**
 * On anvil (the project's devnet), its facilitator's signer is a facilitator too: without it every
 * settlement of `devnet` would be a candidate and no merchant found, unless the user knew to say
 * `--facilitator`. A node that does not answer `web3_clientVersion` is no anvil.
 */
async function withDevnetSigner(
  client: RpcClient,
  registry: FacilitatorRegistry,
): Promise<FacilitatorRegistry> {
  const version = await client.call<string>("web3_clientVersion", []).catch(() => "");
  if (typeof version !== "string" || !isAnvil(version)) return registry;
  if (registry.addresses().includes(DEVNET_FACILITATOR_SIGNER.toLowerCase())) return registry;
  return registry.withSigners([DEVNET_FACILITATOR_SIGNER], "the devnet's facilitator (anvil)");
}
