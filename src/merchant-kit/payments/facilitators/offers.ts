/**
 * What a merchant can settle, per way to pay (a scheme and its transfer method), with the facilitators and
 * credentials it holds (docs/platform.md, "What is offered"). A 402 that lists a way its facilitators refuse
 * for this merchant turns away every client that prefers that way: the client signs, and every call is
 * answered 503. So at start, and again when the facilitators' `/supported` changes, each way is tried: a
 * payment of it, signed by a key made for the purpose that holds nothing, is sent to /verify through the
 * merchant's own facilitator client (the failover's, with its credentials). A facilitator that judges it (most
 * likely `insufficient_funds`: nobody funds the key) would settle the way for this merchant; one that refuses
 * it (401 or 403, or an answer that names the merchant's access or an unsupported scheme, network or asset)
 * would not. A way is left out when every facilitator refused it or none lists it; kept while one cannot be
 * asked (down), as the kit then answers 503 anyway.
 *
 * For batch-settlement the signed payment is a deposit into the channel the 402 would ask for, naming the
 * receiverAuthorizer the 402 would name: the merchant's own key (any facilitator relays what it signs) or
 * the facilitator's, which the project's facilitator accepts only where it will sign claims and refunds for
 * this receiver (an API key naming it, a payee of its own process, the devnet's loopback). Nothing is
 * settled, and nothing is signed by the facilitator: /verify only.
 */
