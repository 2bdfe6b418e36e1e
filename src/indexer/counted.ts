/**
 * The indexer's events in the metrics (src/common/metrics.ts): blocks and payments stored, reorgs, and
 * how far behind the chain's head (as last read) the stored blocks are.
 */
import { indexerBlocks, indexerPayments, indexerReorgs, setIndexerHeadLag } from "../common/metrics.ts";
import type { IndexerEvent } from "./events.ts";

export function countEvent(event: IndexerEvent): void {
  switch (event.type) {
    case "start":
      setIndexerHeadLag(event.head - (event.from - 1));
      break;
    case "batch":
      indexerBlocks.inc(event.to - event.from + 1);
      indexerPayments.inc(event.payments);
      setIndexerHeadLag(event.head - event.to);
      break;
    case "caught_up":
      setIndexerHeadLag(event.head - event.block);
      break;
    case "reorg":
      indexerReorgs.inc();
      break;
  }
}
