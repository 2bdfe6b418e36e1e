import type { IndexerOptions } from "../options.ts";

/**
 * The last block to index with the chain's head at `head`. An explicit --to-block of a run that stops
 * is taken as asked, unconfirmed or not; otherwise only blocks `reorgDepth` behind the head are final.
 */
export function targetFor(
  options: Pick<IndexerOptions, "toBlock" | "follow">,
  reorgDepth: number,
  head: number,
): number {
  return options.toBlock !== undefined && !options.follow
    ? Math.min(options.toBlock, head)
    : Math.min(options.toBlock ?? Infinity, head - reorgDepth);
}
