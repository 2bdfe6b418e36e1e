/**
 * The one validated configuration, put together from its owners' sections: the core every process reads
 * (src/config/core.ts), the merchant kit's, the standalone facilitator's, the report service's (its attester,
 * the chains it follows) and the merchants'. Read once at start from flags and the environment; every module
 * receives the slice it needs as a parameter and never reads `process.env` itself.
 */
import { coreSection } from "../config/core.ts";
import { type ConfigFlags, type ConfigInput, configLoader, type SettingsOf } from "../config/section.ts";
import { merchantKitSection } from "../merchant-kit/settings.ts";
import { MERCHANT_SECTIONS } from "../merchants/settings.ts";
import { attestSection } from "./attest-settings.ts";
import { facilitatorSection } from "./facilitator-settings.ts";
import { followSection } from "./follow-settings.ts";

const SECTIONS = [
  coreSection,
  facilitatorSection,
  merchantKitSection,
  attestSection,
  followSection,
  ...MERCHANT_SECTIONS,
] as const;

export type Config = SettingsOf<typeof SECTIONS>;

const load = configLoader(SECTIONS);

/** Flags win over the environment, the environment over the defaults. */
export function loadConfig(input: ConfigInput = {}): Config {
  return load(input);
}

/** The process's configuration: the one place `process.env` is read. */
export function loadConfigFromProcess(flags: ConfigFlags = {}): Config {
  return loadConfig({ flags, env: process.env });
}
