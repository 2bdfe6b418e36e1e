/**
 * One slot's actions while the plan draws them: the slot's generator and times, and the list every part of
 * the plan adds to. Each draw comes from the one generator in the order the parts run, so the order of the
 * parts and of their draws is the plan.
 */
import type { Action, Behaviour, PlanContext, WalletId } from "./plan-types.ts";
import { type Random, random } from "./prng.ts";

export class SlotActions {
  /** Chain time of the slot's start. */
  readonly start: number;
  /** Chain seconds the slot lasts. */
  readonly length: number;
  readonly r: Random;
  /** The actions so far, in the order drawn (the plan sorts them by time at the end). */
  readonly list: Action[] = [];

  constructor(ctx: PlanContext, slot: number) {
    this.length = ctx.slotSeconds;
    this.start = ctx.epoch + slot * this.length;
    this.r = random(ctx.mix.seed, slot, 1);
  }

  /** A funding time: in the slot's first minute. */
  fundAt(): number {
    return this.start + this.r.int(60);
  }

  /** A payment time: after the slot's first minute. */
  payAt(): number {
    return this.start + 60 + this.r.int(this.length - 60);
  }

  pay(
    from: WalletId,
    merchant: string,
    endpoint: number,
    behaviour: Behaviour,
    input?: Record<string, unknown>,
    session?: number,
  ) {
    this.list.push({
      type: "pay",
      at: this.payAt(),
      from,
      merchant,
      endpoint,
      behaviour,
      ...(input ? { input } : {}),
      ...(session === undefined ? {} : { session }),
    });
  }

  send(from: WalletId, to: WalletId, usd: number, behaviour: Behaviour = "funding") {
    this.list.push({ type: "transfer", at: this.fundAt(), from, to, usd, behaviour });
  }

  mint(to: WalletId, usd: number) {
    this.list.push({ type: "mint", at: this.start, to, usd });
  }

  add(actions: readonly Action[]) {
    this.list.push(...actions);
  }
}
