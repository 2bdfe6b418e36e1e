/**
 * A log as the RPC returns it, where it stands in the chain, and the error for one that does not have the
 * layout its topic promises. A file of its own: decode.ts decodes the escrow's logs through
 * channel-logs.ts, which needs these too.
 */

/** A log as eth_getLogs returns it (hex strings). `blockTimestamp` is recent (2025) and not served everywhere. */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  blockTimestamp?: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed?: boolean;
}

export interface LogPosition {
  block: number;
  blockHash: string;
  /**
   * The log's own block time (unix seconds) when the RPC serves it, else undefined (on a chain without a clock
   * rule, filled from its block's header before it is used: fetch-batch.ts).
   */
  blockTime: number | undefined;
  tx: string;
  logIndex: number;
}

/** A log that does not have the layout its topic promises: the RPC or the contract is not what we think. */
export class MalformedLogError extends Error {
  override name = "MalformedLogError";
}
