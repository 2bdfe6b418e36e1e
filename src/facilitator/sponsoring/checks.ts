/**
 * Whether a payment's gas sponsoring is done, and how: decided from the payment and the chain before
 * anything is signed or sent (docs/facilitator.md, "Gas sponsoring"). This facilitator pays for a buyer's
 * Permit2 approval only together with the payment it makes possible, for that payment's payer, token and
 * amount, and only when the wallet lacks the allowance:
 *
 * - no sponsoring asked, or a payment that needs no allowance (EIP-3009; a batch-settlement deposit's
 *   permit is the SDK's, inside the deposit's own transaction): `none`, settled as before;
 * - a wallet whose Permit2 allowance already covers the payment: `plain`, settled without the extension;
 * - an EIP-2612 permit: the payer's signature, for Permit2, on this token's domain, at the token's current
 *   nonce, for exactly the amount the proxy takes (`settleWithPermit` reverts on any other), not expired;
 * - a signed raw approval: exactly `approve(Permit2, amount)` on the token, no ETH, this chain, signed by
 *   the payer at its next nonce, for at least the payment, at a gas limit and fee this facilitator would pay
 *   (`APPROVAL_GAS_CAP`, `FEE_CAP_FACTOR` x its own fee estimate, not below the base fee), and the approval
 *   followed by the settlement simulated together;
 * - and for either, the payer's balance covering what is settled.
 * Anything else is `refused`, with the reason and what to do.
 */

