import { createHash, randomUUID } from "node:crypto";
import {
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";
import type { PaymentPayload } from "@x402/core/types";
import { isBatchSettlementDepositPayload, isBatchSettlementVoucherPayload } from "@x402/evm";
import { encodeAbiParameters, keccak256, toHex } from "viem";
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from "../../../chain/solana/constants.ts";
import { decodedPayment } from "../decoded.ts";
import {
  ESCROWED_NONCE_PREFIX,
  type PaymentKey,
  PERMIT2_NONCE_PREFIX,
  SVM_NONCE_PREFIX,
} from "./payment-ledger.ts";

/** The header the buyer pays with (v2), and the v1 name `@x402/hono` also reads. */
export function paymentHeader(request: Request): string | undefined {
  return request.headers.get("payment-signature") ?? request.headers.get("x-payment") ?? undefined;
}

/** The scheme of the requirements a verified payment accepted (`exact`, `upto`). */
export function paidScheme(header: string): string | undefined {
  return decodedPayment(header).accepted?.scheme;
}

interface Eip3009Authorization {
  from: string;
  nonce: string;
  validBefore: string | number;
  value?: string;
}

/** A verified payment as the kit guards it: its ledger key, the scheme it chose, what the call may cost. */
export interface Payment {
  key: PaymentKey;
  scheme: string | undefined;
  /** The most the call may be charged: the requirements' amount (a channel deposit moves more than that). */
  price: bigint;
}

/** `paymentKeyOf`, with the scheme and the call's price read from the same decoding. */
export function paymentOf(header: string, nowSeconds = Math.floor(Date.now() / 1000)): Payment {
  const payload = decodedPayment(header);
  return {
    key: keyOf(payload, nowSeconds),
    scheme: payload.accepted?.scheme,
    price: atomic(payload.accepted?.amount),
  };
}

/**
 * Who paid and with which one-time authorization, read from a payment the middleware has already verified
 * (so the signature is known to be `from`'s). The `exact` EVM scheme carries an EIP-3009 authorization,
 * keyed by its nonce, or a Permit2 one (through x402's exact proxy), keyed as `upto`'s is by its Permit2
 * nonce (`permit2Key`); a channel payment is keyed by `channelKey`; any other payload is keyed by a hash
 * of itself, which still makes one payload run one handler.
 */
export function paymentKeyOf(header: string, nowSeconds = Math.floor(Date.now() / 1000)): PaymentKey {
  return keyOf(decodedPayment(header), nowSeconds);
}

function keyOf(payload: PaymentPayload, nowSeconds: number): PaymentKey {
  // The chain whose balance a reservation reads, where a host is paid on several (payments/ledger/funds.ts).
  const network = payload.accepted?.network;
  const key = keyOfPayload(payload, nowSeconds);
  return typeof network === "string" ? { ...key, network } : key;
}

function keyOfPayload(payload: PaymentPayload, nowSeconds: number): PaymentKey {
  // What the buyer agreed to pay: the requirements it accepted (for `exact`, the authorized value).
  const amount = atomic(payload.accepted?.amount);
  const channel = channelKey(payload.payload, amount, nowSeconds);
  if (channel) return channel;
  const svm = svmKey(payload, amount, nowSeconds);
  if (svm) return svm;
  const inner = payload.payload as { authorization?: Eip3009Authorization; permit2Authorization?: unknown };
  const auth = inner.authorization;
  if (auth && /^0x[0-9a-fA-F]{40}$/.test(auth.from) && typeof auth.nonce === "string") {
    return {
      payer: auth.from.toLowerCase() as `0x${string}`,
      nonce: auth.nonce,
      validBefore: Number(auth.validBefore),
      amount: atomic(auth.value) || amount,
    };
  }
  const permit2 = permit2Key(inner.permit2Authorization, amount);
  if (permit2) return permit2;
  const permit = inner.permit2Authorization as
    | { from?: string; nonce?: string; deadline?: string }
    | undefined;
  const from = permit?.from ?? "0x0000000000000000000000000000000000000000";
  return {
    payer: from.toLowerCase() as `0x${string}`,
    nonce: `sha256:${createHash("sha256").update(JSON.stringify(payload.payload)).digest("hex")}`,
    validBefore: Number(permit?.deadline ?? nowSeconds + 3600),
    amount,
  };
}

/**
 * A Permit2 payment's key (`upto`, or `exact` through the Permit2 proxy): the payer and its Permit2 nonce,
 * as 32 bytes of hex behind `PERMIT2_NONCE_PREFIX` (Permit2's bitmap, not the token, marks it used: the
 * funds reader asks the one it names), valid until the permit's deadline. The amount is what the buyer
 * agreed to pay (`upto`: the most). One nonce settles once on chain whatever else two payloads differ in, so
 * two payloads with one nonce are one payment here too.
 */
function permit2Key(permit: unknown, amount: bigint): PaymentKey | undefined {
  const { from, nonce, deadline } = (permit ?? {}) as { from?: unknown; nonce?: unknown; deadline?: unknown };
  if (typeof from !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(from)) return undefined;
  if (typeof nonce !== "string" || !/^\d{1,78}$/.test(nonce) || BigInt(nonce) >= 2n ** 256n) return undefined;
  if (typeof deadline !== "string" || !/^\d{1,15}$/.test(deadline)) return undefined;
  return {
    payer: from.toLowerCase() as `0x${string}`,
    nonce: `${PERMIT2_NONCE_PREFIX}${toHex(BigInt(nonce), { size: 32 })}`,
    validBefore: Number(deadline),
    amount,
  };
}

/**
 * A Solana payment's key (issue 86): the payer is the transfer's authority, the wallet that owns the USDC account
 * it pays from (never the token account), and the nonce the SHA-256 of the signed message, which is one payment
 * however often it is sent (the chain processes a signed message once). Base58 is kept as it is: its case is
 * part of the address. The row outlives the message's blockhash (about a minute) by far. The account the transfer
 * draws from is kept too (`source`): a guarded endpoint reserves against it (payments/ledger/svm-funds.ts).
 */
function svmKey(payload: PaymentPayload, amount: bigint, nowSeconds: number): PaymentKey | undefined {
  const network = payload.accepted?.network;
  const wire = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof network !== "string" || !network.startsWith("solana:") || typeof wire !== "string")
    return undefined;
  try {
    const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const transfer = tokenTransfer(transaction.messageBytes);
    if (!transfer) return undefined;
    return {
      payer: transfer.authority as `0x${string}`,
      nonce: `${SVM_NONCE_PREFIX}${createHash("sha256").update(Uint8Array.from(transaction.messageBytes)).digest("hex")}`,
      validBefore: nowSeconds + 3600,
      amount,
      source: transfer.source,
    };
  } catch {
    return undefined;
  }
}

