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
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
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
import { getTokenPayerFromTransaction, toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../chain/solana/constants.ts";
import { solanaRpc } from "../../chain/solana/rpc.ts";
import { type Database, migrate } from "../../common/db/index.ts";
import { type AccessPolicy, createGasBudgets, createGate, type Grant } from "../access/index.ts";
import { findAuthorization } from "../authorization-ledger.ts";
import { DEFAULT_LIMIT, listResources } from "../bazaar.ts";
import { createChannelAuthorizers } from "../channels/authorizers.ts";
import { INVALID_NETWORK, INVALID_PAYLOAD, UNSUPPORTED_ASSET, UNSUPPORTED_SCHEME } from "../error-codes.ts";
import type { Facilitator } from "../facilitator.ts";
import { facilitatorRoutes } from "../http.ts";
import { InFlight } from "../inflight.ts";
import { FACILITATOR_MIGRATIONS } from "../migrations.ts";
import type { Rejection } from "../rejection.ts";
import { settleFailure } from "../settle-answer.ts";
import { answerIn, fromV1, versionOf, withV1Kinds } from "../v1.ts";
import { recordSvmVerified } from "./ledger.ts";
import { type Checked, DUPLICATE_SETTLEMENT, type SvmContext, settleSvm } from "./settlement.ts";
import { hookedSigner, type Signing, statusReader } from "./signer.ts";
import { feePayerTouched, readSvmPayment } from "./transaction.ts";

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

/** The fee payer named as an instruction's account or program (transaction.ts, `feePayerTouched`). */
export const FEE_PAYER_NOT_ISOLATED = "invalid_exact_svm_fee_payer_not_isolated";

/** The SDK keeps no memory of pending transactions: the ledger is the only one (as facilitator.ts says for EVM). */
const NO_PENDING_STORE: PendingSettlementStore = {
  get: async () => undefined,
  set: async () => undefined,
  delete: async () => undefined,
};

export async function createSvmFacilitator(options: SvmFacilitatorOptions): Promise<Facilitator> {
  const { db } = options;
  const network = SOLANA_NETWORK as Network;
  const confirmationTimeoutMs = options.confirmationTimeoutMs ?? 20_000;
  const pollingIntervalMs = options.pollingIntervalMs ?? 250;
  await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);

  const keyPair = await createKeyPairSignerFromBytes(getBase58Encoder().encode(options.feePayerKey));
  const rpc = solanaRpc(options.rpc);
  const base = toFacilitatorSvmSigner(keyPair, { [network]: rpc } as never);
  const budgets = createGasBudgets(db);
  const signing = new Map<string, Signing>();
  const statusOf = statusReader(rpc);
  const signer = hookedSigner(base, {
    db,
    budgets,
    signing,
    statusOf,
    confirmationTimeoutMs,
    pollingIntervalMs,
  });
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
  const verifyV2 = (payload: PaymentPayload, requirements: PaymentRequirements) =>
    verifySvm(db, sdk, network, payload, requirements);
  const verify = async (
    payload: PaymentPayload,
    requirements: PaymentRequirements,
  ): Promise<VerifyResponse> => {
    const v2 = asV2(network, payload, requirements);
    if (!v2.ok) return { isValid: false, invalidReason: v2.reason, invalidMessage: v2.message };
    return verifyV2(v2.payload, v2.requirements);
  };
  const ctx: SvmContext = {
    db,
    sdk,
    network,
    budgets,
    signing,
    statusOf,
    inflight,
    deliveredHere,
    confirmationTimeoutMs,
    verify: verifyV2,
  };
  const settle = async (payload: PaymentPayload, requirements: PaymentRequirements, grant?: Grant) => {
    const v2 = asV2(network, payload, requirements);
    if (!v2.ok) return answerIn(payload, settleFailure(network, v2.reason, v2.message));
    const checked = checkSvm(network, v2.payload, v2.requirements);
    if ("reason" in checked)
      return answerIn(payload, settleFailure(network, checked.reason, checked.message));
    // A v1 request is answered in v1's words: `solana`, as x402 1.2.0's schemas know it.
    return answerIn(payload, await settleSvm(ctx, checked, v2.payload, v2.requirements, grant));
  };

  const service: Omit<Facilitator, "app"> = {
    network,
    address: keyPair.address as string as `0x${string}`,
    scope: { network, assets: new Set([SOLANA_USDC_MINT]), authorizers: createChannelAuthorizers(undefined) },
    verify,
    settle: (payload, requirements, grant) => settle(payload, requirements, grant),
    supported: () => withV1Kinds(sdk.getSupported() as SupportedResponse, network),
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
    app: facilitatorRoutes({ ...service, checkRequest: (p, r) => requestProblem(network, p, r) }),
  };
}

/** A body that cannot be a Solana payment (400), as http.ts's EVM checks say it for theirs. */
function requestProblem(
  network: Network,
  payload: unknown,
  requirements: unknown,
): { reason: string; message: string } | undefined {
  const v2 = asV2(network, payload as PaymentPayload, requirements as PaymentRequirements);
  if (!v2.ok) return v2.malformed ? v2 : undefined;
  const checked = checkSvm(network, v2.payload, v2.requirements);
  return "reason" in checked && checked.reason === INVALID_PAYLOAD ? checked : undefined;
}

/**
 * An x402 v1 payment (x402 1.2.0's `exact` on `solana`: the same signed transaction as v2's) as the v2 one it is
 * (../v1.ts), so that it is checked, recorded and settled once as any; a v2 one as it came.
 */
function asV2(
  network: Network,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): { ok: true; payload: PaymentPayload; requirements: PaymentRequirements } | Rejection {
  return versionOf(payload) === 1
    ? fromV1(payload, requirements, network)
    : { ok: true, payload, requirements };
}

/** The request's payment, or why this facilitator does not judge it. */
function checkSvm(
  network: Network,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Checked | { reason: string; message: string } {
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
}

/** /verify: our checks, the SDK's, then the ledger's row (a payment settled or being settled is a duplicate). */
async function verifySvm(
  db: Database,
  sdk: x402Facilitator,
  network: Network,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<VerifyResponse> {
  const checked = checkSvm(network, payload, requirements);
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
}
