import { describe, expect, it } from "vitest";
import { budgetAt, DEFAULT_WORK_BUDGET } from "../../src/merchants/work-budget.ts";
import { loadConfig } from "../../src/services/config.ts";

describe("the work budget of a paid call", () => {
  it("is 2 CPU-s and 200 MB per $0.001 unless the operator sets it", () => {
    expect(loadConfig({ env: {} }).workBudget).toEqual(DEFAULT_WORK_BUDGET);
    expect(DEFAULT_WORK_BUDGET).toEqual({ cpuMs: 2000, memoryMb: 200 });
    const set = loadConfig({ env: { X402M_WORK_CPU_MS: "500", X402M_WORK_MEMORY_MB: "64" } });
    expect(set.workBudget).toEqual({ cpuMs: 500, memoryMb: 64 });
  });

  it("refuses a budget that is not a whole number, naming its variable", () => {
    expect(() => loadConfig({ env: { X402M_WORK_CPU_MS: "fast" } })).toThrow(/X402M_WORK_CPU_MS/);
    expect(() => loadConfig({ env: { X402M_WORK_MEMORY_MB: "0" } })).toThrow(/X402M_WORK_MEMORY_MB/);
  });

  it("scales with the price", () => {
    expect(budgetAt("0.001")).toEqual({ cpuMs: 2000, memoryMb: 200 });
    expect(budgetAt("0.018")).toEqual({ cpuMs: 36_000, memoryMb: 3600 });
    expect(budgetAt("0.0025", { cpuMs: 1000, memoryMb: 100 })).toEqual({ cpuMs: 2500, memoryMb: 250 });
  });
});
