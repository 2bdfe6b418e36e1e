/**
 * One simulated payment: over HTTP (`@x402/fetch`) or the merchant's MCP face, tried again as an agent
 * would when refused without a charge, and what it settled for the ground truth.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
import { BaseError, type Hash, parseUnits } from "viem";
import { sleep } from "../common/sleep.ts";
import { callPaidTool, paymentRequiredOf } from "../merchant-kit/index.ts";
import { type McpFace, type McpFaces, viaMcp } from "./mcp-faces.ts";
import type { SettledPayment } from "./pending-truth.ts";
import type { Action, PlanEndpoint } from "./plan-types.ts";
import { request } from "./request.ts";
import type { SimChain } from "./sim-chain.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { permit2Payer, type SimWallets } from "./sim-wallets.ts";

/** A payment refused without a charge, or whose own chain read lost its block, is tried this often in all. */
const PAY_ATTEMPTS = 3;

/** One try at a payment: its settlement, or the status and reason it failed and whether to try again. */
interface Attempt {
  status: number;
  settlement?: SettleResponse;
  reason?: string;
  again?: boolean;
}

/**
 * How a payment ended: settled on chain, paid by a voucher through a channel (on chain when the merchant
 * claims it: channel-claims.ts), charged nothing (a metered call that used nothing), or failed.
 */
export type PaymentOutcome =
  | { settled: SettledPayment }
  | { voucher: true }
  | { failed: { status: number; reason: string } }
  | { charged: "nothing" };

/** What a payment is made with. */
export interface PaymentParts {
  wallets: SimWallets;
  faces: McpFaces;
  chain: SimChain;
}

/** Makes the payment `action` to `endpoint` of `merchant`; never throws. */
export async function pay(
  action: Extract<Action, { type: "pay" }>,
  merchant: SimMerchant,
  endpoint: PlanEndpoint,
  { wallets, faces, chain }: PaymentParts,
): Promise<PaymentOutcome> {
  const failed = (status: number, reason: string): PaymentOutcome => ({ failed: { status, reason } });
  const input = action.input ?? endpoint.input;
  try {
    // A channel's calls go over HTTP, where the SDK's channel client pays them.
    const channel =
      action.session === undefined ? undefined : wallets.channel(action.from, merchant.id, action.session);
    const face = !channel && viaMcp(action) ? await faces.get(merchant) : undefined;
    const tool = face?.toolFor(endpoint);
    const permit2 = endpoint.scheme !== "upto" && endpoint.permit2 === true && permit2Payer(action.from);
    const outcome = await withRetries(async () => {
      // One call at a time through a channel, as its vouchers are cumulative: the merchant refuses a
      // second while one is under way (channel busy), and so would any.
      if (channel)
        return await channel.serial(() => overHttp(channel.payingFetch, merchant, endpoint, input));
      if (endpoint.scheme === "upto" || permit2) await chain.approvePermit2(action.from);
      return face && tool
        ? await overMcp(face, tool, wallets, action, input)
        : await overHttp(wallets.payingFetch(action.from), merchant, endpoint, input);
    });
    const { settlement } = outcome;
    if (!settlement) return failed(outcome.status, outcome.reason ?? "no settlement");
    if (!settlement.success) return failed(outcome.status, settlement.errorReason ?? "settlement failed");
    // A deposit's transaction is the payer's own money going into its channel, not a payment.
    if (channel) return { voucher: true };
    // A metered call charges what it used (the settlement says how much); one that used nothing
    // settles nothing and leaves nothing on chain.
    const amount =
      endpoint.scheme === "upto" ? BigInt(settlement.amount ?? 0) : parseUnits(String(endpoint.price), 6);
    if (amount === 0n || !settlement.transaction) return { charged: "nothing" };
    return {
      settled: {
        hash: settlement.transaction as Hash,
        record: {
          tx_hash: settlement.transaction.toLowerCase(),
          payer: wallets.account(action.from).address.toLowerCase(),
          pay_to: merchant.payTo.toLowerCase(),
          amount: amount.toString(),
          behaviour: action.behaviour,
          merchant: merchant.id,
          endpoint: `${endpoint.method} ${endpoint.path}`,
          ...(face && tool ? { face: "mcp" as const } : {}),
          ...(endpoint.scheme === "upto"
            ? { scheme: "upto" as const, transfer_method: "permit2" as const }
            : {
                scheme: "exact" as const,
                transfer_method: permit2 ? ("permit2" as const) : ("eip3009" as const),
              }),
        },
      },
    };
  } catch (error) {
    return failed(0, reasonOf(error));
  }
}

