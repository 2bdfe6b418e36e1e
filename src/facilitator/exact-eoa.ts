/**
 * The exact scheme for the payment nearly every buyer sends: an EIP-3009 authorization signed by an
 * ordinary wallet (a 65-byte ECDSA signature, no code at the payer's address). `@x402/evm`'s exact scheme
 * recovers its signer with viem in JavaScript, once at verify and again in settle's own re-verification,
 * and hashes the typed data each time; here the digest is computed directly and the signer recovered by
 * libsecp256k1 (`src/chain/secp256k1.ts`), making the same checks in the same order.
 *
 * Only acceptance is decided here. Everything else goes to the SDK's scheme unchanged: Permit2, smart
 * wallets (ERC-1271, ERC-6492), and every payment a check here does not pass, so that a refusal carries
 * the SDK's own reason and message. A payment is thus settled only when both would accept it: this side's
 * checks are the SDK's, and what the SDK would refuse is refused by the SDK itself.
 */
import type {
  FacilitatorContext,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from "@x402/core/types";
import { eip3009ABI, type FacilitatorEvmSigner, resolveDataSuffix, startAssetContractCheck } from "@x402/evm";
import {
  type Address,
  getAddress,
  isAddress,
  isAddressEqual,
  pad,
  parseSignature,
  toEventSelector,
} from "viem";
import { transferWithAuthorizationDigest } from "../chain/eip3009.ts";
import { recoverSigner } from "../chain/secp256k1.ts";
import { type Eip3009Payload, isPermit2Payload } from "./authorization.ts";
import { SETTLEMENT_PENDING } from "./error-codes.ts";
import type { GroupedOutcome, SettlementGroups } from "./settlement-groups.ts";

// @x402/evm's exact scheme's settlement reasons, verbatim.
const TRANSACTION_FAILED = "invalid_exact_evm_transaction_failed";
const TRANSFER_EVENT_MISMATCH = "invalid_exact_evm_transfer_event_mismatch";
/** The SDK's bound on an error message in a settlement answer. */
const MAX_ERROR_MESSAGE = 500;
/** The SDK refuses an authorization that expires within this many seconds. */
const VALID_BEFORE_MARGIN_S = 6n;
const TRANSFER_TOPIC = toEventSelector("Transfer(address,address,uint256)");
const AUTHORIZATION_USED_TOPIC = toEventSelector("AuthorizationUsed(address,bytes32)");

/** An EIP-3009 payment this scheme settles itself: every check passed. */
interface Accepted {
  payload: Eip3009Payload;
  asset: Address;
  /** The contract call: the simulation at verify and the settlement transaction. */
  args: readonly unknown[];
}

export class ExactEoaScheme implements SchemeNetworkFacilitator {
  readonly scheme = "exact";
  readonly caipFamily = "eip155:*";

  /**
   * `sdk` is `@x402/evm`'s `ExactEvmScheme` over the same signer. With `groups`, a settlement that starts
   * while another is in flight waits for the next group (settlement-groups.ts); one that starts when nothing
   * is in flight is sent as without them.
   */
  constructor(
    private readonly signer: FacilitatorEvmSigner,
    private readonly sdk: SchemeNetworkFacilitator,
    private readonly groups?: SettlementGroups,
  ) {}

  getExtra(network: Network) {
    return this.sdk.getExtra(network);
  }

  getSigners(network: string) {
    return this.sdk.getSigners(network);
  }

  async verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<VerifyResponse> {
    const accepted = await this.accept(payload, requirements, true);
    if (accepted)
      return { isValid: true, invalidReason: undefined, payer: accepted.payload.authorization.from };
    return this.sdk.verify(payload, requirements, context);
  }

  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<SettleResponse> {
    // As the SDK's settle: verified again, without the simulation (the transaction is the test).
    const accepted = await this.accept(payload, requirements, false);
    if (!accepted) return this.sdk.settle(payload, requirements, context);
    const network = payload.accepted.network;
    const payer = accepted.payload.authorization.from;
    let dataSuffix: `0x${string}` | undefined;
    try {
      dataSuffix = await resolveDataSuffix(context, {
        paymentPayload: payload,
        paymentRequirements: requirements,
      });
    } catch (error) {
      return writeFailure(error, network, payer);
    }
    if (!this.groups) return this.settleAlone(accepted, network, dataSuffix);
    try {
      const sent = await this.groups.settle(
        { address: accepted.asset, args: accepted.args, dataSuffix },
        () => this.settleAlone(accepted, network, dataSuffix),
      );
      return "alone" in sent ? sent.alone : judgeGrouped(sent.grouped, accepted, network);
    } catch (error) {
      return writeFailure(error, network, payer);
    }
  }

  /** In a transaction of its own: the token's `transferWithAuthorization`, then its receipt. */
  private async settleAlone(
    accepted: Accepted,
    network: Network,
    dataSuffix: `0x${string}` | undefined,
  ): Promise<SettleResponse> {
    const { authorization } = accepted.payload;
    const payer = authorization.from;
    let tx: `0x${string}`;
    try {
      tx = await this.signer.writeContract({
        address: accepted.asset,
        abi: eip3009ABI,
        functionName: "transferWithAuthorization",
        args: accepted.args,
        dataSuffix,
      });
    } catch (error) {
      return writeFailure(error, network, payer);
    }
    if (!/^0x[0-9a-fA-F]{64}$/.test(tx) || /^0x0+$/.test(tx)) {
      const errorMessage = `signer returned an invalid transaction hash: ${tx}`;
      return {
        success: false,
        errorReason: TRANSACTION_FAILED,
        errorMessage,
        transaction: "",
        network,
        payer,
      };
    }
    let receipt: Awaited<ReturnType<FacilitatorEvmSigner["waitForTransactionReceipt"]>>;
    try {
      receipt = await this.signer.waitForTransactionReceipt({ hash: tx });
    } catch (error) {
      // Broadcast and not confirmed in time: pending, never failed (the caller resolves it by its hash).
      const errorMessage = (error instanceof Error ? error.message : String(error)).slice(
        0,
        MAX_ERROR_MESSAGE,
      );
      return {
        success: false,
        errorReason: SETTLEMENT_PENDING,
        errorMessage,
        transaction: tx,
        network,
        payer,
      };
    }
    if (receipt.status !== "success") {
      return { success: false, errorReason: TRANSACTION_FAILED, transaction: tx, network, payer };
    }
    if (receipt.logs != null && !transferred(receipt.logs, accepted.asset, authorization)) {
      return { success: false, errorReason: TRANSFER_EVENT_MISMATCH, transaction: tx, network, payer };
    }
    return { success: true, transaction: tx, network, payer };
  }

  /**
   * The SDK's checks of an EIP-3009 payment from a wallet without code, in its order; undefined as soon
   * as one does not pass, or the payment is not of this kind (the SDK then answers).
   */
  private async accept(
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    simulate: boolean,
  ): Promise<Accepted | undefined> {
    const inner = payment.payload as Record<string, unknown>;
    if (isPermit2Payload(inner)) return undefined;
    const payload = inner as unknown as Eip3009Payload;
    const a = payload.authorization;
    if (!a || typeof payload.signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(payload.signature))
      return undefined;
    if (payment.accepted.scheme !== "exact" || requirements.scheme !== "exact") return undefined;
    if (payment.accepted.network !== requirements.network) return undefined;
    const { name, version } = (requirements.extra ?? {}) as { name?: unknown; version?: unknown };
    if (typeof name !== "string" || typeof version !== "string" || !name || !version) return undefined;
    const chainId = /^eip155:(\d+)$/.exec(requirements.network)?.[1];
    // viem's typed-data hashing refuses an address whose mixed case is not its checksum; so does this.
    if (!chainId || ![a.from, a.to, requirements.asset, requirements.payTo].every((x) => isAddress(x))) {
      return undefined;
    }
    try {
      const asset = getAddress(requirements.asset);
      // Started together, as the SDK starts them; a failed read is the SDK's to report.
      const assetReason = startAssetContractCheck(this.signer, requirements.network, requirements.asset)
        .await()
        .catch(() => "unreadable");
      const code = await this.signer.getCode({ address: a.from });
      if (code && code !== "0x") return undefined; // a smart wallet: ERC-1271
      const message = {
        from: a.from,
        to: a.to,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce,
      };
      const digest = transferWithAuthorizationDigest(
        { name, version, chainId: Number(chainId), verifyingContract: asset },
        message,
      );
      const signer = await recoverSigner(digest, payload.signature);
      if (!signer || !isAddressEqual(signer, a.from)) return undefined;
      if (getAddress(a.to) !== getAddress(requirements.payTo)) return undefined;
      const now = BigInt(Math.floor(Date.now() / 1000));
      if (message.validBefore < now + VALID_BEFORE_MARGIN_S || message.validAfter > now) return undefined;
      if (message.value !== BigInt(requirements.amount)) return undefined;
      if (await assetReason) return undefined;
      const { v, yParity, r, s } = parseSignature(payload.signature);
      const args = [
        getAddress(a.from),
        getAddress(a.to),
        message.value,
        message.validAfter,
        message.validBefore,
        a.nonce,
        v ?? yParity,
        r,
        s,
      ];
      if (simulate) {
        await this.signer.readContract({
          address: asset,
          abi: eip3009ABI,
          functionName: "transferWithAuthorization",
          args,
        });
      }
      return { payload, asset, args };
    } catch {
      return undefined; // a failed read or simulation: the SDK decides, and says why
    }
  }
}

/** Nothing was broadcast for the payment (refused before signing, or by the node): the SDK's reading of why. */
function writeFailure(error: unknown, network: Network, payer: string): SettleResponse {
  const message = error instanceof Error ? error.message : String(error);
  return {
    success: false,
    errorReason: transferErrorReason(message),
    errorMessage: message,
    transaction: "",
    network,
    payer,
  };
}

/**
 * A grouped settlement's own outcome: its call succeeded when the receipt holds its own
 * `AuthorizationUsed(payer, nonce)` followed by its `Transfer` (the group's status says only that the
 * transaction ran; a call allowed to fail fails inside it). No receipt in time: pending, as alone.
 */
function judgeGrouped(outcome: GroupedOutcome, accepted: Accepted, network: Network): SettleResponse {
  const { transaction } = outcome;
  const payer = accepted.payload.authorization.from;
  if (!outcome.receipt) {
    const errorMessage = outcome.message.slice(0, MAX_ERROR_MESSAGE);
    return { success: false, errorReason: SETTLEMENT_PENDING, errorMessage, transaction, network, payer };
  }
  if (outcome.receipt.status !== "success" || !usedInGroup(outcome.receipt.logs, accepted)) {
    return {
      success: false,
      errorReason: TRANSACTION_FAILED,
      errorMessage: `its call failed in transaction ${transaction}, which settled ${outcome.size} payments`,
      transaction,
      network,
      payer,
    };
  }
  return { success: true, transaction, network, payer };
}

/**
 * This authorization's own `AuthorizationUsed(payer, nonce)` by the token, and right after it the
 * `Transfer` of its value from the payer to the payee. Not a Transfer alone: two payments of one payer to
 * one payee for one price may share a group, and one of them may fail.
 */
function usedInGroup(
  logs: readonly { address: string; topics: readonly string[]; data: string; logIndex: number | null }[],
  accepted: Accepted,
): boolean {
  const a = accepted.payload.authorization;
  const payer = pad(a.from).toLowerCase();
  const nonce = a.nonce.toLowerCase();
  const used = logs.find(
    (log) =>
      isAddressEqual(log.address as Address, accepted.asset) &&
      log.topics[0] === AUTHORIZATION_USED_TOPIC &&
      log.topics[1]?.toLowerCase() === payer &&
      log.topics[2]?.toLowerCase() === nonce,
  );
  if (!used || used.logIndex === null) return false;
  const next = logs.filter((log) => log.logIndex === (used.logIndex as number) + 1);
  return transferred(next, accepted.asset, a);
}

/**
 * A Transfer of exactly the authorized value from the payer to the payee, by the token. Read from the
 * topics directly: viem's `parseEventLogs` hashes every event signature of the ABI on each call.
 */
function transferred(
  logs: readonly { address: string; topics: readonly string[]; data: string }[],
  asset: Address,
  a: Eip3009Payload["authorization"],
): boolean {
  const from = pad(a.from).toLowerCase();
  const to = pad(a.to).toLowerCase();
  const value = BigInt(a.value);
  return logs.some(
    (log) =>
      isAddressEqual(log.address as Address, asset) &&
      log.topics.length === 3 &&
      log.topics[0] === TRANSFER_TOPIC &&
      log.topics[1]?.toLowerCase() === from &&
      log.topics[2]?.toLowerCase() === to &&
      /^0x[0-9a-fA-F]{64}$/.test(log.data) &&
      BigInt(log.data) === value,
  );
}

/** The SDK's reading of a refused transferWithAuthorization, reason by reason. */
function transferErrorReason(message: string): string {
  if (/authorization.*(expired|valid before)/i.test(message) || /AuthorizationExpired/i.test(message)) {
    return "invalid_exact_evm_payload_authorization_valid_before";
  }
  if (/authorization.*not.*valid|AuthorizationNotYetValid/i.test(message)) {
    return "invalid_exact_evm_payload_authorization_valid_after";
  }
  if (/authorization.*used|AuthorizationAlreadyUsed|AuthorizationUsedOrCanceled/i.test(message)) {
    return "invalid_exact_evm_nonce_already_used";
  }
  if (/transfer.*exceeds.*balance|insufficient.*balance|ERC20InsufficientBalance/i.test(message)) {
    return "invalid_exact_evm_insufficient_balance";
  }
  if (/invalid.*signature|SignerMismatch|InvalidSignatureV|InvalidSignatureS/i.test(message)) {
    return "invalid_exact_evm_signature";
  }
  return TRANSACTION_FAILED;
}
