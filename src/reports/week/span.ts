/**
 * A window's length in words. A full window is "7 days"; a young chain's window is minutes or hours
 * long, and "0.000648 days" would tell a reader nothing.
 */

const UNITS = [
  { seconds: 86_400, word: "day", short: "d" },
  { seconds: 3_600, word: "hour", short: "h" },
  { seconds: 60, word: "minute", short: "m" },
  { seconds: 1, word: "second", short: "s" },
] as const;

/**
 * The largest unit the span fills at least once, and the span in it, rounded to one decimal; a span that
 * rounds up to the next unit is named in it: 86,399 s is "1 day", not "24 hours", as 86,401 s is (a demo's
 * Arbitrum day, a few seconds either side of one as its blocks came, was named two ways).
 */
function measure(days: number): { amount: number; unit: (typeof UNITS)[number] } {
  const seconds = Math.round(days * 86_400);
  const inUnit = (u: (typeof UNITS)[number]) => Math.round((seconds / u.seconds) * 10) / 10;
  const found = UNITS.find((u) => seconds >= u.seconds) ?? UNITS[3];
  const larger = UNITS[UNITS.indexOf(found) - 1];
  const unit = larger && inUnit(found) * found.seconds >= larger.seconds ? larger : found;
  return { amount: inUnit(unit), unit };
}

/** @example spanText(7) // "7 days"; spanText(0.000648) // "56 seconds"; spanText(0.0625) // "1.5 hours" */
export function spanText(days: number): string {
  const { amount, unit } = measure(days);
  return `${amount} ${unit.word}${amount === 1 ? "" : "s"}`;
}

/** For the badge: spanShort(7) // "7d"; spanShort(0.000648) // "56s" */
export function spanShort(days: number): string {
  const { amount, unit } = measure(days);
  return `${amount}${unit.short}`;
}
