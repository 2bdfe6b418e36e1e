/**
 * The work a simulated agent sends a metered chat endpoint: prompts and reply lengths that vary from call
 * to call, as a real buyer's do, so its metered charges vary too (a buyer repeating one tiny amount is
 * what the tiny-repeat screen looks for).
 */

const WORDS = [
  "summarise",
  "the",
  "quarterly",
  "report",
  "and",
  "list",
  "three",
  "risks",
  "for",
  "a",
  "small",
  "merchant",
  "selling",
  "paid",
  "api",
  "calls",
  "on",
  "base",
];

/**
 * The endpoint's example request with a prompt of 20 to 400 words and `max_tokens` 16 to 256 above the
 * example's (which meets the route's minimum), both set by `u` in [0, 1).
 */
export function sizedChat(example: Record<string, unknown>): (u: number) => Record<string, unknown> {
  const base = typeof example.max_tokens === "number" ? example.max_tokens : 0;
  return (u) => {
    const words = 20 + Math.floor(u * 381);
    const extra = 16 + Math.floor(((u * 7_919) % 1) * 241);
    const prompt = Array.from({ length: words }, (_, i) => WORDS[(i * 7 + words) % WORDS.length]).join(" ");
    return { ...example, messages: [{ role: "user", content: prompt }], max_tokens: base + extra };
  };
}

/**
 * The least work a metered chat route takes, for a farm: a prompt of 1 to 6 words and `max_tokens` 1 to 5
 * (by `u` in [0, 1)), a charge of a few millionths of a dollar. Undefined for a route whose minimum
 * `max_tokens` (the example's) is more than that: its least work is no longer tiny.
 */
export function tinyChat(
  example: Record<string, unknown>,
): ((u: number) => Record<string, unknown>) | undefined {
  const least = typeof example.max_tokens === "number" ? example.max_tokens : 1;
  if (least > 1) return undefined;
  return (u) => {
    const words = 1 + Math.floor(u * 6);
    const prompt = Array.from({ length: words }, (_, i) => WORDS[(i * 5 + words) % WORDS.length]).join(" ");
    return {
      ...example,
      messages: [{ role: "user", content: prompt }],
      max_tokens: 1 + Math.floor(((u * 7_919) % 1) * 5),
    };
  };
}
