/**
 * What a strategy of the red team is (`strategies.ts` holds the catalogue): a generator of the gamer's records at a
 * knob value, the fake payments in them, and a ledger of what playing it costs.
 */
import type { PayerGroup } from "../../test/helpers/window-flags.ts";

/**
 * A line of a strategy's ledger. Money gone is what leaves the gamer's control and stays gone: purchases at other
 * merchants' prices, money a third party keeps. Fees, dust, capital that comes back (the merchant's takings gone
 * round, the gamer's own money paying the gamer's own merchant), listings and wallets are not gone; withdrawals
 * are free and gas is a cent, listed as not gone.
 */
export interface LedgerLine {
  item: string;
  usd: number;
  gone: boolean;
}

/** A strategy played at one knob value. */
export interface Play {
  /** The gamer's records, played on top of the shared week (`world.ts`). */
  records: object[];
  /** The fake volume: each group's payments to its merchant in the window. */
  fake: PayerGroup[];
  ledger: LedgerLine[];
}

export type Knob = number | string;

export interface Strategy {
  /** The name `--only` takes. */
  name: string;
  /** What the gamer does, in a sentence. */
  title: string;
  /** `issue 84` for the kinds an adversarial week used, `invented` for the red team's own. */
  origin: "issue 84" | "invented";
  /**
   * The knob's name, its values in a full run, and the one or two a quick run (and CI) plays: none where the full
   * run alone plays it (what CI's time allows, test/bench/escapes.test.ts).
   */
  knob: string;
  values: readonly Knob[];
  quick: readonly Knob[];
  /** How a knob value is printed. */
  show?: (value: Knob) => string;
  /**
   * The chain whose week its fake payments are in: Base's unless it says (Arbitrum's week is built beside Base's
   * then, and its look-alikes read there).
   */
  chain?: "arbitrum";
  /** The look-alikes (`world.ts`) it imitates, whose loss the table prints. */
  lookAlikes: readonly string[];
  /**
   * Where the escape is still open (the bar missed: money gone under half of what it hides), and why: at
   * the values `at` picks, every value without it. CI asserts the bar everywhere else.
   */
  knownLimit?: { why: string; at?: (value: Knob) => boolean };
  play(value: Knob): Play;
}

/** Whether a strategy's known limit covers a knob value. */
export const limitAt = (s: Strategy, value: Knob) =>
  s.knownLimit !== undefined && (s.knownLimit.at === undefined || s.knownLimit.at(value));

/** A cent of gas for each of `n` transfers: paid, and not counted as gone (the ledger). */
export const gas = (n: number): LedgerLine => ({
  item: `gas, a cent for each of ${n} transfers: a fee`,
  usd: n / 100,
  gone: false,
});
