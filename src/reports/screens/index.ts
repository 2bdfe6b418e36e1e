import { merchantFunded } from "./merchant-funded.ts";
import { prober } from "./prober.ts";
import { ring } from "./ring.ts";
import type { Screen } from "./screen.ts";
import { selfPayment } from "./self-payment.ts";
import { tinyRepeat } from "./tiny-repeat.ts";

export type { Screen } from "./screen.ts";
export { THRESHOLDS } from "./thresholds.ts";

/**
 * The screens in precedence order: a payment matching several belongs to the first. The order runs
 * from the most direct evidence of the merchant's own money to the weakest pattern.
 */
export const SCREENS: readonly Screen[] = [selfPayment, merchantFunded, ring, prober, tinyRepeat];

export const FLAG_KINDS = SCREENS.map((s) => s.kind);

/** Where the report service serves docs/screens.md, the screens' rules for people. */
export const SCREENS_PATH = "/screens";
