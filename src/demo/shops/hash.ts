import { createHash } from "node:crypto";
import { z } from "zod";
import { defineEndpoint } from "../../merchant-kit/index.ts";

const ALGORITHMS = ["sha256", "sha512", "sha1", "md5"] as const;

const algorithm = z
  .enum(ALGORITHMS)
  .default("sha256")
  .describe("sha256 (default), sha512, sha1 or md5 (the last two for checksums only, not security).");
const encoding = z
  .enum(["hex", "base64"])
  .default("hex")
  .describe("Digest encoding: hex (default) or base64.");

export function digest(text: string, alg: (typeof ALGORITHMS)[number], enc: "hex" | "base64"): string {
  return createHash(alg).update(text, "utf8").digest(enc);
}

const HashInput = z.object({
  text: z.string().max(100_000).describe("The text to hash, up to 100,000 characters, hashed as UTF-8."),
  algorithm,
  encoding,
});

const HashOutput = z.object({
  algorithm: z.enum(ALGORITHMS),
  encoding: z.enum(["hex", "base64"]),
  digest: z.string(),
  bytes: z.number().int().describe("Length of the UTF-8 input in bytes."),
});

export const hash = defineEndpoint({
  method: "POST",
  path: "/hash",
  price: "0.002",
  description: "Hashes a text (UTF-8) with SHA-256, SHA-512, SHA-1 or MD5, in hex or base64.",
  input: HashInput,
  output: HashOutput,
  example: {
    input: { text: "abc" },
    output: {
      algorithm: "sha256",
      encoding: "hex",
      digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      bytes: 3,
    },
  },
  handler: async (b) => ({
    algorithm: b.algorithm,
    encoding: b.encoding,
    digest: digest(b.text, b.algorithm, b.encoding),
    bytes: Buffer.byteLength(b.text, "utf8"),
  }),
});

const BulkInput = z.object({
  texts: z
    .array(z.string().max(1_000))
    .min(1)
    .max(1_000)
    .describe("1 to 1,000 texts of up to 1,000 characters each."),
  algorithm,
  encoding,
});

const BulkOutput = z.object({
  algorithm: z.enum(ALGORITHMS),
  encoding: z.enum(["hex", "base64"]),
  count: z.number().int(),
  digests: z.array(z.string()).describe("One digest per text, in the same order."),
  distinct: z.number().int().describe("How many different digests (duplicates in the input collapse)."),
});

export const hashBulk = defineEndpoint({
  method: "POST",
  path: "/hash/bulk",
  price: "0.10",
  description:
    "Hashes up to 1,000 texts in one call (SHA-256, SHA-512, SHA-1 or MD5), digests in input order.",
  input: BulkInput,
  output: BulkOutput,
  maxBodyBytes: 4 * 1024 * 1024,
  example: {
    input: { texts: ["abc", ""], algorithm: "md5" },
    output: {
      algorithm: "md5",
      encoding: "hex",
      count: 2,
      digests: ["900150983cd24fb0d6963f7d28e17f72", "d41d8cd98f00b204e9800998ecf8427e"],
      distinct: 2,
    },
  },
  handler: async (b) => {
    const digests = b.texts.map((t) => digest(t, b.algorithm, b.encoding));
    return {
      algorithm: b.algorithm,
      encoding: b.encoding,
      count: digests.length,
      digests,
      distinct: new Set(digests).size,
    };
  },
});
