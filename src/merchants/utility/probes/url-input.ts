import { z } from "zod";
import { blockedRange, isFetchError, parseTarget, type ResolvedPolicy } from "../../../merchant-kit/index.ts";

/** Longest URL accepted: far beyond any real page address, short enough to log. */
export const MAX_URL_LENGTH = 2048;

/**
 * Monitoring clients often send a bare host (`example.com`): read it as `https://example.com/`, what a
 * browser would try first. Anything with a scheme is taken as written (and `ftp:` is refused).
 */
export function withScheme(value: string): string {
  const trimmed = value.trim();
  return /^[a-z][a-z0-9+.-]*:/i.test(trimmed) && trimmed.includes("//") ? trimmed : `https://${trimmed}`;
}

/**
 * The `url` query field of the probes. Everything that can be refused without DNS is refused here, before
 * any payment is asked for: not http(s), credentials, blocked ports, metadata names, and IP literals in
 * refused ranges (unless the policy allow-lists them). A host name that resolves to a refused address is
 * refused by the probe itself (400 `ssrf_blocked`, not charged either).
 */
export function urlField(policy: ResolvedPolicy) {
  return z
    .string()
    .min(1)
    .max(MAX_URL_LENGTH)
    .transform(withScheme)
    .superRefine((value, ctx) => {
      try {
        const target = parseTarget(value);
        const range = target.literal === null ? null : blockedRange(target.literal);
        if (target.literal !== null && range !== null && !policy.isAllowed(target.literal)) {
          ctx.addIssue({ code: "custom", message: `refusing to probe ${target.literal}: ${range} address` });
        }
      } catch (error) {
        if (!isFetchError(error)) throw error;
        ctx.addIssue({ code: "custom", message: error.message });
      }
    });
}
