/**
 * The standalone facilitator's settings (`x402-merchants facilitator`, docs/facilitator.md): its signing key,
 * the payees it settles for without an API key, the channel authorizers its payees sign their claims with, its
 * builder code and whether it settles in groups. Kept beside the service that reads them, not in
 * src/facilitator/: every command reads the configuration, and a process serving merchants only never loads
 * the facilitator.
 */
import fs from "node:fs";
import { BUILDER_CODE_PATTERN } from "@x402/extensions/builder-code";
import { z } from "zod";
import { chains } from "../chain/chains.ts";
import { ConfigError } from "../config/config-error.ts";
import { type Section, settingIn } from "../config/section.ts";
import { commaList, type Env, facilitatorChainVariable } from "../config/values.ts";

/** A settling key: 32 bytes of hex. */
const SigningKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte private key in hex, 0x-prefixed");

/** Payees, lower-case. */
const Payees = z.array(
  z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "wallet addresses separated by commas")
    .transform((a) => a.toLowerCase() as `0x${string}`),
);

const FacilitatorSchema = z.object({
  /**
   * The key the standalone facilitator (`x402-merchants facilitator`) settles with: it pays the gas.
   * Only from the environment, never a flag (flags show in process lists); never printed.
   */
  facilitatorKey: SigningKey.nullable(),
  /**
   * Payees the facilitator settles for without an API key (X402M_FACILITATOR_PAYEES, comma-separated),
   * lower-case; the merchants served in its own process are added to them (docs/facilitator.md).
   */
  facilitatorPayees: Payees,
  /**
   * Receivers' own channel authorizers (X402M_FACILITATOR_CHANNEL_AUTHORIZERS: `receiver=authorizer` pairs,
   * comma-separated, a receiver repeated for several): its deposit rule relays deposits into channels that
   * name them (docs/facilitator.md, "The deposit rule"). Receiver -> authorizers, lower-case.
   */
  facilitatorChannelAuthorizers: z
    .array(
      z
        .string()
        .regex(
          /^0x[0-9a-fA-F]{40}\s*=\s*0x[0-9a-fA-F]{40}$/,
          "receiver=authorizer pairs of wallet addresses, separated by commas",
        ),
    )
    .transform((pairs) => {
      const table: Record<string, string[]> = {};
      for (const pair of pairs) {
        const [receiver, authorizer] = pair.split("=").map((a) => a.trim().toLowerCase()) as [string, string];
        table[receiver] = [...new Set([...(table[receiver] ?? []), authorizer])];
      }
      return table;
    }),
  /**
   * The facilitator's ERC-8021 builder code (X402M_FACILITATOR_BUILDER_CODE), the `w` of the suffix it appends
   * to what it settles (docs/facilitator.md, "Builder codes"); null ("none"): no `w`, the payment's codes alone.
   */
  facilitatorBuilderCode: z
    .string()
    .regex(BUILDER_CODE_PATTERN, 'lower-case letters, digits and _, 1 to 32 of them, or "none"')
    .nullable(),
  /**
   * Exact EIP-3009 settlements committed in groups through Multicall3 (X402M_FACILITATOR_GROUP_SETTLEMENTS,
   * `on` or `off`, default off; docs/facilitator.md, "Settlements in groups"): `createFacilitator`'s
   * `groupSettlements`.
   */
  facilitatorGroupSettlements: z
    .enum(["on", "off"], { error: "on or off (unset: off)" })
    .transform((value) => value === "on"),
  /**
   * How often a settlement's receipt is asked for, in ms (X402M_FACILITATOR_POLL_MS, default 500): a payment is
   * answered up to this long after its block. Lower for a chain with faster blocks than that (Base's 200 ms since
   * Denim) or a node on the same machine, where each ask costs next to nothing.
   */
  facilitatorPollMs: z.coerce
    .number({ error: "a whole number of ms from 10 to 10000" })
    .int("a whole number of ms from 10 to 10000")
    .min(10, "a whole number of ms from 10 to 10000")
    .max(10_000, "a whole number of ms from 10 to 10000"),
  /**
   * What differs on one chain of a facilitator on several (issue 67 item 6), by chain slug: its settling key
   * (X402M_FACILITATOR_KEY_<SLUG>; unset, X402M_FACILITATOR_KEY's, one address on every chain) and payees it
   * serves without a key there alone (X402M_FACILITATOR_PAYEES_<SLUG>, besides X402M_FACILITATOR_PAYEES).
   */
  facilitatorChains: z.record(z.string(), z.object({ key: SigningKey.nullable(), payees: Payees })),
  /**
   * The Solana fee payer's key pair (X402M_FACILITATOR_SOLANA_KEY: base58 of its 64 bytes, as `solana-keygen`
   * and `devnet --chain solana` print it): with X402M_SOLANA_RPC_URL, the facilitator settles `exact` on Solana
   * too, paying the fees (docs/facilitator.md, "Solana"). Never printed.
   */
  facilitatorSolanaKey: z
    .string()
    .regex(/^[1-9A-HJ-NP-Za-km-z]{86,88}$/, "a Solana key pair: base58 of its 64 bytes")
    .nullable(),
});