import type { FacilitatorClient, ResourceConfig, RouteConfig, x402ResourceServer } from "@x402/core/server";
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  VerifyError,
  type VerifyResponse,
} from "@x402/core/types";
import { createBatchSettlementEIP3009DepositPayload } from "@x402/evm/batch-settlement/client";
import { ExactEvmScheme as ExactClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { FailoverFacilitator } from "./failover.ts";

/** A way to pay: `scheme/transfer`, as the 402 lists it ("exact/eip3009", "upto/permit2", ...). */
export type WayToPay = `${string}/${string}`;

/** Whether a way can be settled: `yes`, `no` (refused, with why), or `unknown` (no facilitator answered). */
export type Verdict = { way: WayToPay; can: "yes" | "unknown" } | { way: WayToPay; can: "no"; why: string };

type Accept = Exclude<RouteConfig["accepts"], readonly unknown[]>;

/** The way an `accepts` entry (a route's, before the SDK completes it) asks to be paid. */
export function wayOf(accept: {
  scheme: string;
  price?: unknown;
  extra?: Record<string, unknown>;
}): WayToPay {
  const priceExtra = (accept.price as { extra?: { assetTransferMethod?: unknown } } | undefined)?.extra;
  const method = accept.extra?.assetTransferMethod ?? priceExtra?.assetTransferMethod;
  if (typeof method === "string") return `${accept.scheme}/${method}`;
  return `${accept.scheme}/${accept.scheme === "upto" ? "permit2" : "eip3009"}`;
}

/**
 * The way an `accepts` entry asks to be paid, on its network: "exact/eip3009 on eip155:137"; on Solana a
 * transaction the buyer signs, "exact/svm on solana:5eykt...".
 */
export function networkWayOf(accept: Parameters<typeof wayOf>[0] & { network: string }): WayToPay {
  if (accept.network.startsWith("solana:")) return `${accept.scheme}/svm on ${accept.network}`;
  return `${wayOf(accept)} on ${accept.network}`;
}

/**
 * Refusals that say this facilitator will not do it for this merchant (the project's facilitator's codes,
 * and x402's for a scheme, network or asset it does not take), not that the payment is bad.
 */
const REFUSALS = new Set([
  "payee_not_allowed",
  "api_key_invalid",
  "authorizer_key_required",
  "unclaimable_channel",
  "unsupported_scheme",
  "invalid_network",
  "unsupported_asset",
]);

/** The probe's payer: a key of this process that never holds anything. */
const prober = privateKeyToAccount(generatePrivateKey());

/**
 * Each way among `accepts` (one route's entry per way), judged against the facilitators of `client`, with
 * the requirements `resourceServer` completes from their `/supported`.
 */
export async function settleableWays(
  resourceServer: x402ResourceServer,
  client: FacilitatorClient,
  accepts: readonly Accept[],
  /** Told of each refusal a facilitator threw (the operator's log: payments/facilitators/watch.ts). */
  onRefusal?: (error: unknown, message: string) => void,
): Promise<Verdict[]> {
  return Promise.all(
    accepts.map(async (accept): Promise<Verdict> => {
      // Judged on its network: a facilitator may settle a way on one chain and not on another.
      const way = networkWayOf(accept);
      let requirements: PaymentRequirements | undefined;
      try {
        [requirements] = await resourceServer.buildPaymentRequirements(accept as ResourceConfig);
      } catch (error) {
        return { way, can: "no", why: (error as Error).message };
      }
      if (!requirements) return { way, can: "no", why: "no facilitator lists it on the network" };
      // A Solana payment cannot be signed without a chain to read (its blockhash, the mint): a facilitator that
      // lists exact on Solana, with the fee payer the SDK put in the requirements, is taken at its word.
      if (requirements.network.startsWith("solana:"))
        return requirements.extra?.feePayer
          ? { way, can: "yes" }
          : { way, can: "no", why: "no facilitator names a Solana fee payer" };
      let payment: PaymentPayload;
      try {
        payment = await probePayment(requirements);
      } catch (error) {
        return { way, can: "no", why: `cannot be signed (${(error as Error).message})` };
      }
      return judged(way, await askEach(client, payment, requirements, onRefusal));
    }),
  );
}

/** A payment of `requirements` by the prober, as a buyer's client would sign it. */
async function probePayment(requirements: PaymentRequirements): Promise<PaymentPayload> {
  const x402Version = 2;
  let payload: PaymentPayload["payload"];
  if (requirements.scheme === "exact")
    payload = (await new ExactClient(prober).createPaymentPayload(x402Version, requirements)).payload;
  else if (requirements.scheme === "upto")
    payload = (await new UptoClient(prober).createPaymentPayload(x402Version, requirements)).payload;
  else if (requirements.scheme === "batch-settlement") {
    const extra = requirements.extra as { receiverAuthorizer: `0x${string}`; withdrawDelay: number };
    const config = {
      payer: prober.address,
      payerAuthorizer: prober.address,
      receiver: requirements.payTo as `0x${string}`,
      receiverAuthorizer: extra.receiverAuthorizer,
      token: requirements.asset as `0x${string}`,
      withdrawDelay: extra.withdrawDelay,
      salt: `0x${"0".repeat(64)}` as `0x${string}`,
    };
    payload = (
      await createBatchSettlementEIP3009DepositPayload(
        prober,
        x402Version,
        requirements,
        config,
        requirements.amount,
        requirements.amount,
      )
    ).payload;
  } else throw new Error(`no probe for the ${requirements.scheme} scheme`);
  return { x402Version, accepted: requirements, payload };
}

type Answer = { kind: "judged" } | { kind: "refused" | "unknown"; why: string };

/** Each facilitator's answer to the probe: those of a failover's list apart, else the client's one. */
async function askEach(
  client: FacilitatorClient,
  payment: PaymentPayload,
  requirements: PaymentRequirements,
  onRefusal?: (error: unknown, message: string) => void,
): Promise<Answer[]> {
  const clients = client instanceof FailoverFacilitator ? client.members() : [{ name: "", client }];
  return Promise.all(
    clients.map(async ({ name, client: one }) => {
      const answer = await ask(one, payment, requirements, onRefusal);
      return answer.kind === "judged" || !name ? answer : { ...answer, why: `${name}: ${answer.why}` };
    }),
  );
}

async function ask(
  client: FacilitatorClient,
  payment: PaymentPayload,
  requirements: PaymentRequirements,
  onRefusal?: (error: unknown, message: string) => void,
): Promise<Answer> {
  let answer: VerifyResponse;
  try {
    answer = await client.verify(payment, requirements);
  } catch (error) {
    const status =
      error instanceof VerifyError || error instanceof SettleError ? error.statusCode : undefined;
    const reason = error instanceof VerifyError ? error.invalidReason : undefined;
    const detail = error instanceof VerifyError ? error.invalidMessage : undefined;
    const text = reason && detail ? `${reason}: ${detail}` : (reason ?? (error as Error).message);
    const why = text.split("\n")[0]?.slice(0, 300) ?? "";
    if (status === 401 || status === 403 || (reason !== undefined && REFUSALS.has(reason))) {
      onRefusal?.(error, ((error as Error).message ?? why).split("\n")[0] ?? why);
      return { kind: "refused", why };
    }
    return { kind: "unknown", why };
  }
  if (!answer.isValid && answer.invalidReason && REFUSALS.has(answer.invalidReason))
    return {
      kind: "refused",
      why: answer.invalidMessage ? `${answer.invalidReason}: ${answer.invalidMessage}` : answer.invalidReason,
    };
  return { kind: "judged" };
}

/** Settleable when one facilitator judged it; not when every one refused; unknown otherwise. */
function judged(way: WayToPay, answers: readonly Answer[]): Verdict {
  if (answers.some((a) => a.kind === "judged")) return { way, can: "yes" };
  const refusals = answers.filter((a) => a.kind === "refused");
  if (refusals.length === answers.length && refusals.length > 0)
    return { way, can: "no", why: refusals.map((a) => (a as { why: string }).why).join("; ") };
  return { way, can: "unknown" };
}
