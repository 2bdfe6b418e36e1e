import type { FacilitatorEvmSigner } from "@x402/evm";
import { toFacilitatorEvmSigner } from "@x402/evm";
import {
  type Abi,
  type Chain,
  concat,
  encodeFunctionData,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { pollReceipt } from "../chain/receipt.ts";
import type { ChainReads } from "./chain-reads.ts";
import type { SignedTransaction, Submitter } from "./submitter.ts";

/** A contract call the SDK asked the signer to send. */
export interface ContractCall {
  address: `0x${string}`;
  functionName: string;
  args: readonly unknown[];
}

export interface SignerHooks {
  /** Before signing, with the most the transaction can cost in gas. Throwing cancels the send. */
  beforeSign?(call: ContractCall, cost: { gas: bigint; maxFeePerGas: bigint }): Promise<void>;
  /** Before broadcast: durably record which call this transaction carries. Throwing cancels the send. */
  beforeBroadcast(call: ContractCall, tx: SignedTransaction): Promise<void>;
  /** The node refused the transaction: it will never be mined. */
  onRejected(call: ContractCall, tx: SignedTransaction): Promise<void>;
  /** A receipt the SDK waited for and got. */
  onReceipt(receipt: TransactionReceipt): void;
}

export interface SignerOptions {
  client: PublicClient<Transport, Chain>;
  /** The SDK's contract and code reads go through these (shared with reads a caller started early). */
  reads: ChainReads;
  submitter: Submitter;
  hooks: SignerHooks;
  /** How long settlement waits for a receipt before answering "pending". */
  confirmationTimeoutMs: number;
  /** How often a receipt is polled for. */
  pollingIntervalMs: number;
}

/**
 * The `FacilitatorEvmSigner` the SDK's exact scheme verifies and settles with: reads go to the public
 * client, writes go through the submitter (one nonce sequence, the hash recorded before broadcast).
 *
 * `sendTransaction` is refused: the SDK uses it only to deploy ERC-6492 smart wallets through an allowed
 * factory, and this facilitator allows none; every transaction it sends is one the ledger knows.
 */
export function createSigner({
  client,
  reads,
  submitter,
  hooks,
  confirmationTimeoutMs,
  pollingIntervalMs,
}: SignerOptions): FacilitatorEvmSigner {
  const beforeSign = hooks.beforeSign;
  return toFacilitatorEvmSigner(
    {
      address: submitter.address,
      readContract: (args) =>
        reads.readContract({
          address: args.address,
          abi: args.abi as Abi,
          functionName: args.functionName,
          args: args.args ?? [],
        }),
      verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      getCode: (args) => reads.getCode(args),
      async writeContract(args) {
        const call: ContractCall = {
          address: args.address,
          functionName: args.functionName,
          args: args.args,
        };
        const data = encodeFunctionData({
          abi: args.abi as Abi,
          functionName: args.functionName,
          args: args.args,
        });
        return submitter.submit(
          { to: args.address, data: args.dataSuffix ? concat([data, args.dataSuffix]) : data, gas: args.gas },
          {
            ...(beforeSign ? { beforeSign: (cost) => beforeSign(call, cost) } : {}),
            beforeBroadcast: (tx) => hooks.beforeBroadcast(call, tx),
            onRejected: (tx) => hooks.onRejected(call, tx),
          },
        );
      },
      sendTransaction(): Promise<Hex> {
        return Promise.reject(new Error("this facilitator sends no transactions other than settlements"));
      },
      async waitForTransactionReceipt({ hash, timeout }) {
        const receipt = await pollReceipt(client, hash, timeout ?? confirmationTimeoutMs, pollingIntervalMs);
        // The SDK answers "pending" (with the hash) when the wait throws.
        if (!receipt) throw new Error(`no receipt for ${hash} within ${timeout ?? confirmationTimeoutMs} ms`);
        hooks.onReceipt(receipt);
        return receipt;
      },
    },
    { confirmationTimeoutMs },
  );
}
