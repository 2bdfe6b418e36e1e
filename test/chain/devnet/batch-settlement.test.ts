/**
 * x402's `batch-settlement` escrow, its deposit collectors and the `exact` Permit2 proxy on the devnet, driven
 * by the stock SDK wherever it has a public entry: `@x402/evm/batch-settlement/client` computes channel ids
 * and signs deposits and vouchers, `@x402/evm/batch-settlement/facilitator` verifies and submits the
 * deposits, and `@x402/evm/exact/{client,facilitator}` sign and settle a Permit2 `exact` payment. What the
 * SDK leaves to the receiver (claims, settling, refunds) and the payer's withdrawal are plain viem calls with
 * the project's ABI. One devnet for the file, mined on demand; receipts are polled by hash (see upto.test.ts).
 *
 * The tests run in order on shared channels: channel A (ERC-3009 deposit) is claimed, settled, refunded and
 * finally withdrawn, after the chain clock jumps past its delay, so that jump comes last.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  BATCH_SETTLEMENT_DOMAIN,
  claimBatchTypes,
  refundTypes,
  toFacilitatorEvmSigner,
  voucherTypes,
} from "@x402/evm";
import {
  BatchSettlementEvmScheme as BatchClient,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchFacilitator } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme as ExactClient } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactFacilitator } from "@x402/evm/exact/facilitator";
import {
  type Abi,
  type Address,
  type BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  type Hex,
  hashTypedData,
  http,
  keccak256,
  type PublicClient,
  pad,
  parseEther,
  parseEventLogs,
  publicActions,
  type TransactionReceipt,
  type Transport,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import {
  BASE_CHAIN_ID,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS as ESCROW,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
} from "../../../src/chain/base.ts";
import { batchSettlementAbi } from "../../../src/chain/batch-settlement.ts";
import { devnetChain } from "../../../src/chain/devnet/index.ts";
import { erc3009DepositCollectorAbi } from "../../../src/chain/erc3009-deposit-collector.ts";
import { exactProxyAbi } from "../../../src/chain/exact-proxy.ts";
import { permit2DepositCollectorAbi } from "../../../src/chain/permit2-deposit-collector.ts";
import { pollReceipt } from "../../../src/chain/receipt.ts";
import { USDC_EIP712_NAME, USDC_EIP712_VERSION, usdcAbi } from "../../../src/chain/usdc.ts";
import { useDevnet } from "../../helpers/chain.ts";

const NETWORK = "eip155:8453";
const DELAY = 900; // MIN_WITHDRAW_DELAY
const DOMAIN = { ...BATCH_SETTLEMENT_DOMAIN, chainId: BASE_CHAIN_ID, verifyingContract: ESCROW } as const;
const MERCHANT = privateKeyToAccount(generatePrivateKey()).address;
const STRANGER = privateKeyToAccount(generatePrivateKey());
/** Everything a receipt of these tests can hold, to decode its logs by name. */
const LOGS_ABI = [...usdcAbi, ...batchSettlementAbi] as const;

const chain = useDevnet({ buyers: 3 });
let client: PublicClient<Transport, Chain>;
let facilitatorWallet: ReturnType<typeof walletOf>;
let receiverWallet: ReturnType<typeof walletOf>;
let facilitatorSigner: ReturnType<typeof toFacilitatorEvmSigner>;

function walletOf(privateKey: Hex) {
  return createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: devnetChain(chain.devnet.rpc),
    transport: http(chain.devnet.rpc),
    pollingInterval: 20,
  }).extend(publicActions);
}

