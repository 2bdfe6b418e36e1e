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

/** The largest unit the span fills at least once, and the span in it, rounded to one decimal. */
function measure(days: number): { amount: number; unit: (typeof UNITS)[number] } {
  const seconds = Math.round(days * 86_400);
  const unit = UNITS.find((u) => seconds >= u.seconds) ?? UNITS[3];
  return { amount: Math.round((seconds / unit.seconds) * 10) / 10, unit };
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
