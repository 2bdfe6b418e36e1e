/**
 * Batch-settlement traffic for the indexer's cost bench, signed here and sent raw (as `signSettlements`
 * does exact ones): one channel per buyer opened by an ERC-3009 deposit through the escrow's collector, then
 * blocks of claims, many channels in one `claim` transaction, as a receiver claims them. The devnet's
 * facilitator account is every channel's receiver authorizer and sends every transaction.
 */
import crypto from "node:crypto";
import { BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import { type Address, encodeAbiParameters, encodeFunctionData, type Hex, keccak256, pad } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  BASE_CHAIN_ID,
  BASE_USDC,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from "../src/chain/base.ts";
import { batchSettlementAbi } from "../src/chain/batch-settlement.ts";
import type { DevnetAccount } from "../src/chain/devnet/index.ts";
import { eip3009Types, USDC_EIP712_NAME, USDC_EIP712_VERSION } from "../src/chain/usdc.ts";

const DOMAIN = {
  ...BATCH_SETTLEMENT_DOMAIN,
  chainId: BASE_CHAIN_ID,
  verifyingContract: X402_BATCH_SETTLEMENT_ADDRESS,
} as const;
const FEES = { maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n } as const;

interface Channel {
  buyer: DevnetAccount;
  config: {
    payer: Address;
    payerAuthorizer: Address;
    receiver: Address;
    receiverAuthorizer: Address;
    token: Address;
    withdrawDelay: number;
    salt: Hex;
  };
  id: Hex;
  claimed: bigint;
}

export class ChannelTraffic {
  readonly channels: Channel[];

  constructor(
    private readonly sender: DevnetAccount,
    buyers: readonly DevnetAccount[],
    receiverOf: (i: number) => Address,
    /** Makes the channels' ids differ from another set's of the same buyers and receivers. */
    series = 0,
  ) {
    this.channels = buyers.map((buyer, i) => {
      const config = {
        payer: buyer.address,
        payerAuthorizer: buyer.address,
        receiver: receiverOf(i),
        receiverAuthorizer: sender.address,
        token: BASE_USDC as Address,
        withdrawDelay: 900,
        salt: pad(`0x${(series * 1_000 + i + 1).toString(16)}`, { size: 32 }),
      };
      const id = computeChannelId(config, BASE_CHAIN_ID);
      return { buyer, config, id, claimed: 0n };
    });
  }

  /** One deposit transaction per channel, from `nonce` on. */
  async deposits(nonce: number, amount: bigint): Promise<Hex[]> {
    const out: Hex[] = [];
    for (const c of this.channels) {
      const buyer = privateKeyToAccount(c.buyer.privateKey);
      const salt = BigInt(`0x${crypto.randomBytes(16).toString("hex")}`);
      const authNonce = keccak256(
        encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [c.id, salt]),
      );
      const validBefore = 2n ** 48n;
      const signature = await buyer.signTypedData({
        domain: {
          name: USDC_EIP712_NAME,
          version: USDC_EIP712_VERSION,
          chainId: BASE_CHAIN_ID,
          verifyingContract: BASE_USDC as Address,
        },
        types: eip3009Types,
        primaryType: "ReceiveWithAuthorization",
        message: {
          from: buyer.address,
          to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
          value: amount,
          validAfter: 0n,
          validBefore,
          nonce: authNonce,
        },
      });
      const collectorData = encodeAbiParameters(
        [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes" }],
        [0n, validBefore, salt, signature],
      );
      const data = encodeFunctionData({
        abi: batchSettlementAbi,
        functionName: "deposit",
        args: [c.config, amount, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, collectorData],
      });
      out.push(await this.sign(nonce++, data, 300_000n));
    }
    return out;
  }

  /** One `claim` transaction: `count` channels (round robin from `first`) each claim `amount` more. */
  async claims(nonce: number, first: number, count: number, amount: bigint): Promise<Hex> {
    const rows = [];
    for (let k = 0; k < count; k++) {
      const c = this.channels[(first + k) % this.channels.length] as Channel;
      c.claimed += amount;
      const buyer = privateKeyToAccount(c.buyer.privateKey);
      const signature = await buyer.signTypedData({
        domain: DOMAIN,
        types: voucherTypes,
        primaryType: "Voucher",
        message: { channelId: c.id, maxClaimableAmount: c.claimed },
      });
      rows.push({
        voucher: { channel: c.config, maxClaimableAmount: c.claimed },
        signature,
        totalClaimed: c.claimed,
      });
    }
    const data = encodeFunctionData({ abi: batchSettlementAbi, functionName: "claim", args: [rows] });
    return this.sign(nonce, data, 100_000n + 60_000n * BigInt(count));
  }

  private sign(nonce: number, data: Hex, gas: bigint): Promise<Hex> {
    return privateKeyToAccount(this.sender.privateKey).signTransaction({
      chainId: BASE_CHAIN_ID,
      type: "eip1559",
      nonce,
      to: X402_BATCH_SETTLEMENT_ADDRESS,
      data,
      gas,
      ...FEES,
    });
  }
}