import { x402ExactPermit2ProxyABI, x402UptoPermit2ProxyABI } from "@x402/evm";
import type { Eip2612GasSponsoringInfo, Erc20ApprovalGasSponsoringInfo } from "@x402/extensions";
import {
  type Chain,
  decodeFunctionData,
  domainSeparator,
  encodeFunctionData,
  formatEther,
  getAddress,
  type Hex,
  keccak256,
  type PublicClient,
  parseErc6492Signature,
  parseTransaction,
  recoverTransactionAddress,
  type Transport,
} from "viem";
import { PERMIT2_ADDRESS, X402_EXACT_PROXY_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../../chain/base.ts";
import { eip2612Types, usdcAbi } from "../../chain/usdc.ts";
import { amountAtStake, type CheckedPayment, type Permit2Payload } from "../authorization.ts";
import { INSUFFICIENT_FUNDS } from "../error-codes.ts";
import { sponsoringOf } from "./extension.ts";
import * as codes from "./reasons.ts";

/** The most gas a buyer's approval may ask this facilitator to fund (an `approve` uses about 46,000). */
export const APPROVAL_GAS_CAP = 100_000n;
/** Its max fee per gas may be at most this many times this facilitator's own estimate. */
export const FEE_CAP_FACTOR = 2n;
/** A permit must outlive its check by this long (seconds), as the SDK asks of Permit2's deadline. */
const DEADLINE_MARGIN_S = 6n;

/** A buyer's signed approval, as checked: its bytes, hash and what it may cost its sender (gas x max fee). */
export interface CheckedApproval {
  raw: Hex;
  hash: Hex;
  gas: bigint;
  maxFeePerGas: bigint;
}

export type Decision =
  | { kind: "none" }
  | { kind: "plain"; why: string }
  | { kind: "refused"; reason: string; message: string }
  | { kind: "eip2612"; info: Eip2612GasSponsoringInfo }
  | { kind: "erc20Approval"; info: Erc20ApprovalGasSponsoringInfo; approval: CheckedApproval };

export interface CheckOptions {
  client: PublicClient<Transport, Chain>;
  /** The settling account: the settlement's simulation is sent as from it (upto's proxy checks). */
  facilitator: `0x${string}`;
}

const refused = (reason: string, message: string): Decision => ({ kind: "refused", reason, message });

/** The decision for `payment`, as it stands on chain now. */
export async function decideSponsoring(options: CheckOptions, payment: CheckedPayment): Promise<Decision> {
  const sponsoring = sponsoringOf(payment.payload);
  if (!sponsoring) return { kind: "none" };
  if (payment.signed.method === "eip3009")
    return { kind: "plain", why: "an EIP-3009 authorization needs no allowance" };
  if (payment.signed.method === "deposit") {
    // The permit goes in the deposit's own transaction, the SDK's as before; a raw approval would be a
    // transaction of its own before it, which this facilitator does not send for channels.
    return sponsoring.kind === "eip2612"
      ? { kind: "none" }
      : refused(
          codes.SPONSORING_UNSUPPORTED,
          "a batch-settlement deposit's Permit2 approval is not sponsored here: deposit with an ERC-3009 authorization (the channel's default), which needs no approval and no ETH",
        );
  }
  const { client } = options;
  const payer = getAddress(payment.terms.payer);
  const asset = getAddress(payment.requirements.asset);
  const info = sponsoring.info;
  const what = sponsoring.kind === "eip2612" ? "permit" : "approval";
  const prefix = sponsoring.kind === "eip2612" ? "eip2612" : "erc20_approval";
  if (!isAddress(info.from) || getAddress(info.from) !== payer)
    return refused(`${prefix}_from_mismatch`, `the ${what} is from ${info.from}, not the payer ${payer}`);
  if (!isAddress(info.asset) || getAddress(info.asset) !== asset)
    return refused(
      `${prefix}_asset_mismatch`,
      `the ${what} is for token ${info.asset}, not the payment's ${asset}`,
    );
  if (!isAddress(info.spender) || getAddress(info.spender) !== getAddress(PERMIT2_ADDRESS))
    return refused(
      `${prefix}_spender_not_permit2`,
      `the ${what} is for spender ${info.spender}, not Permit2 (${PERMIT2_ADDRESS})`,
    );
  // What the payment may take through Permit2: the signed amount (upto's maximum).
  const needed = payment.terms.value;
  const token = { address: asset, abi: usdcAbi } as const;
  const [allowance, balance] = await Promise.all([
    client.readContract({ ...token, functionName: "allowance", args: [payer, PERMIT2_ADDRESS] }),
    client.readContract({ ...token, functionName: "balanceOf", args: [payer] }),
  ]);
  if (allowance >= needed)
    return { kind: "plain", why: `the wallet's Permit2 allowance (${allowance}) covers the payment` };
  const stake = amountAtStake(payment);
  if (balance < stake) {
    return refused(
      INSUFFICIENT_FUNDS,
      `the payer holds ${balance} atomic units of the token, less than the ${stake} settled: no Permit2 approval is sponsored for a payment that cannot be made`,
    );
  }
  return sponsoring.kind === "eip2612"
    ? checkPermit(client, payment, sponsoring.info, needed)
    : checkApproval(options, payment, sponsoring.info, needed);
}

/** An EIP-2612 permit that `settleWithPermit` will use: every check the token and the proxy make. */
async function checkPermit(
  client: PublicClient<Transport, Chain>,
  payment: CheckedPayment,
  info: Eip2612GasSponsoringInfo,
  needed: bigint,
): Promise<Decision> {
  if (!/^[0-9]+$/.test(info.amount) || !/^[0-9]+$/.test(info.nonce) || !/^[0-9]+$/.test(info.deadline))
    return refused(codes.EIP2612_FORMAT, "the permit's amount, nonce and deadline must be decimal integers");
  const value = BigInt(info.amount);
  if (value !== needed) {
    return refused(
      codes.PERMIT_AMOUNT_MISMATCH,
      `the permit approves ${value}, ${value < needed ? "less than" : "not"} the ${needed} the payment's Permit2 authorization takes: the proxy's settleWithPermit needs exactly that amount; sign the permit for it`,
    );
  }
  if (BigInt(info.deadline) < BigInt(Math.floor(Date.now() / 1000)) + DEADLINE_MARGIN_S)
    return refused(codes.EIP2612_DEADLINE_EXPIRED, `the permit's deadline ${info.deadline} has passed`);
  const payer = getAddress(payment.terms.payer);
  const asset = getAddress(payment.requirements.asset);
  const token = { address: asset, abi: usdcAbi } as const;
  const extra = payment.requirements.extra as { name?: unknown; version?: unknown };
  const [nonce, separator, name, version] = await Promise.all([
    client.readContract({ ...token, functionName: "nonces", args: [payer] }),
    client.readContract({ ...token, functionName: "DOMAIN_SEPARATOR" }),
    typeof extra.name === "string" ? extra.name : client.readContract({ ...token, functionName: "name" }),
    typeof extra.version === "string"
      ? extra.version
      : client.readContract({ ...token, functionName: "version" }),
  ]);
  if (BigInt(info.nonce) !== nonce) {
    return refused(
      codes.EIP2612_NONCE_MISMATCH,
      `the permit is signed at the token's nonce ${info.nonce}, but the payer's next is ${nonce} (another permit was used since): sign it again`,
    );
  }
  const domain = { name, version, chainId: client.chain.id, verifyingContract: asset };
  // The domain the buyer signed must be the token's own, or the permit fails on chain.
  if (domainSeparator({ domain }) !== separator) {
    return refused(
      codes.EIP2612_INVALID_SIGNATURE,
      `the token's EIP-712 domain is not ${JSON.stringify(name)} version ${JSON.stringify(version)}: the permit could not be used`,
    );
  }
  const signed = await client
    .verifyTypedData({
      address: payer,
      domain,
      types: eip2612Types,
      primaryType: "Permit",
      message: {
        owner: payer,
        spender: PERMIT2_ADDRESS,
        value,
        nonce,
        deadline: BigInt(info.deadline),
      },
      signature: info.signature as Hex,
    })
    .catch(() => false);
  if (!signed)
    return refused(codes.EIP2612_INVALID_SIGNATURE, `the permit is not signed by the payer ${payer}`);
  return { kind: "eip2612", info };
}

/** A buyer's raw approval this facilitator would fund and broadcast before the settlement. */
async function checkApproval(
  options: CheckOptions,
  payment: CheckedPayment,
  info: Erc20ApprovalGasSponsoringInfo,
  needed: bigint,
): Promise<Decision> {
  const { client } = options;
  const payer = getAddress(payment.terms.payer);
  const asset = getAddress(payment.requirements.asset);
  if (!/^[0-9]+$/.test(info.amount))
    return refused(codes.ERC20_FORMAT, "the approval's amount must be a decimal integer");
  const amount = BigInt(info.amount);
  if (amount < needed) {
    return refused(
      codes.APPROVAL_TOO_SMALL,
      `the approval is for ${amount}, less than the ${needed} the payment's Permit2 authorization takes`,
    );
  }
  const raw = info.signedTransaction as Hex;
  let tx: ReturnType<typeof parseTransaction>;
  let sender: `0x${string}`;
  try {
    tx = parseTransaction(raw);
    sender = await recoverTransactionAddress({ serializedTransaction: raw as `0x02${string}` });
  } catch {
    return refused(codes.APPROVAL_TX_PARSE_FAILED, "the approval is not a signed transaction");
  }
  if (tx.type !== "eip1559")
    return refused(
      codes.APPROVAL_TX_PARSE_FAILED,
      `the approval is a ${tx.type} transaction, not an EIP-1559 one`,
    );
  if (tx.chainId !== client.chain.id)
    return refused(
      codes.APPROVAL_TX_WRONG_CHAIN,
      `the approval is signed for chain ${tx.chainId}, not ${client.chain.id}`,
    );
  if (!tx.to || getAddress(tx.to) !== asset)
    return refused(
      codes.APPROVAL_TX_WRONG_TARGET,
      `the approval calls ${tx.to ?? "no contract"}, not the token ${asset}`,
    );
  const exactly = encodeFunctionData({
    abi: usdcAbi,
    functionName: "approve",
    args: [PERMIT2_ADDRESS, amount],
  });
  if ((tx.data ?? "0x").toLowerCase() !== exactly.toLowerCase() || (tx.value ?? 0n) !== 0n) {
    return refused(
      approvalCallReason(tx.data),
      `the approval must be exactly approve(${PERMIT2_ADDRESS}, ${amount}) on ${asset}, sending no ETH and nothing else`,
    );
  }
  if ((tx.accessList?.length ?? 0) > 0)
    return refused(codes.APPROVAL_TX_INVALID_CALLDATA, "the approval must carry no access list");
  if (getAddress(sender) !== payer)
    return refused(
      codes.APPROVAL_TX_SIGNER_MISMATCH,
      `the approval is signed by ${sender}, not the payer ${payer}`,
    );
  const gas = tx.gas ?? 0n;
  const maxFeePerGas = tx.maxFeePerGas ?? 0n;
  const [nonce, fees, block] = await Promise.all([
    client.getTransactionCount({ address: payer, blockTag: "latest" }),
    client.estimateFeesPerGas(),
    client.getBlock({ blockTag: "latest" }),
  ]);
  if (tx.nonce !== nonce) {
    return refused(
      codes.APPROVAL_TX_WRONG_NONCE,
      `the approval is signed at the wallet's nonce ${tx.nonce}, but its next transaction is ${nonce}: sign it again`,
    );
  }
  const feeCap = FEE_CAP_FACTOR * fees.maxFeePerGas;
  if (gas > APPROVAL_GAS_CAP || maxFeePerGas > feeCap) {
    return refused(
      codes.APPROVAL_TX_TOO_COSTLY,
      `the approval may cost up to ${formatEther(gas * maxFeePerGas)} ETH (gas limit ${gas}, max fee ${maxFeePerGas} wei): this facilitator funds at most ${APPROVAL_GAS_CAP} gas at ${feeCap} wei (${FEE_CAP_FACTOR}x its fee estimate)`,
    );
  }
  const baseFee = block.baseFeePerGas ?? 0n;
  if (maxFeePerGas < baseFee || (tx.maxPriorityFeePerGas ?? 0n) > maxFeePerGas) {
    return refused(
      codes.APPROVAL_TX_UNDERPRICED,
      `the approval's max fee ${maxFeePerGas} wei is below the chain's base fee ${baseFee}: it could not be mined`,
    );
  }
  if (!(await simulateApproved(options, payment, { from: payer, to: asset, data: exactly }))) {
    return refused(
      codes.APPROVAL_SIMULATION_FAILED,
      "the approval followed by the settlement fails in simulation: nothing was sent",
    );
  }
  return { kind: "erc20Approval", info, approval: { raw, hash: keccak256(raw), gas, maxFeePerGas } };
}

/** The SDK's reason for a call that is not the approval it should be. */
function approvalCallReason(data: Hex | undefined): string {
  if (!data?.toLowerCase().startsWith("0x095ea7b3")) return codes.APPROVAL_TX_WRONG_SELECTOR;
  try {
    const { args } = decodeFunctionData({ abi: usdcAbi, data });
    if (getAddress(String(args?.[0])) !== getAddress(PERMIT2_ADDRESS)) return codes.APPROVAL_TX_WRONG_SPENDER;
  } catch {
    // Not decodable: wrong calldata, below.
  }
  return codes.APPROVAL_TX_INVALID_CALLDATA;
}

/**
 * The approval then the settlement, simulated in one block (`eth_simulateV1`): the approval as from the
 * payer (no balance checked: it has no ETH yet), the settlement as this facilitator sends it.
 */
async function simulateApproved(
  { client, facilitator }: CheckOptions,
  payment: CheckedPayment,
  approval: { from: `0x${string}`; to: `0x${string}`; data: Hex },
): Promise<boolean> {
  const settle = settleCall(payment);
  try {
    const [block] = await client.simulateBlocks({
      blocks: [
        {
          calls: [
            { account: approval.from, to: approval.to, data: approval.data },
            { account: facilitator, to: settle.to, data: settle.data },
          ],
        },
      ],
      validation: false,
    });
    return block?.calls.every((c) => c.status === "success") ?? false;
  } catch {
    return false;
  }
}

/** The proxy call that settles a Permit2 payment, as `@x402/evm` builds it (suffix apart). */
export function settleCall(payment: CheckedPayment): { to: `0x${string}`; data: Hex } {
  const p = (payment.signed as { payload: Permit2Payload }).payload;
  const a = p.permit2Authorization;
  const permit = {
    permitted: { token: getAddress(a.permitted.token), amount: BigInt(a.permitted.amount) },
    nonce: BigInt(a.nonce),
    deadline: BigInt(a.deadline),
  };
  const { signature } = parseErc6492Signature(p.signature);
  const owner = getAddress(a.from);
  if (payment.requirements.scheme === "upto") {
    const witness = {
      to: getAddress(a.witness.to),
      facilitator: getAddress(a.witness.facilitator as `0x${string}`),
      validAfter: BigInt(a.witness.validAfter),
    };
    const data = encodeFunctionData({
      abi: x402UptoPermit2ProxyABI,
      functionName: "settle",
      args: [permit, BigInt(payment.requirements.amount), owner, witness, signature],
    });
    return { to: X402_UPTO_PROXY_ADDRESS as `0x${string}`, data };
  }
  const witness = { to: getAddress(a.witness.to), validAfter: BigInt(a.witness.validAfter) };
  const data = encodeFunctionData({
    abi: x402ExactPermit2ProxyABI,
    functionName: "settle",
    args: [permit, owner, witness, signature],
  });
  return { to: X402_EXACT_PROXY_ADDRESS as `0x${string}`, data };
}

function isAddress(value: unknown): value is `0x${string}` {
  return typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value);
}
