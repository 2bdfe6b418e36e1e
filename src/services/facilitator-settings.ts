/**
 * The standalone facilitator's settings (`x402-merchants facilitator`, docs/facilitator.md): its signing key
 * and the payees it settles for without an API key. Kept beside the service that reads them, not in
 * src/facilitator/: every command reads the configuration, and a process serving merchants only never loads
 * the facilitator.
 */
import fs from "node:fs";
import { z } from "zod";
import { ConfigError } from "../config/config-error.ts";
import { type Section, settingIn } from "../config/section.ts";
import { commaList, type Env } from "../config/values.ts";

const FacilitatorSchema = z.object({
  /**
   * The key the standalone facilitator (`x402-merchants facilitator`) settles with: it pays the gas.
   * Only from the environment, never a flag (flags show in process lists); never printed.
   */
  facilitatorKey: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte private key in hex, 0x-prefixed")
    .nullable(),
  /**
   * Payees the facilitator settles for without an API key (X402M_FACILITATOR_PAYEES, comma-separated),
   * lower-case; the merchants served in its own process are added to them (docs/facilitator.md).
   */
  facilitatorPayees: z.array(
    z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, "wallet addresses separated by commas")
      .transform((a) => a.toLowerCase() as `0x${string}`),
  ),
});

export type FacilitatorSettings = z.infer<typeof FacilitatorSchema>;

export const facilitatorSection: Section<typeof FacilitatorSchema> = {
  schema: FacilitatorSchema,
  read: ({ env }) => ({
    facilitatorKey: facilitatorKeyOf(env),
    facilitatorPayees: commaList(env.X402M_FACILITATOR_PAYEES),
  }),
  settingOf: (path) =>
    settingIn(
      { facilitatorKey: "X402M_FACILITATOR_KEY", facilitatorPayees: "X402M_FACILITATOR_PAYEES" },
      path,
    ),
};

/**
 * The facilitator's signing key: X402M_FACILITATOR_KEY, or the content of the file X402M_FACILITATOR_KEY_FILE
 * names (whitespace trimmed), never both. A refusal names the setting, never the content.
 */
function facilitatorKeyOf(env: Env): string | null {
  const file = env.X402M_FACILITATOR_KEY_FILE;
  if (!file) return env.X402M_FACILITATOR_KEY || null;
  if (env.X402M_FACILITATOR_KEY) {
    throw new ConfigError(
      "both X402M_FACILITATOR_KEY and X402M_FACILITATOR_KEY_FILE are set: pick one (the file keeps the key out of the environment)",
    );
  }
  let content: string;
  try {
    content = fs.readFileSync(file, "utf8").trim();
  } catch (error) {
    throw new ConfigError(
      `invalid X402M_FACILITATOR_KEY_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`,
    );
  }
  if (!/^0x[0-9a-fA-F]{64}$/.test(content)) {
    throw new ConfigError(
      `invalid X402M_FACILITATOR_KEY_FILE: ${file} must hold a 32-byte private key in hex, 0x-prefixed, and nothing else`,
    );
  }
  return content;
}
