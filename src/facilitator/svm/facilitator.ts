/**
 * The facilitator on Solana (issue 86 item 5): x402's `exact` on SVM, verified and settled by `@x402/svm`'s
 * `ExactSvmScheme` under `@x402/core`'s `x402Facilitator`, this facilitator the fee payer of every payment
 * (`extra.feePayer` in /supported). Around the SDK, what the EVM chains have (docs/facilitator.md, "Solana"):
 *
 * - the ledger (ledger.ts): a payment is verified, claimed by one /settle, signed (its signature in the
 *   ledger before it is sent), settled or failed; of all the /settle calls of one payment, concurrent or
 *   repeated, in this process or another on the same database, one is answered success;
 * - keys' budgets (access/budget.ts): a keyed settlement reserves its fee before the fee payer signs, and is
 *   refused (429 `key_over_budget`) when the key's day cannot hold it; the fee is charged once it lands (a
 *   failed transaction's too: Solana charges it). Amounts are kept as the EVM chains' are, in 10^-18 of the
 *   coin (1 lamport = 10^9 of them), so `keys add --chain-gas-budget solana=0.01` means 0.01 SOL;
 * - checks the SDK leaves open (transaction.ts): the fee payer may be no instruction's account or program,
 *   the priority fee and compute units it pays for are capped, two signatures at most.
 */
import { createHash } from "node:crypto";
import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase58Encoder,
  getBase64Encoder,
  getTransactionDecoder,
  type Signature,
} from "@solana/kit";
import type { PendingSettlementStore } from "@x402/core/facilitator";
import { x402Facilitator } from "@x402/core/facilitator";
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from "@x402/core/types";
import {
  type FacilitatorSvmSigner,
  getTokenPayerFromTransaction,
  TransactionOnchainFailureError,
  toFacilitatorSvmSigner,
} from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../chain/solana/constants.ts";
import { type Database, migrate } from "../../common/db/index.ts";
import { sleep } from "../../common/sleep.ts";
import { type AccessPolicy, createGasBudgets, createGate, type Grant } from "../access/index.ts";
import { type AuthorizationKey, keyString } from "../authorization.ts";
import {
  claim,
  claimDelivery,
  findAuthorization,
  type LedgerRow,
  reclaimStale,
} from "../authorization-ledger.ts";
import { DEFAULT_LIMIT, listResources } from "../bazaar.ts";
import { createChannelAuthorizers } from "../channels/authorizers.ts";
import {
  INVALID_NETWORK,
  INVALID_PAYLOAD,
  KEY_OVER_BUDGET,
  PAYMENT_NOT_VERIFIED,
  SETTLEMENT_IN_PROGRESS,
  SETTLEMENT_PENDING,
  UNSUPPORTED_ASSET,
  UNSUPPORTED_SCHEME,
} from "../error-codes.ts";
import type { Facilitator } from "../facilitator.ts";
import { facilitatorRoutes } from "../http.ts";
import { InFlight } from "../inflight.ts";
import { FACILITATOR_MIGRATIONS } from "../migrations.ts";
import { settleFailure } from "../settle-answer.ts";
import { STALE_CLAIM_SECONDS } from "../settle-context.ts";
import {
  markSvmFailed,
  markSvmSettled,
  recordSvmSigned,
  recordSvmVerified,
  releaseSvmUnsent,
} from "./ledger.ts";
import { feePayerTouched, readSvmPayment, type SvmPayment, signatureOf } from "./transaction.ts";

