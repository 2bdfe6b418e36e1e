/**
 * The weekly attester's settings (src/reports/attest/attester.ts, docs/attestation.md): off until the operator
 * gives it a key of its own. Only from the environment: a key never goes on a command line (process lists
 * show flags), and is never printed. Kept beside the service that reads them, as the facilitator's are: every
 * command reads the configuration, and most never load the reports.
 */
import { z } from "zod";
import { type Section, settingIn } from "../config/section.ts";

/**
 * The most one transaction may cost unless the operator says otherwise: 0.005 ETH. An attestation takes
 * about 0.4 M gas (1.06 * 10^15 wei at 1 gwei, measured on a devnet); Base's fees are a hundredth of that
 * or less, so this stops only a fee spike or a runaway estimate.
 */
export const DEFAULT_MAX_COST_WEI = 5n * 10n ** 15n;

const AttestSchema = z.object({
  attest: z.object({
    /** The attester's key (X402M_ATTEST_KEY): its own, funded for gas and used for nothing else; null: off. */
    key: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte private key in hex, 0x-prefixed")
      .transform((k) => k as `0x${string}`)
      .nullable(),
    /** The chain attested on (X402M_ATTEST_RPC); null: the chain `serve --rpc` follows. */
    rpc: z.url({ protocol: /^https?$/, error: "an http(s) JSON-RPC URL" }).nullable(),
    /** The most one transaction may cost, in ETH (X402M_ATTEST_MAX_COST_ETH), as wei. */
    maxCostWei: z
      .string()
      .regex(/^\d+(\.\d{1,18})?$/, "an amount of ETH, such as 0.005")
      .transform(weiOf)
      .refine((wei) => wei > 0n, "more than 0 ETH"),
    /** The first week close to attest (X402M_ATTEST_FROM_BLOCK); null: the last closed when the service starts. */
    fromBlock: z.coerce.number({ error: "a block number" }).int().min(0).nullable(),
  }),
});

export type AttestSettings = z.infer<typeof AttestSchema>["attest"];

const SETTINGS = {
  "attest.key": "X402M_ATTEST_KEY",
  "attest.rpc": "X402M_ATTEST_RPC",
  "attest.maxCostWei": "X402M_ATTEST_MAX_COST_ETH",
  "attest.fromBlock": "X402M_ATTEST_FROM_BLOCK",
};

export const attestSection: Section<typeof AttestSchema> = {
  schema: AttestSchema,
  read: ({ env }) => ({
    attest: {
      key: env.X402M_ATTEST_KEY || null,
      rpc: env.X402M_ATTEST_RPC || null,
      maxCostWei: env.X402M_ATTEST_MAX_COST_ETH || formatEth(DEFAULT_MAX_COST_WEI),
      fromBlock: env.X402M_ATTEST_FROM_BLOCK || null,
    },
  }),
  settingOf: (path) => settingIn(SETTINGS, path),
};

/** A decimal amount of ETH (at most 18 decimals) as wei. */
function weiOf(eth: string): bigint {
  const [whole = "0", fraction = ""] = eth.split(".");
  return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(18, "0"));
}

/** Wei as a decimal amount of ETH, for a default that reads like what an operator writes. */
function formatEth(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const fraction = (wei % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}
