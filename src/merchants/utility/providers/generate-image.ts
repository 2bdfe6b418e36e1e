/**
 * `POST /api/generate-image`: a PNG from a prompt through the configured image provider. The answer is
 * JSON with the PNG in base64, or the raw PNG bytes with `?raw=1` (the query is read here: the platform
 * validates a POST's JSON body only). The bytes are checked to be a PNG (`png.ts`) before they are sold.
 */
import { z } from "zod";
import { UpstreamError } from "../../../common/errors.ts";
import { defineEndpoint, notConfigured, providerErrors } from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import type { ImageProvider } from "./image.ts";
import { readPng } from "./png.ts";

/** Sizes OpenAI-compatible image models take (gpt-image-1: the 1536 ones; DALL-E 3: the 1792 ones). */
export const IMAGE_SIZES = ["1024x1024", "1536x1024", "1024x1536", "1792x1024", "1024x1792"] as const;
/** Aspect ratios and the size each asks for. */
export const ASPECT_SIZES = {
  "1:1": "1024x1024",
  "3:2": "1536x1024",
  "2:3": "1024x1536",
  "16:9": "1792x1024",
  "9:16": "1024x1792",
} as const;

const GenerateInput = z
  .object({
    prompt: z.string().trim().min(1).max(4000).describe("What to draw, at most 4,000 characters."),
    aspect_ratio: z
      .enum(Object.keys(ASPECT_SIZES) as [keyof typeof ASPECT_SIZES])
      .optional()
      .describe("1:1 (default), 3:2, 2:3, 16:9 or 9:16; or give `size` instead."),
    size: z
      .enum(IMAGE_SIZES)
      .optional()
      .describe("Exact size; the configured model may not support every one."),
  })
  .refine((b) => b.aspect_ratio === undefined || b.size === undefined, {
    message: "give either aspect_ratio or size, not both",
    path: ["size"],
  });

const GenerateOutput = z.object({
  image: z
    .string()
    .describe("The PNG, base64. Add `?raw=1` to the URL for the bytes themselves (image/png)."),
  mime_type: z.literal("image/png"),
  width: z.number(),
  height: z.number(),
  revised_prompt: z.string().nullable().describe("The prompt the model used, when it rewrote it."),
});

export const IMAGE_SETTINGS = "X402M_IMAGE_URL, X402M_IMAGE_KEY, X402M_IMAGE_MODEL";

export function generateImageEndpoint(image: ImageProvider | undefined) {
  return defineEndpoint({
    method: "POST",
    path: "/api/generate-image",
    price: PRICES["/api/generate-image"],
    effects: ["upstream"],
    description:
      "Generates a PNG from a prompt (optional aspect_ratio or size). Answers base64 inside JSON, or the raw PNG bytes with ?raw=1.",
    input: GenerateInput,
    output: GenerateOutput,
    example: {
      input: { prompt: "a lighthouse at dawn, watercolour", aspect_ratio: "1:1" },
      output: {
        image: "iVBORw0KGgoAAAANSUhEUgAA...",
        mime_type: "image/png",
        width: 1024,
        height: 1024,
        revised_prompt: null,
      },
    },
    timeoutMs: 150_000,
    // `?raw=1`: the PNG itself.
    outputMedia: ["application/json", "image/png"],
    errors: providerErrors("image provider", image !== undefined, IMAGE_SETTINGS),
    handler: async (input, ctx) => {
      if (!image) throw notConfigured("image provider", IMAGE_SETTINGS);
      const size = input.size ?? ASPECT_SIZES[input.aspect_ratio ?? "1:1"];
      const generated = await image.generate({ prompt: input.prompt, size }, ctx.signal);
      const png = readPng(generated.bytes);
      if (typeof png === "string")
        throw new UpstreamError(`the image provider's answer is ${png}`, "upstream_invalid");
      const raw = new URL(ctx.request.url).searchParams.get("raw");
      if (raw === "1" || raw === "true") {
        return new Response(new Uint8Array(generated.bytes), {
          headers: { "content-type": "image/png", "content-length": String(generated.bytes.length) },
        });
      }
      return {
        image: generated.bytes.toString("base64"),
        mime_type: "image/png" as const,
        width: png.width,
        height: png.height,
        revised_prompt: generated.revisedPrompt,
      };
    },
  });
}