export interface SvmFacilitatorOptions {
  /** The ledger's database (the EVM chains' own, when they settle in the same process). */
  db: Database;
  /** Solana JSON-RPC over HTTP. */
  rpc: string;
  /** The fee payer's key pair: base58 of its 64 bytes (secret then public), as `solana-keygen` and the devnet print it. */
  feePayerKey: string;
  /** Who may make it pay fees over HTTP (access/gate.ts); default open, as a loopback facilitator with nothing set. */
  access?: AccessPolicy;
  /** How long /settle waits for the transaction to be confirmed before answering pending. Default 20 s. */
  confirmationTimeoutMs?: number;
  /** How often a signature's status is polled. Default 250 ms (a slot is about 400 ms). */
  pollingIntervalMs?: number;
  /** The highest priority fee it pays, in micro-lamports a compute unit. Default 50,000 (the SDK's own ceiling is 5,000,000). */
  maxPriorityFeeMicroLamports?: number;
  /** The most compute units a transaction may ask for (the priority fee is charged on them). Default 200,000. */
  maxComputeUnits?: number;
}

/** 10^-18 SOL a lamport: keys' budgets are kept in 10^-18 of the chain's coin on every chain. */
export const WEI_PER_LAMPORT = 1_000_000_000n;
/** The fee payer named as an instruction's account or program (transaction.ts, `feePayerTouched`). */
export const FEE_PAYER_NOT_ISOLATED = "invalid_exact_svm_fee_payer_not_isolated";
/** `@x402/svm`'s reason for a transaction already settled. */
export const DUPLICATE_SETTLEMENT = "duplicate_settlement";

/** The SDK keeps no memory of pending transactions: the ledger is the only one (as facilitator.ts says for EVM). */
const NO_PENDING_STORE: PendingSettlementStore = {
  get: async () => undefined,
  set: async () => undefined,
  delete: async () => undefined,
};

/** A settlement this process signs now: its ledger key, then its signature and slot once known. */
interface Signing {
  key: AuthorizationKey;
  keyed: boolean;
  signature?: string;
  slot?: bigint | null;
  refusal?: string;
}

/** A checked request: its transaction read, its ledger key and content digest. */
interface Checked {
  payment: SvmPayment;
  key: AuthorizationKey;
  digest: string;
  payer: string;
}

