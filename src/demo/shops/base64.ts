import { z } from "zod";
import { BadInputError } from "../../common/errors.ts";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const urlSafe = z
  .boolean()
  .default(false)
  .describe("Use the URL-safe alphabet (- and _ instead of + and /, no padding). Default false.");

const EncodeInput = z.object({
  text: z.string().max(100_000).describe("Text to encode (as UTF-8), up to 100,000 characters."),
  url_safe: urlSafe,
});

const EncodeOutput = z.object({
  base64: z.string(),
  bytes: z.number().int().describe("Bytes encoded."),
});

export const encode = defineEndpoint({
  method: "POST",
  path: "/encode",
  price: "0.001",
  description: "Encodes a UTF-8 text as base64 (standard or URL-safe).",
  input: EncodeInput,
  output: EncodeOutput,
  example: { input: { text: "hello x402" }, output: { base64: "aGVsbG8geDQwMg==", bytes: 10 } },
  handler: async (b) => {
    const buf = Buffer.from(b.text, "utf8");
    return { base64: buf.toString(b.url_safe ? "base64url" : "base64"), bytes: buf.length };
  },
});

const DecodeInput = z.object({
  base64: z
    .string()
    .max(140_000)
    .describe("Base64 to decode, standard or URL-safe; padding optional; whitespace ignored."),
});

const DecodeOutput = z.object({
  text: z.string().nullable().describe("The decoded bytes as UTF-8 text, or null when they are not UTF-8."),
  hex: z.string().describe("The decoded bytes in hex."),
  bytes: z.number().int(),
});

const UTF8 = new TextDecoder("utf-8", { fatal: true });

export function decodeBase64(input: string): Buffer {
  const s = input.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s) || s.replace(/=+$/, "").length % 4 === 1) {
    throw new BadInputError("not valid base64", "bad_base64");
  }
  if (/[+/]/.test(s) && /[-_]/.test(s)) throw new BadInputError("mixes the standard and URL-safe alphabets");
  return Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

export const decode = defineEndpoint({
  method: "POST",
  path: "/decode",
  price: "0.001",
  description: "Decodes base64 (standard or URL-safe) to text, and to hex when the bytes are not UTF-8.",
  input: DecodeInput,
  output: DecodeOutput,
  example: {
    input: { base64: "aGVsbG8geDQwMg==" },
    output: { text: "hello x402", hex: "68656c6c6f2078343032", bytes: 10 },
  },
  errors: {
    400: "Text that is not base64, or mixes its standard and URL-safe alphabets (bad_base64, bad_request), found once the payment is verified.",
  },
  handler: async (b) => {
    const buf = decodeBase64(b.base64);
    let text: string | null;
    try {
      text = UTF8.decode(buf);
    } catch {
      text = null;
    }
    return { text, hex: buf.toString("hex"), bytes: buf.length };
  },
});
