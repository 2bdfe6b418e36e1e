import { describe, expect, it } from "vitest";
import { viaMcp } from "../../src/demo/mcp-faces.ts";
import { DEFAULT_MIX } from "../../src/demo/mix.ts";
import { populationWallets } from "../../src/demo/plan.ts";
import type { Action } from "../../src/demo/plan-types.ts";

const pay = (from: string, behaviour: string): Extract<Action, { type: "pay" }> =>
  ({ type: "pay", at: 0, from, merchant: "utility", endpoint: 0, behaviour }) as Extract<
    Action,
    { type: "pay" }
  >;

describe("which face a simulated buyer pays through", () => {
  it("sends about half the agents through MCP, each wallet always the same way, and nobody else", () => {
    const agents = populationWallets(DEFAULT_MIX).filter((id) => id.startsWith("agent:"));
    const overMcp = agents.filter((id) => viaMcp(pay(id, "agent")));
    expect(overMcp.length).toBeGreaterThan(agents.length / 4);
    expect(overMcp.length).toBeLessThan((agents.length * 3) / 4);
    for (const id of agents) expect(viaMcp(pay(id, "agent"))).toBe(viaMcp(pay(id, "agent")));
    for (const behaviour of ["large_customer", "integration", "tiny_repeat", "ring", "split_farm"]) {
      for (const id of agents) expect(viaMcp(pay(id, behaviour))).toBe(false);
    }
  });
});
