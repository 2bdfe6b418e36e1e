/**
 * What a metered (upto) audio call charges, from the rates docs/audio.md lists: speech 0.000006 USD a
 * character, transcription 0.003 USD a minute. The listed prices are those rates times the largest call
 * (3,000 characters, 5 minutes), so a call paid with `exact` pays the most a metered one can.
 *
 * Characters are Unicode code points, the same count the 3,000-character limit uses (an emoji is one, not
 * the two UTF-16 units JavaScript's `length` sees). A transcription is charged its duration as read from
 * the file's own data, rounded up to the next millisecond and then to the next atomic unit of USDC, so a
 * call is never charged for less than it took; silence is audio too, and is charged like speech (the
 * engine listened to it), as OpenAI bills by duration.
 */
import type { PriceUsd } from "../../../merchant-kit/index.ts";
import { priceToAtomic } from "../../../merchant-kit/index.ts";

/** Spec 4.5: dollars per character of speech. */
export const SPEECH_RATE_PER_CHARACTER: PriceUsd = "0.000006";
/** Spec 4.5: dollars per minute of transcribed audio. */
export const TRANSCRIPTION_RATE_PER_MINUTE: PriceUsd = "0.003";
/** Spec 4.5 and 8: the longest text `/v1/audio/speech` speaks. */
export const MAX_SPEECH_CHARACTERS = 3_000;
/** Spec 4.5 and 8: the longest audio `/v1/audio/transcriptions` takes, in seconds. */
export const MAX_TRANSCRIPTION_SECONDS = 300;

/** Unicode code points of a text: what "characters" means in the limit and the rate. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Atomic units to settle for speaking `text`, at most `maxAtomic`. */
export function speechAmount(text: string, decimals: number, maxAtomic: bigint): bigint {
  const atomic = BigInt(characterCount(text)) * priceToAtomic(SPEECH_RATE_PER_CHARACTER, decimals);
  return atomic < maxAtomic ? atomic : maxAtomic;
}

/** Atomic units to settle for transcribing `seconds` of audio, at most `maxAtomic`. */
export function transcriptionAmount(seconds: number, decimals: number, maxAtomic: bigint): bigint {
  const milliseconds = BigInt(Math.ceil(seconds * 1000));
  const perMinute = priceToAtomic(TRANSCRIPTION_RATE_PER_MINUTE, decimals);
  const atomic = (milliseconds * perMinute + 59_999n) / 60_000n;
  return atomic < maxAtomic ? atomic : maxAtomic;
}
