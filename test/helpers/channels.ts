/**
 * x402 batch-settlement and exact-Permit2 payments on a devnet, through the stock SDK where it has a public
 * entry (the client signs deposits, vouchers and Permit2 payments; its facilitators verify and submit
 * deposits and Permit2 settlements), and plain viem calls with the project's ABI for what the SDK leaves
 * to the receiver (claims, sweeps, refunds). Every transaction is sent by the devnet's facilitator account,
 * the channels' receiver authorizer, so the indexer knows its settlements. The caller mines (`startMiner`).
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchFacilitator } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme as ExactClient } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactFacilitator } from "@x402/evm/exact/facilitator";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  pad,
  publicActions,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BASE_CHAIN_ID, X402_BATCH_SETTLEMENT_ADDRESS } from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import { type Devnet, type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { USDC_EIP712_NAME, USDC_EIP712_VERSION } from "../../src/chain/usdc.ts";

const NETWORK = "eip155:8453";
/** The escrow's shortest withdrawal delay. */
export const MIN_WITHDRAW_DELAY = 900;

export type ChannelConfigOf = ReturnType<typeof channelConfig>;

export function channelConfig(devnet: Devnet, payer: Address, receiver: Address, salt = 1n) {
  return {
    payer,
    payerAuthorizer: payer,
    receiver,
    receiverAuthorizer: devnet.facilitatorAccount.address,
    token: devnet.usdc,
    withdrawDelay: MIN_WITHDRAW_DELAY,
    salt: pad(`0x${salt.toString(16)}`, { size: 32 }),
  };
}

/** A devnet account as a viem wallet that reads too. */
export function walletOf(devnet: Devnet, account: { privateKey: Hex }) {
  return createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: devnetChain(devnet.rpc, devnet.chainId),
    transport: http(devnet.rpc),
    pollingInterval: 20,
  }).extend(publicActions);
}

/** The devnet's facilitator account as a wallet and as the SDK's facilitator signer. */
export function facilitatorOf(devnet: Devnet) {
  const wallet = walletOf(devnet, devnet.facilitatorAccount);
  const reader = createPublicClient({
    chain: devnetChain(devnet.rpc, devnet.chainId),
    transport: http(devnet.rpc),
    pollingInterval: 20,
  });
  const receiptOf = async (hash: Hex): Promise<TransactionReceipt> => {
    const receipt = await pollReceipt(reader, hash, 20_000, 20);
    if (receipt?.status !== "success")
      throw new Error(`${hash}: ${receipt ? "reverted" : "no receipt in 20 s"}`);
    return receipt;
  };
  const signer = toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (args) => wallet.readContract(args as Parameters<typeof wallet.readContract>[0]),
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
    writeContract: (args) => wallet.writeContract(args as Parameters<typeof wallet.writeContract>[0]),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: ({ hash }) => receiptOf(hash),
    getCode: (args) => wallet.getCode(args),
  });
  /** Calls the escrow and waits for a successful receipt. */
  const escrow = async (functionName: string, args: readonly unknown[]) =>
    receiptOf(
      await wallet.writeContract({
        address: X402_BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName,
        args,
      } as never),
    );
  return { wallet, signer, receiptOf, escrow };
}

export type FacilitatorOf = ReturnType<typeof facilitatorOf>;