export async function createSvmFacilitator(options: SvmFacilitatorOptions): Promise<Facilitator> {
  const { db } = options;
  const network = SOLANA_NETWORK as Network;
  const confirmationTimeoutMs = options.confirmationTimeoutMs ?? 20_000;
  const pollingIntervalMs = options.pollingIntervalMs ?? 250;
  await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);

  const keyPair = await createKeyPairSignerFromBytes(getBase58Encoder().encode(options.feePayerKey));
  const rpc = createSolanaRpc(options.rpc);
  const base = toFacilitatorSvmSigner(keyPair, { [network]: rpc } as never);
  const budgets = createGasBudgets(db);
  const signing = new Map<string, Signing>();

  /** The status of a signature: its slot and error once confirmed, undefined while the chain has not confirmed it. */
  const statusOf = async (signature: string) => {
    const { value } = await rpc.getSignatureStatuses([signature as Signature]).send();
    const entry = value[0];
    if (!entry || (entry.confirmationStatus !== "confirmed" && entry.confirmationStatus !== "finalized"))
      return undefined;
    return { slot: entry.slot, err: entry.err };
  };

  const signer: FacilitatorSvmSigner = {
    ...base,
    // Before the fee payer signs: the key's budget holds the fee, and the ledger the signature (pending) before
    // the transaction is sent, so that a crash after sending leaves a row a later /settle can look up.
    async signTransaction(transaction, feePayer, on) {
      const payment = readSvmPayment({ transaction });
      const current = payment && signing.get(payment.messageHash);
      if (!payment || !current)
        throw new Error("the fee payer signs only a settlement this facilitator claimed");
      if (current.keyed) {
        try {
          await budgets.reserve(current.key, payment.feeLamports * WEI_PER_LAMPORT);
        } catch (error) {
          current.refusal = (error as Error).message;
          throw error;
        }
      }
      const signed = await base.signTransaction(transaction, feePayer, on);
      const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(signed));
      const signature = signatureOf(decoded, feePayer);
      if (!signature || !(await recordSvmSigned(db, current.key, signature)))
        throw new Error("the payment's ledger row is no longer this settlement's");
      current.signature = signature;
      return signed;
    },
    // Polled at the facilitator's own pace and for its own timeout (the SDK's waits 30 s), the slot kept.
    async confirmTransaction(signature) {
      const deadline = Date.now() + confirmationTimeoutMs;
      for (;;) {
        const status = await statusOf(signature);
        if (status) {
          const current = [...signing.values()].find((s) => s.signature === signature);
          if (current) current.slot = status.slot;
          if (status.err)
            throw new TransactionOnchainFailureError(
              `transaction failed on chain: ${JSON.stringify(status.err, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`,
            );
          return;
        }
        if (Date.now() >= deadline) throw new Error("transaction confirmation timeout");
        await sleep(pollingIntervalMs);
      }
    },
  };

  const scheme = new ExactSvmScheme(signer, undefined, {
    maxPriorityFeeMicroLamports: options.maxPriorityFeeMicroLamports ?? 50_000,
    maxComputeUnits: options.maxComputeUnits ?? 200_000,
    maxRequiredSignatures: 2,
    pendingSettlementStore: NO_PENDING_STORE,
  });
  const sdk = new x402Facilitator().register(network, scheme);
  const gate = createGate(db, options.access ?? { open: true }, network);
  const inflight = new InFlight();
  const deliveredHere = new WeakSet<SettleResponse>();

  /** The request's payment, or why this facilitator does not judge it. */
  const check = (
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Checked | { reason: string; message: string } => {
    if (requirements?.scheme !== "exact")
      return { reason: UNSUPPORTED_SCHEME, message: `on ${network} this facilitator settles exact only` };
    if (requirements.network !== network)
      return { reason: INVALID_NETWORK, message: `this chain's facilitator settles on ${network}` };
    if (requirements.asset !== SOLANA_USDC_MINT)
      return {
        reason: UNSUPPORTED_ASSET,
        message: `on ${network} this facilitator settles USDC (${SOLANA_USDC_MINT})`,
      };
    const payment = readSvmPayment(payload?.payload);
    if (!payment) return { reason: INVALID_PAYLOAD, message: "the payload carries no Solana transaction" };
    let payer: string | undefined;
    try {
      payer = getTokenPayerFromTransaction(payment.transaction) || undefined;
    } catch {
      payer = undefined;
    }
    if (!payer) return { reason: INVALID_PAYLOAD, message: "the transaction transfers no token" };
    const key = { network, asset: requirements.asset, payer, nonce: payment.messageHash };
    const digest = createHash("sha256")
      .update(
        JSON.stringify([
          payment.messageHash,
          requirements.payTo,
          requirements.amount,
          requirements.extra?.feePayer,
        ]),
      )
      .digest("hex");
    return { payment, key, digest, payer };
  };

  const verify = async (
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<VerifyResponse> => {
    const checked = check(payload, requirements);
    if ("reason" in checked)
      return { isValid: false, invalidReason: checked.reason, invalidMessage: checked.message };
    const touched = feePayerTouched(checked.payment);
    if (touched)
      return {
        isValid: false,
        invalidReason: FEE_PAYER_NOT_ISOLATED,
        invalidMessage: touched,
        payer: checked.payer,
      };
    const answer = await sdk.verify(payload, requirements);
    if (!answer.isValid) return answer;
    const recorded = await recordSvmVerified(db, {
      key: checked.key,
      digest: checked.digest,
      payTo: requirements.payTo,
      amount: requirements.amount,
      payload,
      requirements,
    });
    if (recorded) return answer;
    // Being settled or settled: the same transaction is one payment, paid once.
    const row = await findAuthorization(db, checked.key);
    return {
      isValid: false,
      invalidReason: DUPLICATE_SETTLEMENT,
      invalidMessage: `this transaction is ${row?.state ?? "being settled"} already: sign another payment`,
      payer: checked.payer,
    };
  };

  /** The SDK's settle of a claimed payment, its outcome recorded. */
  const settleClaimed = async (
    checked: Checked,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    grant: Grant | undefined,
  ): Promise<SettleResponse> => {
    const { key, payer, payment } = checked;
    const current: Signing = { key, keyed: grant !== undefined };
    signing.set(payment.messageHash, current);
    if (grant) budgets.begin(key, grant, "exact");
    try {
      const answer = await sdk.settle(payload, requirements);
      const fee = payment.feeLamports * WEI_PER_LAMPORT;
      const signature = current.signature;
      if (answer.success && signature) {
        const row = await markSvmSettled(db, key, signature, current.slot ?? null, true);
        if (grant) await budgets.charge(key, fee, signature);
        const settled = { success: true, transaction: signature, network, payer } satisfies SettleResponse;
        if (row) deliveredHere.add(settled);
        return settled;
      }
      if (signature && answer.transaction && answer.errorReason !== SETTLEMENT_PENDING) {
        // Landed and failed: the fee was paid all the same.
        await markSvmFailed(db, key, signature, {
          reason: answer.errorReason ?? "invalid_exact_svm_transaction_failed",
          message: answer.errorMessage,
          slot: current.slot ?? null,
        });
        if (grant) await budgets.charge(key, fee, signature);
        return answer;
      }
      if (signature && answer.errorReason === SETTLEMENT_PENDING) return pendingAnswer(signature, payer);
      // Nothing reached the chain that anyone can see: the row goes back to verified, and a retry signs the
      // very same bytes again (Ed25519 is deterministic), which the chain would take once at most.
      if (signature && (await statusOf(signature).catch(() => undefined)))
        return pendingAnswer(signature, payer);
      const reason = current.refusal ? KEY_OVER_BUDGET : (answer.errorReason ?? "unexpected_settle_error");
      const message = current.refusal ?? answer.errorMessage ?? "the transaction was not sent";
      await releaseSvmUnsent(db, key, reason, message);
      if (grant) await budgets.release(key);
      return settleFailure(network, reason, message, payer);
    } finally {
      signing.delete(payment.messageHash);
      if (grant) budgets.end(key);
    }
  };

  const pendingAnswer = (signature: string, payer: string) =>
    settleFailure(
      network,
      SETTLEMENT_PENDING,
      `transaction ${signature} is sent but not yet confirmed: settle again later for its outcome`,
      payer,
      signature,
    );

  /** A row another request decided (or is deciding), as an answer; a pending one looked up on chain first. */
  const rowAnswer = async (row: LedgerRow, payer: string): Promise<SettleResponse> => {
    switch (row.state) {
      case "settled":
        return { success: true, transaction: row.tx_hash ?? "", network, payer };
      case "failed":
        return settleFailure(
          network,
          row.error_reason ?? "invalid_exact_svm_transaction_failed",
          row.error_message ?? undefined,
          payer,
        );
      case "pending": {
        const signature = row.tx_hash ?? "";
        const status = await statusOf(signature).catch(() => undefined);
        if (!status) return pendingAnswer(signature, payer);
        const key = { network: row.network, asset: row.asset, payer: row.payer, nonce: row.nonce };
        if (status.err) {
          await markSvmFailed(db, key, signature, {
            reason: "invalid_exact_svm_transaction_failed",
            slot: status.slot,
          });
        } else await markSvmSettled(db, key, signature, status.slot, false);
        const now = await findAuthorization(db, key);
        return now && now.state !== "pending" ? rowAnswer(now, payer) : pendingAnswer(signature, payer);
      }
      case "submitting":
        return settleFailure(
          network,
          SETTLEMENT_IN_PROGRESS,
          "another request is submitting this payment",
          payer,
        );
      case "verified":
        return settleFailure(
          network,
          row.error_reason ?? "unexpected_settle_error",
          row.error_message ?? undefined,
          payer,
        );
    }
  };

  /** Claims the verified row and settles it, or answers what the row says once another request decided it. */
  const settleOnce = async (
    checked: Checked,
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    grant: Grant | undefined,
  ): Promise<SettleResponse> => {
    const { key, digest, payer } = checked;
    const amount = BigInt(requirements.amount);
    const deadline = Date.now() + confirmationTimeoutMs;
    let unverified = true;
    for (;;) {
      if (await claim(db, key, digest, amount, 2))
        return settleClaimed(checked, payload, requirements, grant);
      const row = await findAuthorization(db, key);
      if (!row && unverified) {
        // Never verified (x402's `upfront` flow sends no /verify): verified now, then claimed.
        unverified = false;
        const verified = await verify(payload, requirements);
        if (!verified.isValid)
          return settleFailure(
            network,
            verified.invalidReason ?? PAYMENT_NOT_VERIFIED,
            verified.invalidMessage,
            payer,
          );
        continue;
      }
      if (!row || row.digest !== digest)
        return settleFailure(
          network,
          PAYMENT_NOT_VERIFIED,
          "settle only what /verify accepted: verify this payment first",
          payer,
        );
      if (row.state === "verified") continue;
      if (row.state !== "submitting") return rowAnswer(row, payer);
      if (await reclaimStale(db, key, STALE_CLAIM_SECONDS))
        return settleClaimed(checked, payload, requirements, grant);
      if (Date.now() > deadline) return rowAnswer(row, payer);
      await sleep(100);
    }
  };

  const settle = async (
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    grant?: Grant,
  ): Promise<SettleResponse> => {
    const checked = check(payload, requirements);
    if ("reason" in checked) return settleFailure(network, checked.reason, checked.message);
    const { answered, shared } = await inflight.share(keyString(checked.key), checked.digest, () =>
      settleOnce(checked, payload, requirements, grant),
    );
    if (!answered.success || (!shared && deliveredHere.has(answered))) return answered;
    if (await claimDelivery(db, checked.key)) return answered;
    return settleFailure(
      network,
      DUPLICATE_SETTLEMENT,
      `this payment was settled in transaction ${answered.transaction} and its success already answered to another /settle: pay again for another delivery`,
      answered.payer,
    );
  };

  const service: Omit<Facilitator, "app"> = {
    network,
    address: keyPair.address as string as `0x${string}`,
    scope: { network, assets: new Set([SOLANA_USDC_MINT]), authorizers: createChannelAuthorizers(undefined) },
    verify,
    settle: (payload, requirements, grant) => settle(payload, requirements, grant),
    supported: () => sdk.getSupported() as SupportedResponse,
    discoveryResources: (query = {}) => listResources(db, { limit: DEFAULT_LIMIT, offset: 0, ...query }),
    resolvePending: async () => ({ checked: 0, resolved: 0 }),
    settlementsWaiting: () => 0,
    untilSettlementsWaiting: () => new Promise<void>(() => {}),
    gate,
    channelAuthorizers: createChannelAuthorizers(undefined),
    async ping() {
      await db.query("SELECT 1");
    },
    close: () => inflight.drain(),
  };
  return {
    ...service,
    app: facilitatorRoutes({ ...service, checkRequest: (p, r) => requestProblem(check, p, r) }),
  };
}

/** A body that cannot be a Solana payment (400), as http.ts's EVM checks say it for theirs. */
function requestProblem(
  check: (p: PaymentPayload, r: PaymentRequirements) => Checked | { reason: string; message: string },
  payload: unknown,
  requirements: unknown,
): { reason: string; message: string } | undefined {
  const checked = check(payload as PaymentPayload, requirements as PaymentRequirements);
  return "reason" in checked && checked.reason === INVALID_PAYLOAD ? checked : undefined;
}
