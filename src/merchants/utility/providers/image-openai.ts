/**
 * OpenAI-compatible images adapter: `POST {url}/images/generations` with `Authorization: Bearer` and
 * `{model, prompt, n: 1, size, response_format: "b64_json"}`; the image is `data[0].b64_json`. A URL-only
 * answer is refused (we asked for the bytes, and fetching a URL would be a second, unchecked call).
 */
import { z } from "zod";
import { UpstreamError } from "../../../common/errors.ts";
import { upstreamJson } from "../../../merchant-kit/index.ts";
import type { ImageProvider, ImageSettings } from "./image.ts";
import { MAX_PNG_BYTES } from "./png.ts";

const Body = z.object({
  data: z
    .array(z.looseObject({ b64_json: z.string().nullish(), revised_prompt: z.string().nullish() }))
    .min(1),
});

export function openaiImageProvider(settings: ImageSettings): ImageProvider {
  const provider = "image provider (openai)";
  return {
    async generate(request, signal) {
      const body = await upstreamJson({
        provider,
        url: `${settings.url.replace(/\/+$/, "")}/images/generations`,
        headers: { authorization: `Bearer ${settings.key}` },
        json: {
          model: settings.model,
          prompt: request.prompt,
          n: 1,
          size: request.size,
          response_format: "b64_json",
        },
        // base64 is 4/3 of the bytes, plus the JSON around it.
        maxBytes: Math.ceil((MAX_PNG_BYTES * 4) / 3) + 64 * 1024,
        timeoutMs: settings.timeoutMs ?? 120_000,
        signal,
      });
      const parsed = Body.safeParse(body);
      const first = parsed.success ? parsed.data.data[0] : undefined;
      if (!first?.b64_json)
        throw new UpstreamError(`the ${provider} answered without b64_json image data`, "upstream_invalid");
      return { bytes: Buffer.from(first.b64_json, "base64"), revisedPrompt: first.revised_prompt ?? null };
    },
  };
}
