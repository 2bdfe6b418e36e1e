/**
 * Data tools of the utility API (docs/platform.md, "The utility API's endpoints"): colour contrast, data conversion and QR codes. Each endpoint's
 * HTTP definition sits beside its engine (`<name>.ts` and `<name>-engine.ts`).
 */
import type { AnyEndpoint } from "../../../merchant-kit/index.ts";
import type { WorkBudget } from "../../work-budget.ts";
import { contrast } from "./contrast.ts";
import { convert, convertEndpoint } from "./convert.ts";
import { qr } from "./qr.ts";

export { contrast, convert, qr };

/** In the price list's order: /api/a11y/contrast, /api/data/convert, /api/qr. */
export const DATA_ENDPOINTS: readonly AnyEndpoint[] = [contrast, convert, qr];

/** The same, the conversion under `budget` per $0.001 (the operator's work budget). */
export function dataEndpoints(budget?: WorkBudget): readonly AnyEndpoint[] {
  return budget ? [contrast, convertEndpoint(budget), qr] : DATA_ENDPOINTS;
}
