/**
 * A voucher through an open channel, checked as the SDK's batch-settlement server checks it, natively.
 *
 * Why: the SDK's check of a voucher (`@x402/evm/batch-settlement/server`'s `handleBeforeVerify`, then
 * `verifyVoucherLocally`) recovers the payer with viem and `@noble/curves` and hashes the channel's config
 * as EIP-712 typed data three times: 7.6 ms of the project's 16-22 ms of server CPU a voucher, 0.6-0.9x the
 * stock stack's whole voucher (docs/benchmarks-log.md, "Where a voucher's CPU goes", issue 53). Here the
 * channel id is computed once per config (kept), the voucher's digest directly with the escrow's domain
 * separator kept per chain, and the signer recovered by libsecp256k1 (chain/secp256k1.ts).
 *
 * It follows `handleBeforeVerify` for a voucher step by step, with the same verdicts, reasons and messages
 * and the same context merged (test/merchant-kit/channels/voucher.test.ts runs both on the same table):
 * the id bound to the config, the voucher's cumulative amount against the stored charge (a mismatch
 * remembers the channel for the corrective 402), the reservation's context, then, while the channel's
 * on-chain state is fresh, the config against the requirements, the signature, the balance and the claimed
 * total, answered here without the facilitator. Deposits and refunds stay with the SDK's own hook.
 */
import type { VerifyContext } from "@x402/core/server";
import type { PaymentPayload, VerifyResponse } from "@x402/core/types";
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN,
  type BatchSettlementVoucherPayload,
  type ChannelConfig,
} from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import type { BatchSettlementEvmScheme, Channel } from "@x402/evm/batch-settlement/server";
import {
  type Address,
  bytesToHex,
  concat,
  getAddress,
  type Hex,
  keccak256,
  pad,
  recoverAddress,
  toHex,
} from "viem";
import { recoverSigner } from "../../chain/secp256k1.ts";

/** The SDK's reasons (its `errors` are not exported; the test compares verdicts with its own hook). */
const REASON = "invalid_batch_settlement_evm_";
export const VoucherReason = {
  invalidChannelId: `${REASON}channel_id_invalid`,
  channelIdMismatch: `${REASON}channel_id_mismatch`,
  cumulativeMismatch: `${REASON}cumulative_amount_mismatch`,
  stateUnavailable: `${REASON}verification_state_unavailable`,
  receiverMismatch: `${REASON}receiver_mismatch`,
  receiverAuthorizerMismatch: `${REASON}receiver_authorizer_mismatch`,
  tokenMismatch: `${REASON}token_mismatch`,
  withdrawDelayMismatch: `${REASON}withdraw_delay_mismatch`,
  withdrawDelayOutOfRange: `${REASON}withdraw_delay_out_of_range`,
  invalidSignature: `${REASON}voucher_signature`,
  exceedsBalance: `${REASON}cumulative_exceeds_balance`,
  belowClaimed: `${REASON}cumulative_below_claimed`,
} as const;

/** The escrow's bounds on a channel's withdrawal delay, in seconds. */
const MIN_WITHDRAW_DELAY = 900;
const MAX_WITHDRAW_DELAY = 2_592_000;
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const UINT128_LIMIT = 1n << 128n;

type BeforeVerifyResult =
  | undefined
  | { abort: true; reason: string; message?: string }
  | { skip: true; result: VerifyResponse };

/**
 * The kit's `onBeforeVerify` for a voucher payload (the caller has checked it is one with
 * `isBatchSettlementVoucherPayload`), for `scheme`.
 */
