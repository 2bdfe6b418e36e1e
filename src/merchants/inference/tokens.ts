/**
 * Token counts with a real tokenizer (o200k_base, the byte-pair encoding of current OpenAI models: its
 * ranks and pre-tokenizing pattern from js-tiktoken, pure JS), so that metering and `max_tokens` are
 * exercised for real wherever no engine reports its own counts. (gpt-tokenizer was tried first: its decode
 * keeps a partial character's bytes in one decoder shared by every call, so one request's cut text could
 * leak into another's.)
 *
 * The merge is done here, not by js-tiktoken's `encode`: its merge slices and joins every pair of a piece
 * on every step, so a piece's cost grows with the cube of its length, and one prompt of 200,000 CJK
 * characters (one piece: no spaces) ran for minutes on the request loop. Here each pair's rank is looked up
 * once and kept, and a piece longer than `MAX_PIECE_CHARACTERS` is merged in parts of that length: a prompt
 * of 200,000 characters of any kind is counted in well under a second. Text with no such run (words,
 * code, numbers) is encoded exactly as o200k_base does; a longer run can come out a few tokens longer.
 * Special tokens' text (`<|endoftext|>`) is plain text to a chat prompt, as OpenAI's API counts it.
 */
import { createHash } from "node:crypto";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import type { ChatMessage } from "./engine.ts";

/** Long enough for any word, number or URL part to merge whole; short enough that a part merges in microseconds. */
export const MAX_PIECE_CHARACTERS = 64;

interface Encoding {
  /** A byte sequence, as the string of those char codes (latin1), to its token. */
  ranks: Map<string, number>;
  pattern: RegExp;
  decode(tokens: number[]): string;
}

let encoding: Encoding | undefined;
/**
 * Built on first use, or when the inference host starts (its `warm`): about 1.4 s and 140 MB of memory
 * here, which a host without the inference merchant never spends.
 */
const o200kBase = (): Encoding => {
  if (!encoding) {
    // The ranks and the pattern are js-tiktoken's own fields; its types mark them internal.
    const tiktoken = new Tiktoken(o200k) as unknown as Tiktoken & {
      rankMap: Map<string, number>;
      patStr: string;
    };
    // Keyed by the bytes as char codes: a key is built for every pair looked up, and "104,105" costs
    // several times what "hi" does.
    const ranks = new Map<string, number>();
    for (const [bytes, rank] of tiktoken.rankMap)
      ranks.set(String.fromCharCode(...bytes.split(",").map(Number)), rank);
    encoding = {
      ranks,
      pattern: new RegExp(tiktoken.patStr, "gu"),
      decode: (tokens) => tiktoken.decode(tokens),
    };
  }
  return encoding;
};

const utf8 = new TextEncoder();

function encode(text: string): number[] {
  const { ranks, pattern } = o200kBase();
  const tokens: number[] = [];
  for (const match of text.matchAll(pattern)) {
    for (const part of parts(match[0])) {
      const bytes = utf8.encode(part);
      const whole = ranks.get(latin1(bytes, 0, bytes.length));
      if (whole !== undefined) tokens.push(whole);
      else merge(bytes, ranks, tokens);
    }
  }
  return tokens;
}

/** `piece` in runs of at most `MAX_PIECE_CHARACTERS` characters (code points: never half a surrogate pair). */
function parts(piece: string): string[] {
  if (piece.length <= MAX_PIECE_CHARACTERS) return [piece];
  const characters = Array.from(piece);
  if (characters.length <= MAX_PIECE_CHARACTERS) return [piece];
  const out: string[] = [];
  for (let i = 0; i < characters.length; i += MAX_PIECE_CHARACTERS)
    out.push(characters.slice(i, i + MAX_PIECE_CHARACTERS).join(""));
  return out;
}

/**
 * Byte-pair merging as tiktoken does it: repeatedly join the adjacent pair of lowest rank (the first of
 * equals), until no pair is a token. `bounds` are the parts' start offsets and the end; `pairRank[i]` is the
 * rank of parts i and i+1 joined, kept and recomputed only beside a merge.
 */
