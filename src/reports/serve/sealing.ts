import { AppError } from "../../common/errors.ts";
import { sealOf } from "../attest/seal.ts";
import { type SealedWeekRow, sealedWeek, storeSeal } from "../attest/store.ts";
import type { ReportWindows } from "./windows.ts";

/**
 * Seals the chain's week ending at `end` (src/reports/attest/seal.ts), its reports built first unless they are
 * current, in one turn with the builds: from then on the window is never built again nor dropped, and
 * what was sealed is what its attestation commits to. A week sealed before is answered as it was. Refuses
 * a window that is not complete (its last blocks not all final).
 */
export function sealWeek(windows: ReportWindows, end: number): Promise<SealedWeekRow> {
  const { analytics, chain } = windows;
  return windows.serial(async () => {
    const sealed = await sealedWeek(analytics, chain, end);
    if (sealed) return sealed;
    const window = await windows.ensureWindow(end);
    if (!window.complete) {
      throw new AppError(409, "week_open", `the window ending at block ${end} is not complete: not sealed`);
    }
    const seal = await sealOf(analytics, await windows.context(window));
    await analytics.transaction(() => storeSeal(analytics, chain, seal, windows.now()));
    return (await sealedWeek(analytics, chain, end)) as SealedWeekRow;
  });
}
