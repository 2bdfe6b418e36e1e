/** The one interface every image provider adapter implements, and the settings that configure one. */

export interface ImageRequest {
  prompt: string;
  /** "WIDTHxHEIGHT", one of `IMAGE_SIZES`. */
  size: string;
}

export interface GeneratedImage {
  /** The image bytes, not yet checked (the endpoint checks them: `png.ts`). */
  bytes: Buffer;
  /** The prompt the model actually used, when it rewrote ours (DALL-E 3 does). */
  revisedPrompt: string | null;
}

export interface ImageProvider {
  generate(request: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage>;
}

export interface ImageSettings {
  /** OpenAI-compatible base URL as the SDK takes it, e.g. `https://api.openai.com/v1`. */
  url: string;
  key: string;
  model: string;
  timeoutMs?: number;
}
