/**
 * x402's `erc20ApprovalGasSponsoring`, the facilitator's side: the SDK's exact and upto schemes hand the
 * extension's signer the buyer's signed `approve(Permit2, amount)` and the settlement call
 * (`sendTransactions`); this signer gives the buyer's wallet the ETH that transaction's gas needs (its gas
 * limit x max fee, less what the wallet holds: no more, since the node refuses a transaction its sender
 * cannot pay the worst case of), broadcasts it, and once it is mined sends the settlement as any other.
 *
 * It sends only for the payment being settled, whose sponsoring checks.ts accepted (`withApproval`), only
 * the very approval checked, and only that payment's own settlement; the funding's gas and the ETH given are
 * reserved against the caller's API key before anything is sent and charged as `approval` once mined, and
 * the settlement's worst case is reserved before the funding too: no approval is funded for a settlement the
 * key could not pay. Every hash is recorded before its broadcast (ledger.ts).
 */
import type { FacilitatorEvmSigner } from "@x402/evm";
import { x402ExactPermit2ProxyABI, x402UptoPermit2ProxyABI } from "@x402/evm";
import type { Erc20ApprovalGasSponsoringFacilitatorExtension, TransactionRequest } from "@x402/extensions";
import {
  type Abi,
  type Chain,
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { X402_EXACT_PROXY_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../../chain/base.ts";
import { pollReceipt } from "../../chain/receipt.ts";
import type { Database } from "../../common/db/index.ts";
import { facilitatorGasSpent } from "../../common/metrics.ts";
import { scopeSlot } from "../../common/request-scope.ts";
import type { GasBudgets } from "../access/index.ts";
import { type AuthorizationKey, keyOfCall, keyString } from "../authorization.ts";
import { receiptCost } from "../outcome.ts";
import type { Submitter } from "../submitter.ts";
import type { CheckedApproval } from "./checks.ts";
import { endApproval, forgetFunding, markApproving, recordFunding, startApproval } from "./ledger.ts";

/** The SDK's marker for an approval that failed (its settle answer becomes `erc20_approval_broadcast_failed`). */
const APPROVAL_FAILED = "erc20_approval_tx_failed";
/** An ETH transfer to a wallet without code. */
const FUNDING_GAS = 21_000n;
/** What the SDK gives the settlement after an approval (it sends it with this fixed limit). */
const SETTLE_GAS = 300_000n;

interface Approving {
  key: AuthorizationKey;
  payer: `0x${string}`;
  approval: CheckedApproval;
}

const current = scopeSlot<Approving>("checked approval");

/** Runs the SDK's settle of `key`'s payment with its checked approval: the only one `sendTransactions` sends. */
export function withApproval<T>(approving: Approving, fn: () => Promise<T>): Promise<T> {
  return current.run(approving, fn);
}

export interface ApprovalOptions {
  db: Database;
  client: PublicClient<Transport, Chain>;
  network: string;
  submitter: Submitter;
  /** The facilitator's signer: the settlement goes through it (its ledger row, its key's reservation). */
  signer: FacilitatorEvmSigner;
  budgets: GasBudgets;
  confirmationTimeoutMs: number;
  pollingIntervalMs: number;
}

/** The extension registered in the SDK's facilitator: its signer sends approvals as above. */
export function approvalSponsoring(options: ApprovalOptions): Erc20ApprovalGasSponsoringFacilitatorExtension {
  const { signer } = options;
  return {
    key: "erc20ApprovalGasSponsoring",
    signer: {
      getAddresses: () => signer.getAddresses(),
      readContract: (args) => signer.readContract(args),
      verifyTypedData: (args) => signer.verifyTypedData(args as Parameters<typeof signer.verifyTypedData>[0]),
      writeContract: (args) => signer.writeContract(args),
      sendTransaction: (args) => signer.sendTransaction(args),
      waitForTransactionReceipt: (args) => signer.waitForTransactionReceipt(args),
      getCode: (args) => signer.getCode(args),
      sendTransactions: (transactions) => sendApproved(options, transactions),
    },
  };
}

async function sendApproved(options: ApprovalOptions, transactions: TransactionRequest[]): Promise<Hex[]> {
  const approving = current.get();
  const [raw, call] = transactions;
  if (!approving || transactions.length !== 2 || raw !== approving.approval.raw || typeof call !== "object")
    throw new Error(`${APPROVAL_FAILED}: only a checked approval is sent, with its payment's settlement`);
  const settle = settlementOf(options.network, call, approving.key);
  const { budgets, client } = options;
  // The settlement's worst case first: an approval is funded only for a settlement the key can pay.
  const fees = await client.estimateFeesPerGas();
  await budgets.reserve(approving.key, (call.gas ?? SETTLE_GAS) * fees.maxFeePerGas);
  await approve(options, approving);
  const hash = await options.signer.writeContract({ ...settle, gas: call.gas ?? SETTLE_GAS });
  return [approving.approval.hash, hash];
}

/** The settlement call, which must be the approved payment's own. */
function settlementOf(network: string, call: { to: `0x${string}`; data: Hex }, key: AuthorizationKey) {
  const to = getAddress(call.to);
  const abi = (
    to === getAddress(X402_UPTO_PROXY_ADDRESS)
      ? x402UptoPermit2ProxyABI
      : to === getAddress(X402_EXACT_PROXY_ADDRESS)
        ? x402ExactPermit2ProxyABI
        : undefined
  ) as Abi | undefined;
  const decoded = abi ? decodeFunctionData({ abi, data: call.data }) : undefined;
  if (!abi || decoded?.functionName !== "settle")
    throw new Error(`${APPROVAL_FAILED}: after an approval only an x402 proxy's settle is sent`);
  const args = decoded.args ?? [];
  const encoded = encodeFunctionData({ abi, functionName: "settle", args });
  const ofKey = keyOfCall(network, { address: to, functionName: "settle", args });
  if (keyString(ofKey) !== keyString(key) || !call.data.toLowerCase().startsWith(encoded.toLowerCase()))
    throw new Error(`${APPROVAL_FAILED}: the settlement after an approval must be its own payment's`);
  // What follows the call is the builder-code suffix the SDK appended (signer.ts appends it again).
  const suffix =
    call.data.length > encoded.length ? (`0x${call.data.slice(encoded.length)}` as Hex) : undefined;
  return { address: to, abi, functionName: "settle", args, ...(suffix && { dataSuffix: suffix }) };
}

/** The wallet funded for its approval's gas when it lacks it, then the approval broadcast and mined. */
async function approve(options: ApprovalOptions, approving: Approving): Promise<void> {
  const { db, client, confirmationTimeoutMs, pollingIntervalMs } = options;
  const { key, payer, approval } = approving;
  const row = await startApproval(db, key, approval.hash);
  const wait = (hash: Hex) => pollReceipt(client, hash, confirmationTimeoutMs, pollingIntervalMs);
  // An earlier attempt's funding (its process died) is waited for, not sent again.
  if (row.funding_tx) await wait(row.funding_tx as Hex);
  const worst = approval.gas * approval.maxFeePerGas;
  const balance = await client.getBalance({ address: payer });
  const fundWei = worst > balance ? worst - balance : 0n;
  const beside = options.budgets.beside(key);
  let funding: { hash: Hex; receipt?: TransactionReceipt } | undefined;
  try {
    if (fundWei > 0n) {
      let reserved = 0n;
      const hash = await options.submitter.submit(
        { to: payer, data: "0x", value: fundWei, gas: FUNDING_GAS },
        {
          async beforeSign(cost) {
            // Again at a retry's fresh fee: only what it adds.
            const most = cost.gas * cost.maxFeePerGas + fundWei;
            if (!beside || most <= reserved) return;
            await beside.reserve(most - reserved);
            reserved = most;
          },
          async beforeBroadcast(tx) {
            if (!(await recordFunding(db, key, tx.hash, fundWei)))
              throw new Error(`no sponsored approval under way for ${tx.hash}: not broadcast`);
          },
          onRejected: (tx) => forgetFunding(db, key, tx.hash),
        },
      );
      funding = { hash, receipt: await wait(hash) };
      if (funding.receipt?.status !== "success")
        throw new Error(`${APPROVAL_FAILED}: the approval's gas (transaction ${hash}) was not paid in time`);
    }
    await markApproving(db, key);
    await broadcastRaw(client, approval.raw, approval.hash);
    const mined = await wait(approval.hash);
    const costWei = (funding?.receipt ? receiptCost(funding.receipt) : 0n) + (funding ? fundWei : 0n);
    if (!mined) throw new Error(`${APPROVAL_FAILED}: the approval ${approval.hash} was not mined in time`);
    const ok = mined.status === "success";
    await endApproval(db, key, {
      state: ok ? "approved" : "failed",
      costWei,
      gasUsed: mined.gasUsed,
      ...(!ok && { error: "the approval reverted" }),
    });
    if (!ok) throw new Error(`${APPROVAL_FAILED}: the approval ${approval.hash} reverted`);
  } finally {
    await endBeside(beside, funding, fundWei);
  }
}

/** The funding's cost to the key: charged once mined (its gas and the ETH given), else given back. */
async function endBeside(
  beside: ReturnType<GasBudgets["beside"]>,
  funding: { hash: Hex; receipt?: TransactionReceipt } | undefined,
  fundWei: bigint,
): Promise<void> {
  if (funding?.receipt) {
    const cost = receiptCost(funding.receipt) + fundWei;
    facilitatorGasSpent.inc(Number(cost));
    await beside?.charge(cost, funding.hash);
  } else if (!funding) await beside?.release();
  // Broadcast and not mined in time: it stays reserved for the day (the key gets less, never more).
}

/** The buyer's signed transaction, sent as it is; one the node already has is sent already. */
async function broadcastRaw(client: PublicClient<Transport, Chain>, raw: Hex, hash: Hex): Promise<void> {
  try {
    await client.request({ method: "eth_sendRawTransaction", params: [raw] });
  } catch (error) {
    const known = await client.getTransaction({ hash }).then(
      () => true,
      () => false,
    );
    if (!known)
      throw new Error(`${APPROVAL_FAILED}: the node refused the approval (${(error as Error).message})`);
  }
}
