/**
 * `POST /api/vectorize` of the utility API (docs/platform.md, "The utility API's endpoints"): a raster image (URL or base64, at most 10 MB; PNG,
 * JPEG, GIF, BMP, WebP) to SVG, PNG, PDF, EPS or DXF. A local engine traces in-process (imagetracerjs);
 * a hosted engine (Vectorizer.AI) is used when configured. See README.md.
 */
import type { AnyEndpoint, FetchPolicy } from "../../../merchant-kit/index.ts";
import { vectorizeEndpoint } from "./endpoint.ts";
import { type VectorizerAiSettings, type VectorizerProvider, vectorizerAiProvider } from "./hosted.ts";

export {
  type VectorizeEndpointOptions,
  type VectorizeInput,
  type VectorizeOutput,
  vectorizeEndpoint,
} from "./endpoint.ts";
export {
  type HostedRequest,
  type HostedResult,
  VECTORIZER_AI_URL,
  type VectorizerAiSettings,
  type VectorizerProvider,
  vectorizerAiProvider,
} from "./hosted.ts";
export { MAX_IMAGE_BYTES, MAX_INPUT_PIXELS, MAX_TRACE_SIDE, sniffImage } from "./image.ts";

export interface VectorizeOptions {
  /** How `image_url` is fetched. Default `{}` (public addresses only); tests allow 127.0.0.1. */
  fetchPolicy?: FetchPolicy;
  /** A hosted engine adapter; wins over `hostedSettings`. */
  hosted?: VectorizerProvider;
  /** Vectorizer.AI settings (from the environment); null or absent = local engine only. */
  hostedSettings?: VectorizerAiSettings | null;
}

export function vectorizeEndpoints(options: VectorizeOptions = {}): readonly AnyEndpoint[] {
  const hosted =
    options.hosted ?? (options.hostedSettings ? vectorizerAiProvider(options.hostedSettings) : undefined);
  return [vectorizeEndpoint({ fetchPolicy: options.fetchPolicy ?? {}, ...(hosted && { hosted }) })];
}

/** Local engine only, strict fetch policy. */
export const VECTORIZE_ENDPOINTS: readonly AnyEndpoint[] = vectorizeEndpoints();
