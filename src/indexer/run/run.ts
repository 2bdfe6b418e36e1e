/**
 * One run of the indexer as its parts share it (`../indexer.ts` puts them together): the tools and
 * settings fixed when it opens, and the state they change (`run-state.ts`), passed to each part
 * rather than closed over.
 */
import type { Analytics } from "../../analytics/duckdb.ts";
import type { ChainRecord } from "../../chain/chains.ts";
import type { FacilitatorRegistry } from "../../chain/facilitators.ts";
import type { SenderStrategy } from "../block-data.ts";
import type { ConfigLookup } from "../channels.ts";
import type { IndexerEvent, IndexerSummary } from "../events.ts";
import type { FundingHistory } from "../history.ts";
import type { LogFetcher } from "../logs.ts";
import type { IndexerOptions } from "../options.ts";
import type { RpcClient } from "../rpc/client.ts";
import type { Serial } from "../serial.ts";
import type { BatchWriter } from "../writer.ts";
import type { RunState } from "./run-state.ts";

/** What a run has before it knows where it starts (`tools.ts`). */
export interface RunTools {
  readonly options: IndexerOptions;
  /** The chain indexed (`options.chain`, Base when it names none): its rows, USDC and clock. */
  readonly chain: ChainRecord;
  /** Whether the funding history's logs are dated as they are read (a stamped clock; a batch dates its own). */
  readonly clockDated: boolean;
  readonly analytics: Analytics;
  readonly client: RpcClient;
  /** The batches' eth_getLogs; the funding history has a fetcher of its own. */
  readonly logs: LogFetcher;
  readonly registry: FacilitatorRegistry;
  /** The analytics database's one connection, one job at a time: commits and the listings refresh share it. */
  readonly serial: Serial;
  readonly writer: BatchWriter;
  /** Reads back the configs of batch-settlement channels created before the store's blocks (`channel-lookup.ts`). */
  readonly channelConfigs: ConfigLookup;
  readonly concurrency: number;
  readonly signal: AbortSignal | undefined;
  readonly emit: (event: IndexerEvent) => void;
}

export interface Run extends RunTools {
  /** Blocks of confirmations: `options.reorgDepth`, else 128 s of blocks by the clock at the start's head. */
  readonly reorgDepth: number;
  readonly strategy: SenderStrategy;
  /** Undefined when the funding lookback is 0. */
  readonly history: FundingHistory | undefined;
  /** Counts added up as batches commit; finished by `summary.ts`. */
  readonly summary: IndexerSummary;
  readonly state: RunState;
}
