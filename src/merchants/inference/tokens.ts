/**
 * Token counts with a real tokenizer (o200k_base, the byte-pair encoding of current OpenAI models, through
 * js-tiktoken: pure JS), so that metering and `max_tokens` are exercised for real wherever no engine reports
 * its own counts. (gpt-tokenizer was tried first: its decode keeps a partial character's bytes in one
 * decoder shared by every call, so one request's cut text could leak into another's.)
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import type { ChatMessage } from "./engine.ts";

let encoding: Tiktoken | undefined;
/**
 * Built on first use, or when the inference host starts (its `warm`): about 1.4 s and 140 MB of memory
 * here, which a host without the inference merchant never spends.
 */
const o200kBase = () => {
  encoding ??= new Tiktoken(o200k);
  return encoding;
};
const encode = (text: string) => o200kBase().encode(text);
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

export function countPromptTokens(messages: readonly ChatMessage[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += PER_MESSAGE + countTokens(message.role) + countTokens(message.content ?? "");
    if (message.name) total += PER_NAME + countTokens(message.name);
  }
  return total;
}

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
