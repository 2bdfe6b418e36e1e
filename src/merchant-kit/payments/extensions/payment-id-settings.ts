/**
 * The `payment-identifier` extension's settings (the configuration's `paymentIds`, docs/platform.md,
 * "Retries charged once"): which routes require a buyer's payment id, and how long an answer is kept for
 * the retries that carry its id.
 */
import { z } from "zod";
import type { Env } from "../../../config/values.ts";

/** A day: a buyer that lost an answer retries within minutes; a day covers an agent restarted overnight too. */
export const DEFAULT_PAYMENT_ID_TTL_SECONDS = 86_400;

export const PaymentIdSettingsSchema = z.object({
  /**
   * The routes whose payments must carry an id (`*`: every paid route), by path (`/api/store/insert`), on
   * every host that serves the path. Elsewhere an id is optional.
   */
  required: z
    .string()
    .transform((text) =>
      text
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ""),
    )
    .pipe(z.array(z.string().regex(/^(\*|\/\S*)$/, 'a path such as /api/calc, or "*"'))),
  /** How long an answer stays stored for the retries with its id (and the id stays bound to its request). */
  ttlSeconds: z.coerce
    .number()
    .int("whole seconds")
    .min(60, "at least 60 seconds")
    .max(30 * 86_400, "at most 30 days"),
});

export type PaymentIdSettings = z.infer<typeof PaymentIdSettingsSchema>;

const VARIABLES: Record<keyof PaymentIdSettings, readonly [string, string]> = {
  required: ["X402M_PAYMENT_ID_REQUIRED", ""],
  ttlSeconds: ["X402M_PAYMENT_ID_TTL_SECONDS", String(DEFAULT_PAYMENT_ID_TTL_SECONDS)],
};

/** The settings' raw values, from the environment. */
export function readPaymentIds(env: Env): Record<keyof PaymentIdSettings, string> {
  return {
    required: env[VARIABLES.required[0]] ?? VARIABLES.required[1],
    ttlSeconds: env[VARIABLES.ttlSeconds[0]] || VARIABLES.ttlSeconds[1],
  };
}

/** The environment variable behind a path in `paymentIds`. */
export function paymentIdsSetting([field]: readonly string[]): string | undefined {
  return VARIABLES[field as keyof PaymentIdSettings]?.[0];
}

/** Whether `path`'s payments must carry an id under these settings. */
export function paymentIdRequired(settings: Pick<PaymentIdSettings, "required">, path: string): boolean {
  return settings.required.some((entry) => entry === "*" || entry === path);
}