function merge(bytes: Uint8Array, ranks: Map<string, number>, out: number[]): void {
  const bounds = Array.from({ length: bytes.length + 1 }, (_, i) => i);
  const rankOf = (i: number): number => {
    if (i + 2 >= bounds.length) return Number.POSITIVE_INFINITY;
    return ranks.get(latin1(bytes, bounds[i] as number, bounds[i + 2] as number)) ?? Infinity;
  };
  const pairRank = bounds.map((_, i) => rankOf(i));
  for (;;) {
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i < bounds.length - 2; i++) {
      const rank = pairRank[i] as number;
      if (rank < bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    if (best === -1) break;
    bounds.splice(best + 1, 1);
    pairRank.splice(best + 1, 1);
    pairRank[best] = rankOf(best);
    if (best > 0) pairRank[best - 1] = rankOf(best - 1);
  }
  for (let i = 0; i + 1 < bounds.length; i++) {
    const token = ranks.get(latin1(bytes, bounds[i] as number, bounds[i + 1] as number));
    // Every single byte is a token of o200k_base, so every part left is one.
    if (token !== undefined) out.push(token);
  }
}

/** `bytes[start, end)` as a string of those char codes. */
const latin1 = (bytes: Uint8Array, start: number, end: number): string =>
  String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]);

const decode = (tokens: number[]) => o200kBase().decode(tokens);

/**
 * OpenAI's published rule for chat prompts: each message costs its role's and content's tokens plus 3
 * (the markers around it), a name 1 more, and every reply is primed with 3.
 */
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;

export function countTokens(text: string): number {
  return encode(text).length;
}

/**
 * Counts kept per messages list: a metered call's handler counts its prompt to bound the reply, and the
 * offline engine counts the same list again for its usage (up to half a second each for 200,000 characters).
 */
const counted = new WeakMap<readonly ChatMessage[], number>();

export function countPromptTokens(messages: readonly ChatMessage[]): number {
  const known = counted.get(messages);
  if (known !== undefined) return known;
  const total = countMessages(messages);
  counted.set(messages, total);
  return total;
}

function countMessages(messages: readonly ChatMessage[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + countTokens(message.role) + countContent(message.content ?? "");
    if (message.name) total += PER_NAME + countTokens(message.name);
  }
  return total;
}

/** A message's text from this length on is counted once: its count is kept (`countContent`). */
const LONG_CONTENT = 4_096;
const LONG_COUNTS_KEPT = 64;
/** Counts of long texts lately counted, by their SHA-256 (the text itself is not kept), oldest first. */
const longCounts = new Map<string, number>();

/**
 * A message's tokens; a long text's count is kept. A conversation sends its earlier messages again with each
 * turn, and a buyer the same prompt again after a refusal or a lost answer: counting 200,000 characters
 * takes up to half a second of the request loop, hashing them a fraction of a millisecond.
 */
function countContent(text: string): number {
  if (text.length < LONG_CONTENT) return countTokens(text);
  const key = createHash("sha256").update(text).digest("base64");
  const known = longCounts.get(key);
  if (known !== undefined) {
    longCounts.delete(key);
    longCounts.set(key, known);
    return known;
  }
  const count = countTokens(text);
  longCounts.set(key, count);
  if (longCounts.size > LONG_COUNTS_KEPT) longCounts.delete(longCounts.keys().next().value as string);
  return count;
}

/**
 * What `countPromptTokens` can be at most, without tokenizing: every token is at least one byte (a role one
 * token). Cheap enough to run before payment on every request.
 */
export function promptTokensAtMost(messages: readonly ChatMessage[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + 1 + utf8ByteLength(message.content ?? "");
    if (message.name) total += PER_NAME + utf8ByteLength(message.name);
  }
  return total;
}

const utf8ByteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** `tokens` as text, cut where a streaming reply sends its chunks: one token each, but never mid-character. */
export function tokenPieces(tokens: readonly number[]): string[] {
  const pieces: string[] = [];
  let pending: number[] = [];
  for (const token of tokens) {
    pending.push(token);
    // A token can hold part of a character's UTF-8 bytes: wait for the rest before sending it.
    const text = decode(pending);
    if (!text.endsWith("\uFFFD")) {
      pieces.push(text);
      pending = [];
    }
  }
  if (pending.length > 0) pieces.push(decode(pending));
  return pieces;
}

export { encode as tokenize };