beforeAll(async () => {
  client = createPublicClient({
    chain: devnetChain(chain.devnet.rpc),
    transport: http(chain.devnet.rpc),
    pollingInterval: 20,
  });
  const receiverKey = generatePrivateKey();
  const test = createTestClient({
    chain: devnetChain(chain.devnet.rpc),
    mode: "anvil",
    transport: http(chain.devnet.rpc),
  });
  await test.setBalance({ address: privateKeyToAccount(receiverKey).address, value: parseEther("1") });
  receiverWallet = walletOf(receiverKey);
  facilitatorWallet = walletOf(chain.devnet.facilitatorAccount.privateKey);
  const w = facilitatorWallet;
  facilitatorSigner = toFacilitatorEvmSigner({
    address: w.account.address,
    readContract: (args) => w.readContract(args as Parameters<typeof w.readContract>[0]),
    verifyTypedData: (args) => w.verifyTypedData(args as Parameters<typeof w.verifyTypedData>[0]),
    writeContract: (args) => w.writeContract(args as Parameters<typeof w.writeContract>[0]),
    sendTransaction: (args) => w.sendTransaction(args),
    waitForTransactionReceipt: ({ hash }) => receiptOf(hash),
    getCode: (args) => w.getCode(args),
  });
}, 60_000);

async function receiptOf(hash: Hex): Promise<TransactionReceipt> {
  const receipt = await pollReceipt(client, hash, 20_000, 20);
  if (!receipt) throw new Error(`no receipt for ${hash} in 20 s`);
  return receipt;
}

/** Sends a contract call from `wallet` and returns its receipt, which must be a success. */
async function send(
  wallet: ReturnType<typeof walletOf>,
  call: { address: Address; functionName: string; args: readonly unknown[] },
): Promise<TransactionReceipt> {
  const hash = await wallet.writeContract({ abi: batchSettlementAbi, ...call } as never);
  const receipt = await receiptOf(hash);
  expect(receipt.status).toBe("success");
  return receipt;
}

/** The custom error an `eth_call` of the call from `from` reverts with. */
async function revertOf(
  from: Address,
  call: { address: Address; abi?: Abi; functionName: string; args: readonly unknown[] },
): Promise<string | undefined> {
  try {
    await client.simulateContract({ account: from, abi: batchSettlementAbi, ...call } as never);
  } catch (error) {
    const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
    return (reverted as ContractFunctionRevertedError | null)?.data?.errorName ?? String(error);
  }
  return undefined;
}

/** The receipt's logs as `[event, emitter, args]`, in order. */
function eventsOf(receipt: TransactionReceipt) {
  return parseEventLogs({ abi: LOGS_ABI, logs: receipt.logs }).map((l) => [
    l.eventName,
    l.address.toLowerCase(),
    l.args,
  ]);
}

const usdcOf = (account: Address) =>
  client.readContract({
    address: chain.devnet.usdc,
    abi: usdcAbi,
    functionName: "balanceOf",
    args: [account],
  });
const channelOf = (channelId: Hex) =>
  client.readContract({
    address: ESCROW,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [channelId],
  });

function buyer(index: number) {
  const b = chain.devnet.buyers[index];
  if (!b) throw new Error(`the devnet has no buyer ${index}`);
  return privateKeyToAccount(b.privateKey);
}

function batchRequirements(extra: Record<string, unknown> = {}): PaymentRequirements {
  return {
    scheme: "batch-settlement",
    network: NETWORK,
    asset: chain.devnet.usdc,
    amount: "100000",
    payTo: receiverWallet.account.address,
    maxTimeoutSeconds: 300,
    extra: {
      name: USDC_EIP712_NAME,
      version: USDC_EIP712_VERSION,
      receiverAuthorizer: chain.devnet.facilitatorAccount.address,
      withdrawDelay: DELAY,
      ...extra,
    },
  };
}

/** Channel A: buyer 0 pays the receiver, the facilitator's signer is the receiver's authorizer. */
function configA() {
  const payer = buyer(0).address;
  return {
    payer,
    payerAuthorizer: payer,
    receiver: receiverWallet.account.address,
    receiverAuthorizer: chain.devnet.facilitatorAccount.address,
    token: chain.devnet.usdc,
    withdrawDelay: DELAY,
    salt: pad("0xa", { size: 32 }),
  };
}

const DEPOSIT_A = 5_000_000n;
const CLAIM_A = 1_500_000n;

