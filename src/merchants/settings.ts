/**
 * The merchants' parts of the configuration, one section per merchant that has settings (a new one adds
 * its line here), and the work budget every merchant's limits are held to. The configuration reaches them
 * through this file, not index.ts: every command reads the configuration, and index.ts loads every
 * catalogue (about 2 s of CPU).
 */
import type { SettingsOf } from "../config/section.ts";
import { inferenceSection } from "./inference/settings.ts";
import { socialSection } from "./social/settings.ts";
import { utilitySection } from "./utility/settings.ts";
import { workBudgetSection } from "./work-budget.ts";

export const MERCHANT_SECTIONS = [
  utilitySection,
  inferenceSection,
  socialSection,
  workBudgetSection,
] as const;

/** What the merchants read of the configuration when they are built. */
export type MerchantsSettings = SettingsOf<typeof MERCHANT_SECTIONS>;
