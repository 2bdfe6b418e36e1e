/**
 * A tiny GGUF model written by the test itself, since no model can be downloaded here: a llama-architecture
 * network (2 blocks, 32-wide, f32) with a SentencePiece-style vocabulary of about 300 tokens (control tokens,
 * the 256 byte-fallback tokens, a few pieces) and a ChatML chat template. About 150 KB.
 *
 * Its weights are chosen so that its reply is predictable, yet every layer really runs: every token embeds to
 * the same vector, and the attention and feed-forward blocks have random (seeded) weights but zero output
 * projections, so the last hidden state is the same at every position and the output matrix alone ranks the
 * tokens. It ranks " hello" first (so a plain reply is " hello hello …" and never ends by itself), then "}",
 * "{" and the end-of-sequence token, with the whitespace tokens last: under a JSON grammar its greedy reply
 * is `{}`.
 *
 * The format (GGUF v3): magic, version, tensor count, metadata key-values, tensor infos, then the tensors'
 * data, each aligned to `general.alignment` (32) bytes. Dimensions are listed innermost first.
 */
import { writeFileSync } from "node:fs";

const ALIGNMENT = 32;

/** GGUF metadata value types. */
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;

type Value =
  | { type: "u32" | "i32" | "f32"; value: number }
  | { type: "string"; value: string }
  | { type: "array"; of: "string"; value: string[] }
  | { type: "array"; of: "f32" | "i32"; value: number[] };

/** The tiny model's shape. */
export const TINY = {
  embedding: 32,
  heads: 4,
  kvHeads: 2,
  feedForward: 64,
  blocks: 2,
  contextLength: 512,
} as const;

/** Token types of llama.cpp's SentencePiece vocabularies. */
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const BYTE = 6;

/** The vocabulary: its pieces, their types, and the logit the model gives each (see the file's comment). */
function vocabulary(): { tokens: string[]; types: number[]; logits: number[] } {
  const tokens: string[] = [];
  const types: number[] = [];
  const logits: number[] = [];
  const add = (piece: string, type: number, logit = 0) => {
    tokens.push(piece);
    types.push(type);
    logits.push(logit);
  };
  add("<unk>", UNKNOWN, -20);
  add("<s>", CONTROL, -20);
  add("</s>", CONTROL, 15); // end of sequence: below " hello", above the whitespace the JSON grammar allows
  add("<|im_start|>", CONTROL, -20);
  add("<|im_end|>", CONTROL, -20);
  for (let b = 0; b < 256; b++) {
    const whitespace = b === 0x20 || b === 0x0a || b === 0x09;
    add(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, BYTE, whitespace ? -10 : -1);
  }
  add("▁", NORMAL, -10);
  add("▁hello", NORMAL, 30);
  add("}", NORMAL, 25);
  add("{", NORMAL, 20);
  for (const piece of ['"', ":", ",", "hello", "▁the", "er", "in", "on", "an"]) add(piece, NORMAL);
  for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.!?'") add(c, NORMAL);
  return { tokens, types, logits };
}

const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/** A seeded generator (mulberry32) of weights in [-0.5, 0.5): the file is the same at every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

interface Tensor {
  name: string;
  /** Innermost first, as GGUF lists them. */
  dims: number[];
  data: Float32Array;
}

/** Writes the tiny model to `path` and returns its byte length. */
export function writeTinyGguf(path: string): number {
  const bytes = tinyGguf();
  writeFileSync(path, bytes);
  return bytes.length;
}

