/**
 * The facilitator's answers in the metrics (src/common/metrics.ts): every verification and settlement it
 * answers, in process or over HTTP, by result, reason and the x402 version the request spoke (v1.ts), and
 * how long each took. The reasons are its own
 * and the SDK's constants (errors.ts), bounded all the same.
 */
import type { SettleResponse, VerifyResponse } from "@x402/core/types";
import {
  bounded,
  facilitatorSettlements,
  facilitatorSettleSeconds,
  facilitatorVerifications,
  facilitatorVerifySeconds,
  secondsSince,
} from "../common/metrics.ts";
import { SETTLEMENT_PENDING } from "./error-codes.ts";
import type { X402Version } from "./v1.ts";

const reasonOf = bounded();

/** Times and counts a verification; one that throws counts as `error` (HTTP answers it with a 500). */
export async function countedVerify(
  version: X402Version,
  verify: () => Promise<VerifyResponse>,
): Promise<VerifyResponse> {
  const start = performance.now();
  let result = "error";
  let reason = "unexpected_verify_error";
  try {
    const answer = await verify();
    result = answer.isValid ? "valid" : "invalid";
    reason = answer.isValid ? "none" : reasonOf(answer.invalidReason ?? "unknown");
    return answer;
  } finally {
    facilitatorVerifySeconds.observe({ result }, secondsSince(start));
    facilitatorVerifications.inc({ result, reason, x402_version: version });
  }
}

/** Times and counts a settlement: settled, pending (broadcast, not yet confirmed), failed, or error (threw). */
export async function countedSettle(
  version: X402Version,
  settle: () => Promise<SettleResponse>,
): Promise<SettleResponse> {
  const start = performance.now();
  let outcome = "error";
  let reason = "unexpected_settle_error";
  try {
    const answer = await settle();
    outcome = answer.success ? "settled" : answer.errorReason === SETTLEMENT_PENDING ? "pending" : "failed";
    reason = answer.success ? "none" : reasonOf(answer.errorReason ?? "unknown");
    return answer;
  } finally {
    facilitatorSettleSeconds.observe({ outcome }, secondsSince(start));
    facilitatorSettlements.inc({ outcome, reason, x402_version: version });
  }
}

/**
 * A request refused over HTTP before anything was verified or signed (a malformed body, the access
 * gate): counted as an invalid verification or a failed settlement, untimed.
 */
export function countRefused(operation: "verify" | "settle", reason: string, version: X402Version): void {
  const labels = { reason: reasonOf(reason), x402_version: version };
  if (operation === "verify") facilitatorVerifications.inc({ result: "invalid", ...labels });
  else facilitatorSettlements.inc({ outcome: "failed", ...labels });
}
