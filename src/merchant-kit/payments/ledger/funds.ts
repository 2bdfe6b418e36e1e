import { BaseError, type ContractFunctionParameters, createPublicClient, RpcError } from "viem";
import { MULTICALL3_ADDRESS, PERMIT2_ADDRESS } from "../../../chain/base.ts";
import { permit2Abi } from "../../../chain/permit2.ts";
import { rpcTransport } from "../../../chain/rpc-transport.ts";
import { SOLANA_NETWORK } from "../../../chain/solana/constants.ts";
import { usdcAbi } from "../../../chain/usdc.ts";
import { UpstreamError } from "../../../common/errors.ts";
import { sleep } from "../../../common/sleep.ts";
import { type FundsReader, PERMIT2_NONCE_PREFIX } from "./payment-ledger.ts";
import { solanaFunds } from "./svm-funds.ts";

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** How the chain says whether one ledger row's nonce is used: the call to make, and how to read its answer. */
interface NonceRead {
  nonce: string;
  call: ContractFunctionParameters;
  used(result: unknown): boolean;
}

/**
 * The read of a row's nonce: an EIP-3009 one in the token's `authorizationState`, a Permit2 one
 * (`permit2:<32 bytes hex>`) in its bit of Permit2's `nonceBitmap` word; none for other rows (a hash).
 */
function nonceRead(asset: `0x${string}`, payer: `0x${string}`, nonce: string): NonceRead | undefined {
  if (BYTES32.test(nonce)) {
    return {
      nonce,
      call: { address: asset, abi: usdcAbi, functionName: "authorizationState", args: [payer, nonce] },
      used: (state) => state === true,
    };
  }
  const permit = nonce.startsWith(PERMIT2_NONCE_PREFIX) ? nonce.slice(PERMIT2_NONCE_PREFIX.length) : "";
  if (!BYTES32.test(permit)) return undefined;
  const n = BigInt(permit);
  return {
    nonce,
    call: { address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: "nonceBitmap", args: [payer, n >> 8n] },
    used: (word) => (((word as bigint) >> (n & 0xffn)) & 1n) === 1n,
  };
}

/**
 * The payer's balance of the payment token and which of its in-flight authorizations the chain has
 * already used (EIP-3009 ones in the token, Permit2 ones in Permit2's nonce bitmap), all read in one call
 * through Multicall3 (`payments.rpcUrl`), so at one state: a settled
 * transfer is then either in the balance or not yet used, never both nor neither, however far this node
 * lags the facilitator's. A node that answers with an error is asked again, twice at most: a node behind a
 * load balancer, or one keeping no historical state while blocks arrive (the demo's devnet: "block height
 * is N but requested was M" for a call at the latest block), fails a read now and then that succeeds a
 * moment later. A chain that still cannot be asked is a 503 for the call that needed it: nothing runs,
 * nothing is charged.
 */
export function chainFunds(rpcUrl: string, asset: `0x${string}`): FundsReader {
  const client = createPublicClient({
    transport: rpcTransport(rpcUrl, { timeout: 10_000, retryCount: 1 }),
    cacheTime: 0,
  });
  const read = async (payer: `0x${string}`, checked: readonly NonceRead[]) => {
    const contracts: ContractFunctionParameters[] = [
      { address: asset, abi: usdcAbi, functionName: "balanceOf", args: [payer] },
      ...checked.map((r) => r.call),
    ];
    const results: unknown[] = await client.multicall({
      multicallAddress: MULTICALL3_ADDRESS,
      allowFailure: false,
      // One call, never split in chunks: the reads must see one state.
      batchSize: 0,
      contracts,
    });
    const [balance, ...states] = results;
    return {
      balance: balance as bigint,
      used: new Set(checked.filter((r, i) => r.used(states[i])).map((r) => r.nonce)),
    };
  };
  return async (payer, nonces) => {
    const checked = nonces.flatMap((n) => nonceRead(asset, payer, n) ?? []);
    for (let attempt = 0; ; attempt++) {
      try {
        return await read(payer, checked);
      } catch (error) {
        const answered = error instanceof BaseError && error.walk((e) => e instanceof RpcError) !== null;
        if (answered && attempt < NODE_ERROR_RETRIES) {
          await sleep(50 * (attempt + 1));
          continue;
        }
        throw new UpstreamError(
          `cannot read the payer's balance from the chain (${(error as Error).message.split("\n")[0]}): try again`,
          "chain_unavailable",
          503,
        );
      }
    }
  };
}

/** Times a read the node answered with an error is asked again. */
const NODE_ERROR_RETRIES = 2;

/**
 * A host's funds reader on each network it is paid on (routes.ts, `paymentNetworks`), and on Solana where
 * `solanaRpcUrl` is set (svm-funds.ts): a payment's payer is read on its own network's chain, the first's when
 * the payment names none or one the host does not take.
 */
export function networkFunds(
  networks: readonly { network: string; rpcUrl: string; asset: { address: string } }[],
  solanaRpcUrl?: string | null,
): FundsReader {
  const readers = new Map<string, FundsReader>(
    networks.map((n) => [n.network, chainFunds(n.rpcUrl, n.asset.address as `0x${string}`)]),
  );
  if (solanaRpcUrl) readers.set(SOLANA_NETWORK, solanaFunds(solanaRpcUrl));
  const first = readers.get(networks[0]?.network ?? "");
  if (!first) throw new Error("a host is paid on one network at least");
  return (payer, nonces, network, settlements) =>
    (readers.get(network ?? "") ?? first)(payer, nonces, network, settlements);
}
