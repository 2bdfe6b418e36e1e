import {
  type Chain,
  decodeFunctionData,
  type Hex,
  multicall3Abi,
  type PublicClient,
  parseEventLogs,
  TransactionNotFoundError,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { MULTICALL3_ADDRESS, PERMIT2_ADDRESS } from "../chain/base.ts";
import { permit2Abi } from "../chain/permit2.ts";
import { pollReceipt } from "../chain/receipt.ts";
import { usdcAbi } from "../chain/usdc.ts";

/** What the chain says about a settlement transaction this facilitator broadcast. */
export type ChainOutcome =
  /** Mined, and it used this authorization (EIP-3009: the token's `AuthorizationUsed(payer, nonce)` log;
   * Permit2: a transfer from the payer, which Permit2 allows only with the nonce spent). `cost`: what it
   * cost the facilitator (`receiptCost`). */
  | { status: "settled"; blockNumber: bigint; cost: bigint }
  /** Mined without using the authorization (reverted): its gas was paid all the same. */
  | { status: "reverted"; blockNumber: bigint; cost: bigint }
  /** Not mined yet, and still possible. */
  | { status: "pending" }
  /** Gone: the node does not know it and our account's nonce moved past it. It will never be mined. */
  | { status: "dropped" }
  /** Not mined, but the authorization was used on chain by another transaction. */
  | { status: "settled_elsewhere" };

export interface PendingSettlement {
  /** How the payer signed: the token's EIP-3009 nonce, or Permit2's (the upto scheme). */
  method: "eip3009" | "permit2";
  hash: Hex;
  /** The transaction's nonce in the facilitator account. */
  txNonce: bigint;
  asset: `0x${string}`;
  payer: `0x${string}`;
  nonce: Hex;
}

/**
 * Decides a broadcast settlement from the chain, waiting up to `waitMs` for its receipt. Never submits
 * anything: a pending settlement is only ever resolved by looking.
 */
export async function checkSettlement(
  client: PublicClient<Transport, Chain>,
  signer: `0x${string}`,
  tx: PendingSettlement,
  { waitMs, pollingIntervalMs }: { waitMs: number; pollingIntervalMs: number },
): Promise<ChainOutcome> {
  const receipt = await findReceipt(client, tx.hash, waitMs, pollingIntervalMs);
  if (receipt) return judgeShare(client, receipt, tx);

  if (await knownTransaction(client, tx.hash)) return { status: "pending" };
  if (await authorizationUsed(client, tx)) {
    // Ours may have been mined between the two looks.
    const late = await findReceipt(client, tx.hash, 0, pollingIntervalMs);
    return late ? judgeShare(client, late, tx) : { status: "settled_elsewhere" };
  }
  const mined = await client.getTransactionCount({ address: signer, blockTag: "latest" });
  // Another transaction of ours holds this nonce now: this one can never be included.
  if (BigInt(mined) > tx.txNonce) return { status: "dropped" };
  return { status: "pending" };
}

/** Whether a receipt shows this very authorization being used. */
export function judgeReceipt(receipt: TransactionReceipt, tx: PendingSettlement): ChainOutcome {
  const cost = receiptCost(receipt);
  if (receipt.status !== "success") return { status: "reverted", blockNumber: receipt.blockNumber, cost };
  const fromToken = receipt.logs.filter((log) => log.address.toLowerCase() === tx.asset.toLowerCase());
  const used =
    tx.method === "permit2"
      ? // The proxy's settle either transfers through Permit2, spending the nonce, or reverts.
        parseEventLogs({ abi: usdcAbi, eventName: "Transfer", logs: fromToken }).some(
          (log) => log.args.from.toLowerCase() === tx.payer.toLowerCase(),
        )
      : parseEventLogs({
          abi: usdcAbi,
          eventName: "AuthorizationUsed",
          logs: fromToken,
        }).some(
          (log) =>
            log.args.authorizer.toLowerCase() === tx.payer.toLowerCase() &&
            log.args.nonce.toLowerCase() === tx.nonce.toLowerCase(),
        );
  return used
    ? { status: "settled", blockNumber: receipt.blockNumber, cost }
    : { status: "reverted", blockNumber: receipt.blockNumber, cost };
}

/** `judgeReceipt`, with the settlement's share of the cost when its transaction carried a group. */
async function judgeShare(
  client: PublicClient<Transport, Chain>,
  receipt: TransactionReceipt,
  tx: PendingSettlement,
): Promise<ChainOutcome> {
  const outcome = judgeReceipt(receipt, tx);
  if (!("cost" in outcome) || !isGroup(receipt)) return outcome;
  return { ...outcome, cost: await settlementCost(client, receipt) };
}

/** Whether a facilitator's transaction was a group of settlements: it sends nothing else to Multicall3. */
export function isGroup(receipt: Pick<TransactionReceipt, "to">): boolean {
  return receipt.to?.toLowerCase() === MULTICALL3_ADDRESS.toLowerCase();
}

/**
 * What one settlement of a mined transaction cost: the transaction's cost (`receiptCost`), or, for a group
 * (settlement-groups.ts), its equal share, rounded up: the number of calls is read from the transaction's
 * input, so it is the same whoever asks and whenever (a restarted process resolving what a dead one sent).
 */
export async function settlementCost(
  client: PublicClient<Transport, Chain>,
  receipt: TransactionReceipt,
): Promise<bigint> {
  const cost = receiptCost(receipt);
  if (!isGroup(receipt)) return cost;
  const size = await groupSize(client, receipt.transactionHash);
  return (cost + BigInt(size) - 1n) / BigInt(size);
}

/** The number of calls a group's transaction carried (1 when its input cannot be read as a group). */
async function groupSize(client: PublicClient<Transport, Chain>, hash: Hex): Promise<number> {
  const tx = await client.getTransaction({ hash });
  try {
    const { args } = decodeFunctionData({ abi: multicall3Abi, data: tx.input });
    const calls = args?.[0];
    return Array.isArray(calls) && calls.length > 0 ? calls.length : 1;
  } catch {
    return 1;
  }
}

/**
 * What a mined transaction cost its sender: gas used at the effective price, plus the L1 data fee an OP
 * Stack chain's receipt reports (Base's `l1Fee`; absent on other chains and on the devnet).
 */
export function receiptCost(receipt: TransactionReceipt): bigint {
  const l1Fee = (receipt as { l1Fee?: unknown }).l1Fee;
  const l1 = typeof l1Fee === "bigint" ? l1Fee : typeof l1Fee === "string" && l1Fee ? BigInt(l1Fee) : 0n;
  return receipt.gasUsed * receipt.effectiveGasPrice + l1;
}

async function findReceipt(
  client: PublicClient<Transport, Chain>,
  hash: Hex,
  waitMs: number,
  pollingIntervalMs: number,
): Promise<TransactionReceipt | undefined> {
  return pollReceipt(client, hash, waitMs, pollingIntervalMs);
}

export async function knownTransaction(client: PublicClient<Transport, Chain>, hash: Hex): Promise<boolean> {
  try {
    await client.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

/** Whether the chain has spent this nonce of the payer (in the token, or in Permit2's bitmap). */
export async function authorizationUsed(
  client: PublicClient<Transport, Chain>,
  tx: Pick<PendingSettlement, "method" | "asset" | "payer" | "nonce">,
): Promise<boolean> {
  if (tx.method === "permit2") {
    const nonce = BigInt(tx.nonce);
    const word = await client.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: "nonceBitmap",
      args: [tx.payer, nonce >> 8n],
    });
    return ((word >> (nonce & 0xffn)) & 1n) === 1n;
  }
  return client.readContract({
    address: tx.asset,
    abi: usdcAbi,
    functionName: "authorizationState",
    args: [tx.payer, tx.nonce],
  });
}
