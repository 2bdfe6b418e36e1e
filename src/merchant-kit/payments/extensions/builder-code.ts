/**
 * A merchant host's ERC-8021 builder code (x402's `builder-code` extension; docs/platform.md, "Builder codes"):
 * declared in each paid route's 402 as the app code (`a`), which the buyer's client copies into its payment
 * and the facilitator appends, with its own code (`w`) and the services' (`s`), to the settlement's calldata.
 * Anyone reading the chain can then count the payments an app brought; the indexer does (src/indexer/).
 *
 * What the chain carries is what the payer's software put in its payment: the merchant declares its code, the
 * client may drop or change it (x402 #3299). A decoded code is a claim, not proof of where a payment came from.
 */
import {
  BUILDER_CODE,
  BUILDER_CODE_PATTERN,
  declareBuilderCodeExtension,
} from "@x402/extensions/builder-code";
import type { Env } from "../../../config/values.ts";

export { BUILDER_CODE_PATTERN };

/** Set a host's code to this to declare none. */
export const NO_BUILDER_CODE = "none";

/**
 * A host's code when none is set: the project's and the host's names (`utility-alias` -> `x402m_utility_alias`:
 * an alias host is paid to its source's wallet, and its own code tells its payments apart), so that the demo's
 * payments carry codes out of the box. An operator with a registered code sets it.
 */
export function defaultBuilderCode(host: string): string {
  return `x402m_${host.replace(/-/g, "_")}`;
}

/**
 * A host's code from the environment: `<prefix>BUILDER_CODE`, else its source host's (`fallbackPrefix`, an
 * alias host's), else `fallbackCode`; null when set to "none". Checked against the pattern by the settings.
 */
export function readBuilderCode(
  env: Env,
  prefix: string,
  fallbackCode: string,
  fallbackPrefix?: string,
): string | null {
  const value =
    env[`${prefix}BUILDER_CODE`] || (fallbackPrefix && env[`${fallbackPrefix}BUILDER_CODE`]) || fallbackCode;
  return value === NO_BUILDER_CODE ? null : value;
}

/** The route's `extensions` entry declaring the host's code, or nothing when it has none. */
export function declareBuilderCode(code: string | undefined): Record<string, unknown> {
  return code ? { [BUILDER_CODE]: declareBuilderCodeExtension(code) } : {};
}
