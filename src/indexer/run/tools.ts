/** Opens a run: the RPC client, the batches' log fetcher, the registry as this node needs it, the writer. */
import { BASE_RECORD, type ChainRecord } from "../../chain/chains.ts";
import { DEVNET_FACILITATOR_SIGNER, isAnvil } from "../../chain/devnet-signer.ts";
import type { FacilitatorRegistry } from "../../chain/facilitators.ts";
import { CCTP_TOPICS, cctpContracts } from "../cctp-logs.ts";
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
import {
  DEFAULT_BATCH_BLOCKS,
  DEFAULT_CONCURRENCY,
  IndexerInputError,
  type IndexerOptions,
} from "../options.ts";
import { RpcClient } from "../rpc/client.ts";
import { RpcError } from "../rpc/rpc-errors.ts";
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
  const chain = options.chain ?? BASE_RECORD;
  await checkChainId(client, chain);
  const clockDated = chain.clock.kind === "stamped";
  const cctp = [...cctpContracts(chain.cctp).keys()];
  const logs = new LogFetcher(
    client,
    // USDC's transfers and EIP-3009 settlements, the Permit2 proxies' settlements, the batch-settlement
    // escrow's events and CCTP's burns and mints: one query for all (the OR of addresses and of first
    // topics), so reading the bridge costs no call more per range, only its logs in the answer.
    {
      address: [
        chain.usdc.address,
        chain.contracts.uptoProxy,
        chain.contracts.exactProxy,
        chain.contracts.batchSettlement,
        ...cctp,
      ],
      topic0: [
        TRANSFER_TOPIC,
        AUTHORIZATION_USED_TOPIC,
        UPTO_SETTLED_TOPIC,
        UPTO_SETTLED_WITH_PERMIT_TOPIC,
        ...Object.values(CHANNEL_TOPICS),
        ...(cctp.length > 0 ? Object.values(CCTP_TOPICS) : []),
      ],
    },
    {
      maxSpan: Math.max(1, options.batchBlocks ?? DEFAULT_BATCH_BLOCKS),
      onSpanChange: (change) => emit({ type: "span", ...change }),
      // Not `dated`: a batch dates its logs with the blocks it reads anyway (fetch-batch.ts).
      signal,
    },
  );
  const registry = await withDevnetSigner(client, options.registry);
  const analytics = options.analytics;
  return {
    options,
    chain,
    clockDated,
    analytics,
    client,
    logs,
    registry,
    serial: new Serial(),
    writer: new BatchWriter(analytics, chain),
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

/**
 * The RPC must serve the chain asked for: another chain's blocks would be stored under this one's name. A node
 * that does not answer `eth_chainId` is taken at its word.
 */
async function checkChainId(client: RpcClient, chain: ChainRecord): Promise<void> {
  const id = await client.call<unknown>("eth_chainId", []).catch((error: unknown) => {
    if (error instanceof RpcError) return undefined;
    throw error;
  });
  if (typeof id !== "string" || !/^0x[0-9a-f]+$/i.test(id)) return;
  if (Number.parseInt(id, 16) !== chain.chainId) {
    throw new IndexerInputError(
      `the RPC serves chain id ${Number.parseInt(id, 16)}, not ${chain.name}'s ${chain.chainId}: name its chain with --chain`,
    );
  }
}
