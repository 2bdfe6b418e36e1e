/**
 * The plan's money: new USDC for the exchange, the large customer and the merchants that pay; the
 * exchange pays out to buyers and its other customers every week.
 */
import { depositActions } from "./evasions.ts";
import { merchantWallet, type PlanContext, SLOTS_PER_WEEK } from "./plan-types.ts";
import type { SlotActions } from "./slot-actions.ts";

/** The slot's mints, the exchange's deposits and its weekly payouts. */
export function planMoney(ctx: PlanContext, slot: number, s: SlotActions): void {
  const { mix, roles } = ctx;
  if (slot === 0) {
    s.mint("exchange", 100_000);
    s.mint("large", 200);
    for (const id of new Set([roles.selfPayer, roles.funder, roles.ring, ...roles.pair])) {
      s.mint(merchantWallet(id), 100);
    }
  }
  // The exchange's depositors, before it pays anyone out (evasions.ts).
  s.add(depositActions(ctx, slot));
  if (slot % SLOTS_PER_WEEK === 0) {
    const first = slot === 0;
    for (let k = 0; k < mix.agents; k++) s.send("exchange", `agent:${k}`, first ? 50 : 10);
    s.send("exchange", "integration", first ? 20 : 5);
    s.send("exchange", "farm", first ? 5 : 1);
    for (let k = 0; k < mix.probers; k++) s.send("exchange", `prober:${k}`, first ? 5 : 1);
    if (first) s.send("exchange", "ring:payer", 1);
    for (let k = 0; k < mix.exchangeCustomers; k++) s.send("exchange", `customer:${k}`, 5 + s.r.int(196));
    if (!first) s.mint("large", 20);
  }
}