describe("x402 batch-settlement and exact-Permit2 on the devnet, stock SDK", () => {
  it("computes channel ids, its EIP-712 domain and digests as the SDK does", async () => {
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const read = (functionName: string, args: readonly unknown[] = []) =>
      client.readContract({ address: ESCROW, abi: batchSettlementAbi, functionName, args } as never);
    expect(await read("getChannelId", [config])).toBe(channelId);
    expect(await read("eip712Domain")).toEqual([
      "0x0f",
      DOMAIN.name,
      DOMAIN.version,
      BigInt(BASE_CHAIN_ID),
      ESCROW,
      pad("0x", { size: 32 }),
      [],
    ]);
    expect(await read("getVoucherDigest", [channelId, 7n])).toBe(
      hashTypedData({
        domain: DOMAIN,
        types: voucherTypes,
        primaryType: "Voucher",
        message: { channelId, maxClaimableAmount: 7n },
      }),
    );
    expect(await read("getRefundDigest", [channelId, 3n, 5n])).toBe(
      hashTypedData({
        domain: DOMAIN,
        types: refundTypes,
        primaryType: "Refund",
        message: { channelId, nonce: 3n, amount: 5n },
      }),
    );
    const claims = [
      { voucher: { channel: config, maxClaimableAmount: 9n }, signature: "0x", totalClaimed: 4n },
    ];
    expect(await read("getClaimBatchDigest", [claims])).toBe(
      hashTypedData({
        domain: DOMAIN,
        types: claimBatchTypes,
        primaryType: "ClaimBatch",
        message: { claims: [{ channelId, maxClaimableAmount: 9n, totalClaimed: 4n }] },
      }),
    );
  });

  it("takes an ERC-3009 deposit signed by the SDK client and submitted by the SDK facilitator", async () => {
    const payer = buyer(0);
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const requirements = batchRequirements();
    const signed = await createBatchSettlementEIP3009DepositPayload(
      payer,
      2,
      requirements,
      config,
      DEPOSIT_A.toString(),
      "100000",
    );
    const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
    const facilitator = new BatchFacilitator(facilitatorSigner);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: true,
      payer: payer.address,
    });
    const before = await usdcOf(payer.address);

    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, payer: payer.address, amount: DEPOSIT_A.toString() });
    const receipt = await receiptOf(settled.transaction as Hex);
    expect(receipt.to?.toLowerCase()).toBe(ESCROW.toLowerCase());
    const { salt } = (
      signed.payload as { deposit: { authorization: { erc3009Authorization: { salt: Hex } } } }
    ).deposit.authorization.erc3009Authorization;
    const nonce = keccak256(
      encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [channelId, BigInt(salt)]),
    );
    expect(eventsOf(receipt)).toEqual([
      ["AuthorizationUsed", chain.devnet.usdc.toLowerCase(), { authorizer: payer.address, nonce }],
      [
        "Transfer",
        chain.devnet.usdc.toLowerCase(),
        { from: payer.address, to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, value: DEPOSIT_A },
      ],
      [
        "Transfer",
        chain.devnet.usdc.toLowerCase(),
        { from: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, to: ESCROW, value: DEPOSIT_A },
      ],
      ["ChannelCreated", ESCROW.toLowerCase(), { channelId, config }],
      [
        "Deposited",
        ESCROW.toLowerCase(),
        {
          channelId,
          sender: chain.devnet.facilitatorAccount.address,
          amount: DEPOSIT_A,
          newBalance: DEPOSIT_A,
        },
      ],
    ]);
    expect(await usdcOf(payer.address)).toBe(before - DEPOSIT_A);
    expect(await channelOf(channelId)).toEqual([DEPOSIT_A, 0n]);
  });

  it("lets the receiver claim an SDK-signed voucher once; the same claim again is a no-op", async () => {
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const voucher = await signVoucher(buyer(0), channelId, CLAIM_A.toString(), NETWORK);
    const claims = [
      {
        voucher: { channel: config, maxClaimableAmount: CLAIM_A },
        signature: voucher.signature,
        totalClaimed: CLAIM_A,
      },
    ];
    const first = await send(receiverWallet, { address: ESCROW, functionName: "claim", args: [claims] });
    expect(eventsOf(first)).toEqual([
      [
        "Claimed",
        ESCROW.toLowerCase(),
        { channelId, sender: receiverWallet.account.address, claimAmount: CLAIM_A, newTotalClaimed: CLAIM_A },
      ],
    ]);
    const again = await send(receiverWallet, { address: ESCROW, functionName: "claim", args: [claims] });
    expect(again.logs).toEqual([]);
    expect(await channelOf(channelId)).toEqual([DEPOSIT_A, CLAIM_A]);
    expect(
      await client.readContract({
        address: ESCROW,
        abi: batchSettlementAbi,
        functionName: "receivers",
        args: [config.receiver, chain.devnet.usdc],
      }),
    ).toEqual([CLAIM_A, 0n]);
  });

  it("refuses wrong signatures and callers with x402's errors", async () => {
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const receiver = receiverWallet.account.address;
    const payer = config.payer;
    const claimOf = (signature: Hex, max: bigint, total: bigint) => ({
      address: ESCROW,
      functionName: "claim",
      args: [[{ voucher: { channel: config, maxClaimableAmount: max }, signature, totalClaimed: total }]],
    });
    const byStranger = (await signVoucher(STRANGER, channelId, "3000000", NETWORK)).signature;
    const byPayer = (await signVoucher(buyer(0), channelId, "3000000", NETWORK)).signature;

    expect(await revertOf(payer, claimOf(byPayer, 3_000_000n, 2_000_000n))).toBe("NotAuthorizedToClaim");
    expect(await revertOf(receiver, claimOf(byStranger, 3_000_000n, 2_000_000n))).toBe("InvalidSignature");
    expect(await revertOf(receiver, claimOf(byPayer, 3_000_000n, 4_000_000n))).toBe("ClaimExceedsCeiling");
    expect(await revertOf(receiver, claimOf(byPayer.slice(0, 130) as Hex, 3_000_000n, 2_000_000n))).toBe(
      "ECDSAInvalidSignatureLength",
    );
    expect(await revertOf(receiver, { address: ESCROW, functionName: "claim", args: [[]] })).toBe(
      "EmptyBatch",
    );
    // The payer's own signature is no receiver authorization for a relayed claim.
    expect(
      await revertOf(STRANGER.address, {
        address: ESCROW,
        functionName: "claimWithSignature",
        args: [...claimOf(byPayer, 3_000_000n, 2_000_000n).args, byPayer],
      }),
    ).toBe("InvalidSignature");
    expect(await revertOf(payer, { address: ESCROW, functionName: "refund", args: [config, 1n] })).toBe(
      "NotAuthorizedToRefund",
    );
    const refundSignedBy = (signer: typeof STRANGER, nonce: bigint) =>
      signer.signTypedData({
        domain: DOMAIN,
        types: refundTypes,
        primaryType: "Refund",
        message: { channelId, nonce, amount: 1n },
      });
    const refundWithSignature = (nonce: bigint, signature: Hex) => ({
      address: ESCROW,
      functionName: "refundWithSignature",
      args: [config, 1n, nonce, signature],
    });
    expect(
      await revertOf(STRANGER.address, refundWithSignature(0n, await refundSignedBy(STRANGER, 0n))),
    ).toBe("InvalidSignature");
    expect(
      await revertOf(STRANGER.address, refundWithSignature(1n, await refundSignedBy(STRANGER, 1n))),
    ).toBe("InvalidRefundNonce");
    expect(
      await revertOf(receiver, { address: ESCROW, functionName: "initiateWithdraw", args: [config, 1n] }),
    ).toBe("InvalidChannel");
    expect(await revertOf(payer, { address: ESCROW, functionName: "finalizeWithdraw", args: [config] })).toBe(
      "WithdrawalNotPending",
    );
    expect(
      await revertOf(payer, {
        address: ESCROW,
        functionName: "deposit",
        args: [{ ...config, withdrawDelay: DELAY - 1 }, 1n, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, "0x"],
      }),
    ).toBe("WithdrawDelayOutOfRange");
    // Only the escrow may make a collector pull a payer's tokens.
    for (const [address, abi] of [
      [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, erc3009DepositCollectorAbi],
      [PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, permit2DepositCollectorAbi],
    ] as const) {
      expect(
        await revertOf(receiver, {
          address,
          abi,
          functionName: "collect",
          args: [payer, chain.devnet.usdc, 1n, channelId, "0x"],
        }),
      ).toBe("OnlyX402BatchSettlement");
    }
  });

  it("settles the claimed money to the receiver, refunds part of the rest to the payer", async () => {
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const receiver = receiverWallet.account.address;
    const [receiverBefore, payerBefore] = await Promise.all([usdcOf(receiver), usdcOf(config.payer)]);

    // Anyone may sweep: here the facilitator's signer.
    const settled = await send(facilitatorWallet, {
      address: ESCROW,
      functionName: "settle",
      args: [receiver, chain.devnet.usdc],
    });
    expect(eventsOf(settled)).toEqual([
      ["Transfer", chain.devnet.usdc.toLowerCase(), { from: ESCROW, to: receiver, value: CLAIM_A }],
      [
        "Settled",
        ESCROW.toLowerCase(),
        {
          receiver,
          token: chain.devnet.usdc,
          sender: chain.devnet.facilitatorAccount.address,
          amount: CLAIM_A,
        },
      ],
    ]);
    expect(await usdcOf(receiver)).toBe(receiverBefore + CLAIM_A);

    const refunded = await send(receiverWallet, {
      address: ESCROW,
      functionName: "refund",
      args: [config, 1_000_000n],
    });
    expect(eventsOf(refunded)).toEqual([
      ["Refunded", ESCROW.toLowerCase(), { channelId, sender: receiver, amount: 1_000_000n }],
      ["Transfer", chain.devnet.usdc.toLowerCase(), { from: ESCROW, to: config.payer, value: 1_000_000n }],
    ]);

    // A relayed refund, signed by the receiver's authorizer for the nonce the direct refund moved to.
    const signature = await facilitatorWallet.account.signTypedData({
      domain: DOMAIN,
      types: refundTypes,
      primaryType: "Refund",
      message: { channelId, nonce: 1n, amount: 500_000n },
    });
    const relayed = await send(walletOf(chain.devnet.buyers[2]?.privateKey as Hex), {
      address: ESCROW,
      functionName: "refundWithSignature",
      args: [config, 500_000n, 1n, signature],
    });
    expect(eventsOf(relayed)[0]).toEqual([
      "Refunded",
      ESCROW.toLowerCase(),
      { channelId, sender: buyer(2).address, amount: 500_000n },
    ]);
    expect(await usdcOf(config.payer)).toBe(payerBefore + 1_500_000n);
    expect(await channelOf(channelId)).toEqual([DEPOSIT_A - 1_500_000n, CLAIM_A]);
    expect(
      await client.readContract({
        address: ESCROW,
        abi: batchSettlementAbi,
        functionName: "refundNonce",
        args: [channelId],
      }),
    ).toBe(2n);
  });

  it("takes a Permit2 deposit the SDK client signs and the SDK facilitator submits", async () => {
    const payer = buyer(1);
    const requirements = batchRequirements({ assetTransferMethod: "permit2" });
    const signed = await new BatchClient(payer).createPaymentPayload(2, requirements);
    const payload = signed.payload as {
      channelConfig: Parameters<typeof computeChannelId>[0];
      deposit: { amount: string; authorization: { permit2Authorization: { spender: Address } } };
    };
    // The SDK names the devnet's collector as the Permit2 spender.
    expect(payload.deposit.authorization.permit2Authorization.spender).toBe(
      PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
    );
    const amount = BigInt(payload.deposit.amount);
    const channelId = computeChannelId(payload.channelConfig, BASE_CHAIN_ID);
    const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
    const facilitator = new BatchFacilitator(facilitatorSigner);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({ isValid: true });
    const before = await usdcOf(payer.address);

    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, amount: amount.toString() });
    const receipt = await receiptOf(settled.transaction as Hex);
    expect(eventsOf(receipt).map(([name]) => name)).toEqual(["Transfer", "ChannelCreated", "Deposited"]);
    expect(eventsOf(receipt)[0]?.[2]).toEqual({ from: payer.address, to: ESCROW, value: amount });
    expect(await usdcOf(payer.address)).toBe(before - amount);
    expect(await channelOf(channelId)).toEqual([amount, 0n]);
  });

  it("settles an exact payment through the Permit2 proxy: the SDK signs, verifies and settles it", async () => {
    const payer = buyer(2);
    const requirements: PaymentRequirements = {
      scheme: "exact",
      network: NETWORK,
      asset: chain.devnet.usdc,
      amount: "250000",
      payTo: MERCHANT,
      maxTimeoutSeconds: 300,
      extra: { name: USDC_EIP712_NAME, version: USDC_EIP712_VERSION, assetTransferMethod: "permit2" },
    };
    const signed = await new ExactClient(payer).createPaymentPayload(2, requirements);
    const payment: PaymentPayload = { x402Version: 2, accepted: requirements, payload: signed.payload };
    const facilitator = new ExactFacilitator(facilitatorSigner);
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: true,
      payer: payer.address,
    });
    const [payerBefore, merchantBefore] = await Promise.all([usdcOf(payer.address), usdcOf(MERCHANT)]);

    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true, payer: payer.address });
    const receipt = await receiptOf(settled.transaction as Hex);
    expect(receipt.to?.toLowerCase()).toBe(X402_EXACT_PROXY_ADDRESS.toLowerCase());
    expect(
      parseEventLogs({ abi: usdcAbi, logs: receipt.logs, eventName: "Transfer" }).map((t) => t.args),
    ).toEqual([{ from: payer.address, to: MERCHANT, value: 250_000n }]);
    expect(
      parseEventLogs({ abi: exactProxyAbi, logs: receipt.logs, eventName: "Settled" }).map((e) => e.address),
    ).toEqual([X402_EXACT_PROXY_ADDRESS.toLowerCase()]);
    expect(await usdcOf(payer.address)).toBe(payerBefore - 250_000n);
    expect(await usdcOf(MERCHANT)).toBe(merchantBefore + 250_000n);
  });

  it("returns the rest to the payer by a withdrawal, only after the channel's delay", async () => {
    const payer = walletOf(chain.devnet.buyers[0]?.privateKey as Hex);
    const config = configA();
    const channelId = computeChannelId(config, BASE_CHAIN_ID);
    const rest = DEPOSIT_A - 1_500_000n - CLAIM_A;
    const before = await usdcOf(config.payer);

    const initiated = await send(payer, {
      address: ESCROW,
      functionName: "initiateWithdraw",
      args: [config, rest],
    });
    const { timestamp } = await client.getBlock({ blockNumber: initiated.blockNumber });
    expect(eventsOf(initiated)).toEqual([
      [
        "WithdrawInitiated",
        ESCROW.toLowerCase(),
        { channelId, amount: rest, finalizeAfter: Number(timestamp) + DELAY },
      ],
    ]);
    const finalize = { address: ESCROW, functionName: "finalizeWithdraw", args: [config] } as const;
    expect(await revertOf(config.payer, finalize)).toBe("WithdrawDelayNotElapsed");
    expect(await revertOf(receiverWallet.account.address, finalize)).toBe("NotAuthorizedToFinalizeWithdraw");
    expect(
      await revertOf(config.payer, { address: ESCROW, functionName: "initiateWithdraw", args: [config, 1n] }),
    ).toBe("WithdrawalAlreadyPending");

    // anvil ignores evm_increaseTime while the devnet's 2 s block interval is set; an exact timestamp wins.
    const test = createTestClient({
      chain: devnetChain(chain.devnet.rpc),
      mode: "anvil",
      transport: http(chain.devnet.rpc),
    });
    await test.setNextBlockTimestamp({ timestamp: timestamp + BigInt(DELAY) });
    await chain.devnet.mine(1);
    const finalized = await send(payer, finalize);
    expect(eventsOf(finalized)).toEqual([
      ["WithdrawFinalized", ESCROW.toLowerCase(), { channelId, sender: config.payer, amount: rest }],
      ["Transfer", chain.devnet.usdc.toLowerCase(), { from: ESCROW, to: config.payer, value: rest }],
    ]);
    expect(await usdcOf(config.payer)).toBe(before + rest);
    // What was claimed stays, as the channel's whole balance.
    expect(await channelOf(channelId)).toEqual([CLAIM_A, CLAIM_A]);
  });
});