export function voucherCheck(scheme: BatchSettlementEvmScheme) {
  return async function checkVoucher({
    paymentPayload,
    requirements,
  }: VerifyContext): Promise<BeforeVerifyResult> {
    const raw = paymentPayload.payload as unknown as BatchSettlementVoucherPayload;
    const payload = paymentPayload as PaymentPayload;
    try {
      const { channelId, maxClaimableAmount } = raw.voucher;
      if (typeof channelId !== "string" || !CHANNEL_ID.test(channelId)) {
        return abort(VoucherReason.invalidChannelId, "Channel id does not match channel config");
      }
      const computedId = channelIdOf(raw.channelConfig, requirements.network);
      if (computedId !== channelId.toLowerCase()) {
        return abort(VoucherReason.channelIdMismatch, "Channel id does not match channel config");
      }
      const now = Date.now();
      const pendingId = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
      const channelSnapshot = await scheme.getStorage().get(channelId);
      const signed = BigInt(maxClaimableAmount);
      const price = BigInt(requirements.amount);
      // With no channel stored, the SDK takes the voucher's own base (its amount less the price).
      const charged =
        channelSnapshot?.chargedCumulativeAmount ?? (signed < price ? "0" : (signed - price).toString());
      if (signed !== BigInt(charged) + price) {
        scheme.rememberChannelSnapshot(payload, channelSnapshot ?? provisionalChannel(raw, charged));
        return abort(VoucherReason.cumulativeMismatch, "Client voucher base does not match server state");
      }
      scheme.mergeRequestContext(payload, { channelId, pendingId, channelSnapshot });
      const result = await checkLocally(scheme, raw, requirements, channelSnapshot, computedId, signed, now);
      if (!result) return undefined;
      scheme.mergeRequestContext(payload, { localVerify: true });
      return { skip: true, result };
    } catch {
      return abort(VoucherReason.stateUnavailable, "Unable to establish channel verification state");
    }
  };
}

/** `verifyVoucherLocally`: undefined hands the voucher to the facilitator (no fresh on-chain state). */
async function checkLocally(
  scheme: BatchSettlementEvmScheme,
  raw: BatchSettlementVoucherPayload,
  requirements: VerifyContext["requirements"],
  channel: Channel | undefined,
  computedId: Hex,
  signed: bigint,
  now: number,
): Promise<VerifyResponse | undefined> {
  const synced = channel?.onchainSyncedAt;
  // Written as the SDK's `isOnchainStateFresh` is, so that a time that is not a number is not fresh either.
  if (!channel || synced === undefined || !(now - synced <= scheme.getOnchainStateTtlMs())) return undefined;
  const config = raw.channelConfig;
  if (config.payerAuthorizer === ZERO_ADDRESS) return undefined;
  const payer = config.payer;
  const invalid = (invalidReason: string): VerifyResponse => ({ isValid: false, invalidReason, payer });
  const configError = channelConfigError(config, computedId, raw.voucher.channelId, requirements);
  if (configError) return invalid(configError);
  if (computedId !== channel.channelId.toLowerCase()) return invalid(VoucherReason.channelIdMismatch);
  const chainId = chainIdOf(requirements.network);
  if (
    !(await signedBy(config.payerAuthorizer, chainId, raw.voucher.channelId, signed, raw.voucher.signature))
  ) {
    return invalid(VoucherReason.invalidSignature);
  }
  if (signed > BigInt(channel.balance)) return invalid(VoucherReason.exceedsBalance);
  if (signed <= BigInt(channel.totalClaimed)) return invalid(VoucherReason.belowClaimed);
  return {
    isValid: true,
    payer,
    extra: {
      channelId: raw.voucher.channelId,
      balance: channel.balance,
      totalClaimed: channel.totalClaimed,
      withdrawRequestedAt: channel.withdrawRequestedAt,
      refundNonce: channel.refundNonce.toString(),
    },
  };
}

/** The SDK's `validateChannelConfig`, in its order, with the channel id already computed. */
function channelConfigError(
  config: ChannelConfig,
  computedId: Hex,
  channelId: string,
  requirements: VerifyContext["requirements"],
): string | undefined {
  if (computedId !== channelId.toLowerCase()) return VoucherReason.channelIdMismatch;
  if (getAddress(config.receiver) !== getAddress(requirements.payTo)) return VoucherReason.receiverMismatch;
  const extra = requirements.extra as { receiverAuthorizer?: string; withdrawDelay?: unknown } | undefined;
  const authorizer = extra?.receiverAuthorizer;
  if (
    !authorizer ||
    getAddress(authorizer) === ZERO_ADDRESS ||
    getAddress(config.receiverAuthorizer) !== getAddress(authorizer)
  ) {
    return VoucherReason.receiverAuthorizerMismatch;
  }
  if (getAddress(config.token) !== getAddress(requirements.asset)) return VoucherReason.tokenMismatch;
  if (extra?.withdrawDelay !== undefined && config.withdrawDelay !== Number(extra.withdrawDelay)) {
    return VoucherReason.withdrawDelayMismatch;
  }
  if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
    return VoucherReason.withdrawDelayOutOfRange;
  }
  return undefined;
}