/** The facilitator's builder code when none is set: the project's, so that its settlements name it. */
export const DEFAULT_FACILITATOR_BUILDER_CODE = "x402_merchants";

/** How often the standalone facilitator asks for a receipt unless told: a quarter of a 2 s block. */
export const DEFAULT_FACILITATOR_POLL_MS = 500;

export type FacilitatorSettings = z.infer<typeof FacilitatorSchema>;

export const facilitatorSection: Section<typeof FacilitatorSchema> = {
  schema: FacilitatorSchema,
  read: ({ env }) => ({
    facilitatorKey: facilitatorKeyOf(env),
    facilitatorPayees: commaList(env.X402M_FACILITATOR_PAYEES),
    facilitatorChannelAuthorizers: commaList(env.X402M_FACILITATOR_CHANNEL_AUTHORIZERS),
    facilitatorBuilderCode:
      env.X402M_FACILITATOR_BUILDER_CODE === "none"
        ? null
        : env.X402M_FACILITATOR_BUILDER_CODE || DEFAULT_FACILITATOR_BUILDER_CODE,
    facilitatorGroupSettlements: env.X402M_FACILITATOR_GROUP_SETTLEMENTS || "off",
    facilitatorPollMs: env.X402M_FACILITATOR_POLL_MS || DEFAULT_FACILITATOR_POLL_MS,
    facilitatorSolanaKey: env.X402M_FACILITATOR_SOLANA_KEY || null,
    facilitatorChains: Object.fromEntries(
      chains.list.flatMap((chain) => {
        const key = env[facilitatorChainVariable("KEY", chain.slug)] || null;
        const payees = commaList(env[facilitatorChainVariable("PAYEES", chain.slug)]);
        return key || payees.length > 0 ? [[chain.slug, { key, payees }]] : [];
      }),
    ),
  }),
  settingOf: (path) =>
    path[0] === "facilitatorChains" && path[1]
      ? facilitatorChainVariable(path[2] === "key" ? "KEY" : "PAYEES", path[1])
      : settingIn(
          {
            facilitatorKey: "X402M_FACILITATOR_KEY",
            facilitatorPayees: "X402M_FACILITATOR_PAYEES",
            facilitatorChannelAuthorizers: "X402M_FACILITATOR_CHANNEL_AUTHORIZERS",
            facilitatorBuilderCode: "X402M_FACILITATOR_BUILDER_CODE",
            facilitatorGroupSettlements: "X402M_FACILITATOR_GROUP_SETTLEMENTS",
            facilitatorPollMs: "X402M_FACILITATOR_POLL_MS",
            facilitatorSolanaKey: "X402M_FACILITATOR_SOLANA_KEY",
          },
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