/**
 * Refused after paying, or "try again", and charged nothing, or a read of our own that lost its block:
 * try again, as an agent would. The devnet keeps no state but the head's, so a read (ours, a
 * verification, a balance) that a burst of mined blocks overtakes finds none (devnet docs).
 */
async function withRetries(once: () => Promise<Attempt>): Promise<Attempt> {
  for (let attempt = 1; ; attempt++) {
    const retry = attempt < PAY_ATTEMPTS;
    let outcome: Attempt;
    try {
      outcome = await once();
    } catch (error) {
      if (!(retry && lostItsBlock(error))) throw error;
      await sleep(50 * attempt);
      continue;
    }
    if (!(retry && outcome.again)) return outcome;
    await sleep(outcome.status === 503 ? 200 : 50 * attempt);
  }
}

/** One try over HTTP (`@x402/fetch`): the settlement, or why not and whether another try may do. */
async function overHttp(
  payingFetch: typeof fetch,
  merchant: SimMerchant,
  endpoint: PlanEndpoint,
  input: Record<string, unknown>,
): Promise<Attempt> {
  const response = await payingFetch(...request(merchant.url, endpoint, input));
  const header = response.headers.get("PAYMENT-RESPONSE");
  if (!response.ok || !header) {
    const reason = refusal(response.headers.get("PAYMENT-REQUIRED")) ?? (await response.text()).slice(0, 200);
    return { status: response.status, reason, again: response.status === 402 || response.status === 503 };
  }
  await response.arrayBuffer().catch(() => undefined);
  return { status: response.status, settlement: decodePaymentResponseHeader(header) };
}

/** One try over MCP (x402's MCP transport): a PaymentRequired after paying is a refusal, as a 402. */
async function overMcp(
  face: McpFace,
  tool: string,
  wallets: SimWallets,
  action: Extract<Action, { type: "pay" }>,
  input: Record<string, unknown>,
): Promise<Attempt> {
  const call = await callPaidTool(face.client, wallets.x402Client(action.from), tool, input);
  if (call.settlement?.success) return { status: 200, settlement: call.settlement };
  const required = paymentRequiredOf(call.result);
  const text = call.result.content?.[0]?.type === "text" ? call.result.content[0].text : "";
  return {
    status: required ? 402 : 0,
    reason: `over MCP: ${required?.error ?? call.settlement?.errorReason ?? text.slice(0, 200)}`,
    again: required !== undefined,
  };
}

/** Why a paid call was refused with 402: the reason its `PAYMENT-REQUIRED` header gives (its body may be empty). */
function refusal(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    return decodePaymentRequiredHeader(header).error;
  } catch {
    return undefined;
  }
}

/**
 * A read at "latest" that the devnet answered "block height is N but requested was M": anvil keeping no
 * state but the head's (`--prune-history`) had mined past the block the read resolved. Asked again, it reads
 * the new head.
 */
function lostItsBlock(error: unknown): boolean {
  return /BlockOutOfRange|block height is \d+ but requested was/.test(rootCause(error));
}

/** The innermost reason an error carries: a viem error's details, under the SDK's own wrapping. */
function rootCause(error: unknown): string {
  let reason = error instanceof Error ? error.message : String(error);
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    reason = (e instanceof BaseError && e.details) || e.message;
  }
  return reason;
}

/** An error's first line, and its innermost reason where that differs. */
function reasonOf(error: unknown): string {
  const first = ((error as Error).message ?? String(error)).split("\n")[0] ?? "error";
  const root = rootCause(error).split("\n")[0] ?? "";
  return root && !first.includes(root) ? `${first} (${root})` : first;
}
