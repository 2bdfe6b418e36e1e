/**
 * Why a request is not judged on its merits. `malformed`: the body is not a well-formed x402 request (v2,
 * or v1 as the v1 packages send it) for what it claims (HTTP 400); otherwise it is well-formed but asks for
 * something this facilitator does not do (HTTP 200 with `isValid: false` / `success: false`, as the spec's
 * error responses).
 */
export interface Rejection {
  ok: false;
  reason: string;
  message: string;
  malformed: boolean;
}

export function malformed(reason: string, message: string): Rejection {
  return { ok: false, reason, message, malformed: true };
}

export function refused(reason: string, message: string): Rejection {
  return { ok: false, reason, message, malformed: false };
}

/** The first problem of a zod (3 or 4) error, as "path: message". */
export function describe(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  return issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message;
}