/**
 * The first token-program instruction's source account and authority (`TransferChecked`: source, mint,
 * destination, authority), the instruction `@x402/svm`'s `getTokenPayerFromTransaction` reads its payer from.
 */
function tokenTransfer(
  messageBytes: Transaction["messageBytes"],
): { source: string; authority: string } | undefined {
  const { staticAccounts, instructions } = getCompiledTransactionMessageDecoder().decode(messageBytes);
  for (const ix of instructions) {
    const program = staticAccounts[ix.programAddressIndex];
    if (program !== SPL_TOKEN_PROGRAM && program !== TOKEN_2022_PROGRAM) continue;
    const [source, , , authority] = (ix.accountIndices ?? []).map((i) => staticAccounts[i]);
    if (authority === undefined) continue;
    return source === undefined ? undefined : { source, authority };
  }
  return undefined;
}

function atomic(value: unknown): bigint {
  return typeof value === "string" && /^\d{1,78}$/.test(value) ? BigInt(value) : 0n;
}

/** How long the ledger keeps a voucher's row: a voucher never expires, the row only has to outlive its call. */
const VOUCHER_ROW_SECONDS = 60 * 60;

/**
 * A channel payment's key. A voucher spends money already in the escrow, not the payer's wallet
 * (`escrowed`), and is keyed per request, not per voucher: the channel serialises its requests and charges a
 * voucher once (the SDK's reservation and cumulative amounts), and a voucher whose call failed or whose
 * process crashed must be accepted again (the spec: "the client can retry the same voucher"), where a row
 * kept per voucher would refuse it for ever. A deposit moves money from the wallet, as `exact` does: it is
 * keyed by its ERC-3009 nonce (`keccak256(channelId, salt)`, as the SDK's collector derives it), which the
 * chain marks used when it lands, for the funds reservation; by a hash of itself for a Permit2 deposit.
 */
function channelKey(inner: unknown, price: bigint, nowSeconds: number): PaymentKey | undefined {
  if (isBatchSettlementVoucherPayload(inner)) {
    return {
      payer: inner.channelConfig.payer.toLowerCase() as `0x${string}`,
      nonce: `${ESCROWED_NONCE_PREFIX}${inner.voucher.channelId.toLowerCase()}:${inner.voucher.maxClaimableAmount}:${randomUUID()}`,
      validBefore: nowSeconds + VOUCHER_ROW_SECONDS,
      amount: price,
      escrowed: true,
    };
  }
  if (!isBatchSettlementDepositPayload(inner)) return undefined;
  const payer = inner.channelConfig.payer.toLowerCase() as `0x${string}`;
  const erc3009 = inner.deposit.authorization.erc3009Authorization;
  if (erc3009) {
    return {
      payer,
      nonce: keccak256(
        encodeAbiParameters(
          [{ type: "bytes32" }, { type: "uint256" }],
          [inner.voucher.channelId, BigInt(erc3009.salt)],
        ),
      ),
      validBefore: Number(erc3009.validBefore),
      amount: atomic(inner.deposit.amount),
    };
  }
  return {
    payer,
    nonce: `sha256:${createHash("sha256").update(JSON.stringify(inner)).digest("hex")}`,
    validBefore: Number(inner.deposit.authorization.permit2Authorization?.deadline ?? nowSeconds + 3600),
    amount: atomic(inner.deposit.amount),
  };
}