/** Opens (or tops up) a channel with an ERC-3009 deposit the SDK signs and its facilitator submits. */
export async function depositErc3009(
  devnet: Devnet,
  f: FacilitatorOf,
  buyer: DevnetAccount,
  config: ChannelConfigOf,
  amount: bigint,
): Promise<TransactionReceipt> {
  const requirements: PaymentRequirements = {
    scheme: "batch-settlement",
    network: `eip155:${devnet.chainId}`,
    asset: devnet.usdc,
    amount: "1000",
    payTo: config.receiver,
    maxTimeoutSeconds: 300,
    extra: {
      name: USDC_EIP712_NAME,
      version: USDC_EIP712_VERSION,
      receiverAuthorizer: config.receiverAuthorizer,
      withdrawDelay: config.withdrawDelay,
    },
  };
  const signed = await createBatchSettlementEIP3009DepositPayload(
    privateKeyToAccount(buyer.privateKey),
    2,
    requirements,
    config,
    amount.toString(),
    "1000",
  );
  const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  const settled = await new BatchFacilitator(f.signer).settle(payment, requirements);
  if (!settled.success) throw new Error(`deposit refused: ${JSON.stringify(settled)}`);
  return f.receiptOf(settled.transaction as Hex);
}

/** Claims the channel up to the cumulative `total`, with a voucher the SDK signs for the payer. */
export async function claimChannel(
  f: FacilitatorOf,
  buyer: DevnetAccount,
  config: ChannelConfigOf,
  total: bigint,
): Promise<TransactionReceipt> {
  // The chain the facilitator's wallet is on: Base's devnet, or another chain a devnet plays.
  const chainId = f.wallet.chain?.id ?? BASE_CHAIN_ID;
  const channelId = computeChannelId(config, chainId);
  const voucher = await signVoucher(
    privateKeyToAccount(buyer.privateKey),
    channelId,
    total.toString(),
    chainId === BASE_CHAIN_ID ? NETWORK : `eip155:${chainId}`,
  );
  return f.escrow("claim", [
    [
      {
        voucher: { channel: config, maxClaimableAmount: total },
        signature: voucher.signature,
        totalClaimed: total,
      },
    ],
  ]);
}

/** An exact payment through the Permit2 proxy: the SDK's client signs it, its facilitator settles it. */
export async function payExactPermit2(
  devnet: Devnet,
  f: FacilitatorOf,
  buyer: DevnetAccount,
  payTo: Address,
  amount: bigint,
): Promise<TransactionReceipt> {
  const requirements: PaymentRequirements = {
    scheme: "exact",
    network: `eip155:${devnet.chainId}`,
    asset: devnet.usdc,
    amount: amount.toString(),
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: USDC_EIP712_NAME, version: USDC_EIP712_VERSION, assetTransferMethod: "permit2" },
  };
  const signed = await new ExactClient(privateKeyToAccount(buyer.privateKey)).createPaymentPayload(
    2,
    requirements,
  );
  const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  const settled = await new ExactFacilitator(f.signer).settle(payment, requirements);
  if (!settled.success) throw new Error(`exact Permit2 payment refused: ${JSON.stringify(settled)}`);
  return f.receiptOf(settled.transaction as Hex);
}

/**
 * An upto payment on the devnet's chain: the buyer signs (the SDK's upto client) for at most `max`, and the stock
 * SDK's upto facilitator, the devnet's facilitator account, settles `take` through x402's upto proxy.
 */
export async function payUptoPermit2(
  devnet: Devnet,
  f: FacilitatorOf,
  buyer: DevnetAccount,
  payTo: Address,
  max: bigint,
  take: bigint,
): Promise<TransactionReceipt> {
  const network = `eip155:${devnet.chainId}` as const;
  const facilitator = new UptoFacilitator(f.signer);
  const requirements: PaymentRequirements = {
    scheme: "upto",
    network,
    asset: devnet.usdc,
    amount: max.toString(),
    payTo,
    maxTimeoutSeconds: 300,
    extra: facilitator.getExtra(network) ?? {},
  };
  const signed = await new UptoClient(privateKeyToAccount(buyer.privateKey)).createPaymentPayload(
    2,
    requirements,
  );
  const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
  const settled = await facilitator.settle(payment, { ...requirements, amount: take.toString() });
  if (!settled.success) throw new Error(`upto payment refused: ${JSON.stringify(settled)}`);
  return f.receiptOf(settled.transaction as Hex);
}

export { computeChannelId };
