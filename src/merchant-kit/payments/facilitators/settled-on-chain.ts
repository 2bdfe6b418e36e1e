/**
 * What the chain says of one EIP-3009 authorization, for a settlement whose outcome a facilitator left
 * unknown (it timed out, or dropped the connection after the request was sent): the token marks each
 * (authorizer, nonce) used once, in the transaction that transferred it, so the chain is the one witness
 * of whether, and by which transaction, the payment happened.
 */
import { createPublicClient, parseAbiItem, parseEventLogs } from "viem";
import { rpcTransport } from "../../../chain/rpc-transport.ts";
import { usdcAbi } from "../../../chain/usdc.ts";

/** The transfer a payment authorizes: `value` of `asset` from `from` to `to`, once, under `nonce`. */
export interface AuthorizedTransfer {
  asset: `0x${string}`;
  from: `0x${string}`;
  to: `0x${string}`;
  value: bigint;
  nonce: `0x${string}`;
  /** The network it is authorized on (CAIP-2), where a host is paid on several; else the reader's. */
  network?: string;
}

/**
 * The chain's word on an authorization: `unused`; `settled` by transaction `hash` (it moved exactly the
 * authorized transfer); `elsewhere` (used or canceled without that transfer: this payment will never
 * settle); or `unknown` (used, but the transaction was not found among recent blocks, or used only in the
 * node's pending state: a transaction waits for its block).
 */
export type ChainWord =
  | { state: "unused" }
  | { state: "settled"; hash: `0x${string}` }
  | { state: "elsewhere" }
  | { state: "unknown" };

export interface AuthorizationReader {
  /** Throws when the chain cannot be read. */
  read(transfer: AuthorizedTransfer): Promise<ChainWord>;
}

/**
 * How far back the transaction that used an authorization is looked for: its settlement began moments
 * ago (a facilitator's time-out at most), and some RPC providers refuse log queries over wider ranges
 * (2,000 blocks is Alchemy's, as the indexer's batches). 400 s of Base since Denim's 200 ms blocks (it was
 * 500 blocks, 1,000 s of 2 s blocks, and would be 100 s now); not found, the answer is `unknown`.
 */
const LOOKBACK_BLOCKS = 2_000n;

const AUTHORIZATION_USED = parseAbiItem(
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
);
const AUTHORIZATION_CANCELED = parseAbiItem(
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
);

/**
 * Reads each authorization on its own network's chain (a host paid on several: routes.ts, `paymentNetworks`),
 * the first's when it names none.
 */
export function networkAuthorizationReader(
  networks: readonly { network: string; rpcUrl: string }[],
): AuthorizationReader {
  const readers = new Map(networks.map((n) => [n.network, authorizationReader(n.rpcUrl)]));
  const first = readers.get(networks[0]?.network ?? "");
  if (!first) throw new Error("a host is paid on one network at least");
  return { read: (transfer) => (readers.get(transfer.network ?? "") ?? first).read(transfer) };
}

/** Reads authorizations on the chain at `rpcUrl` (the merchants' `payments.rpcUrl`). */
export function authorizationReader(rpcUrl: string): AuthorizationReader {
  const client = createPublicClient({
    transport: rpcTransport(rpcUrl, { timeout: 10_000, retryCount: 1 }),
    cacheTime: 0,
  });
  /** Whether the node's pending state has the authorization used; false when the node cannot say. */
  const usedInPending = (transfer: AuthorizedTransfer): Promise<boolean> =>
    client
      .readContract({
        address: transfer.asset,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [transfer.from, transfer.nonce],
        blockTag: "pending",
      })
      .catch(() => false);
  return {
    async read(transfer) {
      // Every read at one block the node has made, not at "latest": anvil resolves "latest" twice and refuses
      // a call that meets a block being built as out of range (-32602, foundry-rs/foundry#10709), which would
      // leave a settlement its facilitator left unknown unconfirmed; and the state and the logs of one block.
      const latest = await client.getBlockNumber();
      const used = await client.readContract({
        address: transfer.asset,
        abi: usdcAbi,
        functionName: "authorizationState",
        args: [transfer.from, transfer.nonce],
        blockNumber: latest,
      });
      // Unused in the last block, but perhaps not for long: a transaction that uses it may wait in the node's
      // pool (sent by a facilitator whose answer was lost). Handed on then, the payment would be refused by the
      // next facilitator (its estimate sees the pending transfer) and the buyer answered 402, then charged when
      // the block comes. A node that cannot read its pending state says nothing more than the block.
      if (!used) return (await usedInPending(transfer)) ? { state: "unknown" } : { state: "unused" };
      // Filtered by the indexed authorizer and nonce: the token's other logs never travel.
      const range = { fromBlock: latest > LOOKBACK_BLOCKS ? latest - LOOKBACK_BLOCKS : 0n, toBlock: latest };
      const args = { authorizer: transfer.from, nonce: transfer.nonce };
      const [use] = await client.getLogs({
        address: transfer.asset,
        event: AUTHORIZATION_USED,
        args,
        ...range,
      });
      if (!use) {
        const [canceled] = await client.getLogs({
          address: transfer.asset,
          event: AUTHORIZATION_CANCELED,
          args,
          ...range,
        });
        return canceled ? { state: "elsewhere" } : { state: "unknown" };
      }
      // The nonce alone does not prove the payment: a payer can sign two authorizations with one nonce
      // and spend it on the other. Only the authorized transfer in that transaction does.
      const receipt = await client.getTransactionReceipt({ hash: use.transactionHash });
      const moved = parseEventLogs({ abi: usdcAbi, eventName: "Transfer", logs: receipt.logs }).some(
        (log) =>
          log.address.toLowerCase() === transfer.asset.toLowerCase() &&
          log.args.from.toLowerCase() === transfer.from.toLowerCase() &&
          log.args.to.toLowerCase() === transfer.to.toLowerCase() &&
          log.args.value === transfer.value,
      );
      return receipt.status === "success" && moved
        ? { state: "settled", hash: use.transactionHash }
        : { state: "elsewhere" };
    },
  };
}