/** Channel ids by config and network, computed by the SDK's own `computeChannelId` once each. */
const MAX_CHANNEL_IDS = 10_000;
const channelIds = new Map<string, Hex>();

export function channelIdOf(config: ChannelConfig, network: string): Hex {
  let key: string | undefined;
  try {
    const c = config;
    key = JSON.stringify([
      network,
      c.payer,
      c.payerAuthorizer,
      c.receiver,
      c.receiverAuthorizer,
      c.token,
      c.withdrawDelay,
      c.salt,
    ]);
  } catch {
    key = undefined;
  }
  const kept = key === undefined ? undefined : channelIds.get(key);
  if (kept) return kept;
  // Throws where the SDK's does (an address or a field it cannot encode, a network that is not eip155).
  const id = computeChannelId(config, network).toLowerCase() as Hex;
  if (key !== undefined) {
    if (channelIds.size >= MAX_CHANNEL_IDS) channelIds.delete(channelIds.keys().next().value as string);
    channelIds.set(key, id);
  }
  return id;
}

function chainIdOf(network: string): number {
  const match = /^eip155:(\d+)$/.exec(network);
  const chainId = Number(match?.[1]);
  if (!Number.isSafeInteger(chainId)) throw new Error(`Invalid CAIP-2 chain id: ${network}`);
  return chainId;
}

const DOMAIN_TYPEHASH = keccak256(
  toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
);
const VOUCHER_TYPEHASH = keccak256(toHex("Voucher(bytes32 channelId,uint128 maxClaimableAmount)"));
const separators = new Map<number, Hex>();

/** The escrow's EIP-712 domain separator on a chain, kept. */
function domainSeparator(chainId: number): Hex {
  let separator = separators.get(chainId);
  if (!separator) {
    separator = keccak256(
      concat([
        DOMAIN_TYPEHASH,
        keccak256(toHex(BATCH_SETTLEMENT_DOMAIN.name)),
        keccak256(toHex(BATCH_SETTLEMENT_DOMAIN.version)),
        toHex(BigInt(chainId), { size: 32 }),
        pad(BATCH_SETTLEMENT_ADDRESS),
      ]),
    );
    separators.set(chainId, separator);
  }
  return separator;
}

/** keccak256(0x1901 || domainSeparator || hashStruct(Voucher)), what the payer's authorizer signs. */
export function voucherDigest(chainId: number, channelId: Hex, maxClaimableAmount: bigint): Hex {
  const structHash = keccak256(
    concat([VOUCHER_TYPEHASH, channelId, toHex(maxClaimableAmount, { size: 32 })]),
  );
  return keccak256(concat(["0x1901", domainSeparator(chainId), structHash]));
}

/** viem's `verifyTypedData` for a voucher: false where it throws or recovers another address. */
async function signedBy(
  authorizer: Address,
  chainId: number,
  channelId: Hex,
  amount: bigint,
  signature: Hex,
): Promise<boolean> {
  // viem refuses to encode a uint128 out of range.
  if (amount < 0n || amount >= UINT128_LIMIT) return false;
  const digest = voucherDigest(chainId, channelId, amount);
  // Anything but 65 bytes of hex (an object signature, say) goes to viem, which reads more shapes.
  const signer =
    typeof signature === "string" && SIGNATURE.test(signature)
      ? await recoverSigner(digest, signature)
      : await recoverAddress({ hash: digest, signature }).catch(() => undefined);
  return signer !== undefined && signer.toLowerCase() === authorizer.toLowerCase();
}

/** The SDK's `buildProvisionalChannel`: what a mismatch's corrective 402 reports when nothing is stored. */
function provisionalChannel(raw: BatchSettlementVoucherPayload, chargedCumulativeAmount: string): Channel {
  return {
    channelId: raw.voucher.channelId,
    channelConfig: raw.channelConfig,
    chargedCumulativeAmount,
    signedMaxClaimable: raw.voucher.maxClaimableAmount,
    signature: raw.voucher.signature,
    balance: "0",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: Date.now(),
  };
}

function abort(reason: string, message: string) {
  return { abort: true as const, reason, message };
}