export function tinyGguf(): Buffer {
  const { embedding: n, heads, kvHeads, feedForward: ff, blocks, contextLength } = TINY;
  const headDim = n / heads;
  const { tokens, types, logits } = vocabulary();
  const rand = random(402);
  const filled = (length: number, value: number) => new Float32Array(length).fill(value);
  const randomData = (length: number) => Float32Array.from({ length }, () => rand() * 0.2);

  // Every row of the output matrix is constant, so a hidden state of ones gives token t the logit logits[t].
  const output = new Float32Array(n * tokens.length);
  for (let t = 0; t < tokens.length; t++) output.fill((logits[t] ?? 0) / n, t * n, (t + 1) * n);

  const tensors: Tensor[] = [
    { name: "token_embd.weight", dims: [n, tokens.length], data: filled(n * tokens.length, 1) },
    { name: "output_norm.weight", dims: [n], data: filled(n, 1) },
    { name: "output.weight", dims: [n, tokens.length], data: output },
  ];
  for (let b = 0; b < blocks; b++) {
    const blk = `blk.${b}`;
    tensors.push(
      { name: `${blk}.attn_norm.weight`, dims: [n], data: filled(n, 1) },
      { name: `${blk}.attn_q.weight`, dims: [n, n], data: randomData(n * n) },
      { name: `${blk}.attn_k.weight`, dims: [n, kvHeads * headDim], data: randomData(n * kvHeads * headDim) },
      { name: `${blk}.attn_v.weight`, dims: [n, kvHeads * headDim], data: randomData(n * kvHeads * headDim) },
      { name: `${blk}.attn_output.weight`, dims: [n, n], data: filled(n * n, 0) },
      { name: `${blk}.ffn_norm.weight`, dims: [n], data: filled(n, 1) },
      { name: `${blk}.ffn_gate.weight`, dims: [n, ff], data: randomData(n * ff) },
      { name: `${blk}.ffn_up.weight`, dims: [n, ff], data: randomData(n * ff) },
      { name: `${blk}.ffn_down.weight`, dims: [ff, n], data: filled(ff * n, 0) },
    );
  }

  const metadata: [string, Value][] = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: "x402 tiny test model" }],
    ["general.alignment", { type: "u32", value: ALIGNMENT }],
    ["general.file_type", { type: "u32", value: 0 }], // all f32
    ["llama.context_length", { type: "u32", value: contextLength }],
    ["llama.embedding_length", { type: "u32", value: n }],
    ["llama.block_count", { type: "u32", value: blocks }],
    ["llama.feed_forward_length", { type: "u32", value: ff }],
    ["llama.attention.head_count", { type: "u32", value: heads }],
    ["llama.attention.head_count_kv", { type: "u32", value: kvHeads }],
    ["llama.rope.dimension_count", { type: "u32", value: headDim }],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: 1e-5 }],
    ["llama.vocab_size", { type: "u32", value: tokens.length }],
    ["tokenizer.ggml.model", { type: "string", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "array", of: "string", value: tokens }],
    ["tokenizer.ggml.scores", { type: "array", of: "f32", value: tokens.map((_, i) => -i) }],
    ["tokenizer.ggml.token_type", { type: "array", of: "i32", value: types }],
    ["tokenizer.ggml.unknown_token_id", { type: "u32", value: 0 }],
    ["tokenizer.ggml.bos_token_id", { type: "u32", value: 1 }],
    ["tokenizer.ggml.eos_token_id", { type: "u32", value: 2 }],
    ["tokenizer.chat_template", { type: "string", value: CHATML }],
  ];

  const out = new Writer();
  out.raw(Buffer.from("GGUF", "latin1"));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(metadata.length);
  for (const [key, value] of metadata) {
    out.string(key);
    out.value(value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const tensor of tensors) {
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const d of tensor.dims) out.u64(d);
    out.u32(0); // GGML_TYPE_F32
    out.u64(offset);
    offsets.push(offset);
    offset = align(offset + tensor.data.byteLength);
  }
  out.pad();
  const start = out.length;
  for (const [i, tensor] of tensors.entries()) {
    out.pad(start + (offsets[i] ?? 0) - out.length);
    out.raw(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
  }
  return out.buffer();
}

const align = (x: number) => Math.ceil(x / ALIGNMENT) * ALIGNMENT;

class Writer {
  private chunks: Buffer[] = [];
  length = 0;

  raw(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
  u32(x: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(x);
    this.raw(b);
  }
  i32(x: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(x);
    this.raw(b);
  }
  f32(x: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(x);
    this.raw(b);
  }
  u64(x: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(x));
    this.raw(b);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.raw(bytes);
  }
  value(v: Value): void {
    if (v.type === "array") {
      this.u32(T.array);
      this.u32(T[v.of]);
      this.u64(v.value.length);
      for (const item of v.value) this.scalar(v.of, item);
      return;
    }
    this.u32(T[v.type]);
    this.scalar(v.type, v.value);
  }
  /** Zero bytes: `count` of them, or up to the next alignment. */
  pad(count = align(this.length) - this.length): void {
    if (count > 0) this.raw(Buffer.alloc(count));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
  private scalar(type: "u32" | "i32" | "f32" | "string", item: number | string): void {
    if (type === "string") this.string(String(item));
    else this[type](Number(item));
  }
}
