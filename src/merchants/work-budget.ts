/**
 * What one paid call may make a merchant host do, per $0.001 of its price (issue 69): CPU time of the serve
 * process and growth of its resident memory. An endpoint's limits (the catalogue's numbers, stated in its
 * schema) are chosen so that its most expensive accepted input stays within its price's share, and
 * `npm run bench:worst-case` measures every paid endpoint's worst case against it. The page endpoints also
 * enforce theirs at run time (`X402M_PAGE_CPU_MS`, `X402M_PAGE_HEAP_MB`).
 */
import { z } from "zod";
import type { Section } from "../config/section.ts";

export interface WorkBudget {
  /** CPU milliseconds per $0.001. */
  cpuMs: number;
  /** MB of resident memory growth per $0.001. */
  memoryMb: number;
}

/** Issue 69's defaults: 2 CPU-s and 200 MB for a call of a tenth of a cent. */
export const DEFAULT_WORK_BUDGET: WorkBudget = { cpuMs: 2_000, memoryMb: 200 };

const WorkBudgetSchema = z.object({
  workBudget: z.object({
    cpuMs: z.coerce.number().int().min(10).max(3_600_000),
    memoryMb: z.coerce.number().int().min(1).max(65_536),
  }),
});

export const workBudgetSection: Section<typeof WorkBudgetSchema> = {
  schema: WorkBudgetSchema,
  read: ({ env }) => ({
    workBudget: {
      cpuMs: env.X402M_WORK_CPU_MS ?? DEFAULT_WORK_BUDGET.cpuMs,
      memoryMb: env.X402M_WORK_MEMORY_MB ?? DEFAULT_WORK_BUDGET.memoryMb,
    },
  }),
  settingOf: ([, field]) => (field === "memoryMb" ? "X402M_WORK_MEMORY_MB" : "X402M_WORK_CPU_MS"),
};

/** The budget of one call at `price` (USD, "0.005"): the per-$0.001 budget times its thousandths of a dollar. */
export function budgetAt(price: string, budget: WorkBudget = DEFAULT_WORK_BUDGET): WorkBudget {
  // Through millionths of a cent: 0.018 / 0.001 in floating point is not exactly 18.
  const thousandths = Math.round(Number(price) * 1e9) / 1e6;
  return { cpuMs: budget.cpuMs * thousandths, memoryMb: budget.memoryMb * thousandths };
}
