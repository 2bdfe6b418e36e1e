/**
 * The ground truth of payment channels: a channel's vouchers are not on chain, the merchant's claims are
 * (x402 batch-settlement), and a claim is what the report counts as the payer's payment (docs/report.md,
 * "Channels"). So the truth records each `Claimed` of the escrow as it appears, for the channel's payer and
 * receiver as its `ChannelCreated` names them, and the behaviour of the simulated wallet that paid through
 * it (channels.ts). Read from the chain with plain `eth_getLogs`, apart from the indexer's decoding, so the
 * check compares two readings. What the merchant claimed of a channel in all is checked against what the
 * payer's vouchers were charged when the session ends (channel-refund.ts).
 */
import { getAbiItem, type Hex } from "viem";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../chain/base.ts";
import { batchSettlementAbi } from "../chain/batch-settlement.ts";
import { channelBehaviour } from "./channels.ts";
import type { SimChain } from "./sim-chain.ts";
import type { SimWallets } from "./sim-wallets.ts";
import type { TruthRecord } from "./truth.ts";

const CLAIMED = getAbiItem({ abi: batchSettlementAbi, name: "Claimed" });
const CREATED = getAbiItem({ abi: batchSettlementAbi, name: "ChannelCreated" });

interface ChannelParties {
  payer: string;
  payTo: string;
}

export class ChannelClaims {
  private readonly parties = new Map<Hex, ChannelParties>();

  constructor(
    private readonly chain: SimChain,
    private readonly wallets: SimWallets,
    /** Merchant ids by their wallet, lower-case. */
    private readonly merchants: ReadonlyMap<string, string>,
    /** The chain's first block, where a channel's creation is looked for. */
    private readonly firstBlock: number,
    /** The last block whose claims the truth holds. */
    private scanned: number,
  ) {}

  /** The claims of blocks after the last scanned up to `toBlock`, as truth records. */
  async scan(toBlock: number): Promise<TruthRecord[]> {
    if (toBlock <= this.scanned) return [];
    const logs = await this.chain.client.getLogs({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      event: CLAIMED,
      fromBlock: BigInt(this.scanned + 1),
      toBlock: BigInt(toBlock),
    });
    const records: TruthRecord[] = [];
    for (const log of logs) {
      const { channelId, claimAmount } = log.args as { channelId: Hex; claimAmount: bigint };
      const parties = await this.partiesOf(channelId);
      const id = this.wallets.idOf(parties.payer);
      const behaviour = id === undefined ? undefined : channelBehaviour(id);
      // A channel no simulated wallet paid through is nobody's truth: the check then finds it unexplained.
      if (behaviour === undefined || claimAmount === 0n) continue;
      records.push({
        tx_hash: (log.transactionHash as Hex).toLowerCase(),
        block_number: Number(log.blockNumber),
        payer: parties.payer,
        pay_to: parties.payTo,
        amount: claimAmount.toString(),
        behaviour,
        merchant: this.merchants.get(parties.payTo) ?? parties.payTo,
        endpoint: "channel claim",
        scheme: "batch-settlement",
        transfer_method: "channel",
        channel: channelId.toLowerCase(),
      });
    }
    this.scanned = toBlock;
    return records;
  }

  /** The channel's payer and receiver, from its creation. */
  private async partiesOf(channelId: Hex): Promise<ChannelParties> {
    const known = this.parties.get(channelId);
    if (known) return known;
    const [created] = await this.chain.client.getLogs({
      address: X402_BATCH_SETTLEMENT_ADDRESS,
      event: CREATED,
      args: { channelId },
      fromBlock: BigInt(this.firstBlock),
    });
    const config = (created?.args as { config?: { payer: string; receiver: string } } | undefined)?.config;
    if (!config) throw new Error(`the escrow's claim of channel ${channelId} has no ChannelCreated on chain`);
    const parties = { payer: config.payer.toLowerCase(), payTo: config.receiver.toLowerCase() };
    this.parties.set(channelId, parties);
    return parties;
  }
}
