import { createPublicClient } from "viem";
import { rpcTransport } from "../../chain/rpc-transport.ts";
import { usdcAbi } from "../../chain/usdc.ts";
import { UpstreamError } from "../../common/errors.ts";
import type { FundsReader } from "./ledger.ts";

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * The payer's balance of the payment token and which of its in-flight authorizations the chain has
 * already used, all read at one block (`payments.rpcUrl`): a settled transfer is then either in the
 * balance or not yet used, never both nor neither, however far this node lags the facilitator's. The
 * reads go out as one JSON-RPC batch. A chain that cannot be asked is a 503 for the call that needed it:
 * nothing runs, nothing is charged.
 */
export function chainFunds(rpcUrl: string, asset: `0x${string}`): FundsReader {
  const client = createPublicClient({
    transport: rpcTransport(rpcUrl, { timeout: 10_000, retryCount: 1, batch: true }),
    cacheTime: 0,
  });
  return async (payer, nonces) => {
    try {
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const checked = nonces.filter((n) => BYTES32.test(n));
      const [balance, ...states] = await Promise.all([
        client.readContract({
          address: asset,
          abi: usdcAbi,
          functionName: "balanceOf",
          args: [payer],
          blockNumber,
        }),
        ...checked.map((nonce) =>
          client.readContract({
            address: asset,
            abi: usdcAbi,
            functionName: "authorizationState",
            args: [payer, nonce as `0x${string}`],
            blockNumber,
          }),
        ),
      ]);
      return { balance: balance as bigint, used: new Set(checked.filter((_, i) => states[i] === true)) };
    } catch (error) {
      throw new UpstreamError(
        `cannot read the payer's balance from the chain (${(error as Error).message.split("\n")[0]}): try again`,
        "chain_unavailable",
        503,
      );
    }
  };
}
