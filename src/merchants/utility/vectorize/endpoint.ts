import { z } from "zod";
import { AppError } from "../../../common/errors.ts";
import {
  createSafeFetch,
  defineEndpoint,
  FETCH_ERRORS,
  type FetchPolicy,
  isFetchError,
} from "../../../merchant-kit/index.ts";
import { PRICES } from "../prices.ts";
import { looksLike, type VectorizerProvider } from "./hosted.ts";
import {
  checkImage,
  decodeBase64Image,
  decodeImage,
  IMAGE_MIME,
  MAX_IMAGE_BYTES,
  MAX_INPUT_PIXELS,
  MAX_TRACE_SIDE,
  tooLarge,
} from "./image.ts";
import { traceLocally } from "./local.ts";
import { PHOTO } from "./photo.ts";
import { toDxf, toEps, toPdf, toPng, toSvg, VECTOR_MIME, type VectorFormat } from "./render.ts";
import { drawingColors, MAX_PATH_BYTES, MAX_PATHS } from "./trace.ts";

/** Longest accepted `image_base64` (10 MB in base64, plus a data-URI prefix). */
const MAX_BASE64_CHARS = Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 256;
const FETCH_TIMEOUT_MS = 15_000;

const Input = z
  .object({
    image_url: z
      .string()
      .trim()
      .max(2048)
      .url()
      .refine((u) => /^https?:\/\//i.test(u), { message: "only http and https URLs" })
      .optional()
      .describe(
        "Public http(s) URL of the image (PNG, JPEG, GIF, BMP or WebP, at most 10 MB). Give this or `image_base64`.",
      ),
    image_base64: z
      .string()
      .max(MAX_BASE64_CHARS, "image_base64 is larger than a 10 MB image")
      .optional()
      .describe(
        "The image itself in base64 (a `data:image/...;base64,` URI is accepted too), at most 10 MB decoded.",
      ),
    format: z
      .enum(["svg", "png", "pdf", "eps", "dxf"])
      .default("svg")
      .describe(
        "Output: `svg` (default; the text in `svg`), or `png`, `pdf`, `eps`, `dxf` (the file in `data_base64`).",
      ),
    colors: z
      .number()
      .int()
      .min(2)
      .max(64)
      .default(16)
      .describe("Largest number of colours of the palette the image is reduced to before tracing (2-64)."),
    detail: z
      .enum(["low", "medium", "high"])
      .default("medium")
      .describe(
        "Tracing tolerance: `low` (fewer, smoother paths), `medium`, `high` (closer to the pixels); for a photograph also the size it is traced at.",
      ),
    engine: z
      .enum(["auto", "local", "hosted"])
      .default("auto")
      .describe(
        "`local`: traced on this server. `hosted`: the hosted vectorizer the server is configured with (503 when there is none). `auto` (default): hosted when configured, else local.",
      ),
    raw: z
      .boolean()
      .default(false)
      .describe(
        "True: answer the file itself with its content type, instead of JSON (same as `?raw=1` on the URL).",
      ),
  })
  .refine((b) => (b.image_url === undefined) !== (b.image_base64 === undefined), {
    message: "give exactly one of image_url and image_base64",
    path: ["image_url"],
  });

const Output = z.object({
  format: z.enum(["svg", "png", "pdf", "eps", "dxf"]),
  mime_type: z.string().describe("The output's media type."),
  engine: z.string().describe("`local`, or the hosted vectorizer's name."),
  width: z.number().int().describe("Width of the vector in units (the image's pixels)."),
  height: z.number().int(),
  paths: z
    .number()
    .int()
    .nullable()
    .describe("Filled shapes drawn (null when a hosted engine made a non-SVG file)."),
  colors: z
    .array(z.string())
    .nullable()
    .describe("The distinct fill colours (#rrggbb) drawn (null when a hosted engine made a non-SVG file)."),
  input_format: z.enum(["png", "jpeg", "gif", "bmp", "webp"]).describe("The image's format, by its content."),
  svg: z.string().optional().describe("The SVG document (format `svg`)."),
  data_base64: z.string().optional().describe("The file in base64 (formats png, pdf, eps, dxf)."),
});

export type VectorizeInput = z.input<typeof Input>;
export type VectorizeOutput = z.output<typeof Output>;

export interface VectorizeEndpointOptions {
  /** How `image_url` is fetched; default `{}` (public addresses only). */
  fetchPolicy?: FetchPolicy;
  /** The hosted engine, when configured. */
  hosted?: VectorizerProvider;
}

const EXAMPLE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="64" height="32" viewBox="0 0 64 32">\n<path fill="#e01e1e" fill-rule="evenodd" d="M0 0L32 0L32 32L0 32Z"/>\n<path fill="#1e3ce0" fill-rule="evenodd" d="M32 0L64 0L64 32L32 32Z"/>\n</svg>\n';

/** `POST /api/vectorize`. */
export function vectorizeEndpoint(options: VectorizeEndpointOptions = {}) {
  const fetchImage = createSafeFetch({
    ...options.fetchPolicy,
    maxBytes: MAX_IMAGE_BYTES,
    timeoutMs: options.fetchPolicy?.timeoutMs ?? FETCH_TIMEOUT_MS,
  });
  const hosted = options.hosted;

  async function load(input: z.output<typeof Input>, signal: AbortSignal): Promise<Uint8Array> {
    if (input.image_base64 !== undefined) return decodeBase64Image(input.image_base64);
    const url = input.image_url as string;
    try {
      const { response } = await fetchImage(url, { signal, headers: { accept: "image/*" } });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new AppError(422, "image_status", `fetching the image answered HTTP ${response.status}`);
      }
      return new Uint8Array(await response.arrayBuffer());
    } catch (error) {
      if (isFetchError(error, "too_large")) throw tooLarge(MAX_IMAGE_BYTES + 1);
      throw error;
    }
  }

  return defineEndpoint({
    method: "POST",
    path: "/api/vectorize",
    price: PRICES["/api/vectorize"],
    effects: ["upstream"],
    description: `Converts a raster image (PNG, JPEG, GIF, BMP or WebP; by public \`image_url\` or \`image_base64\`, at most 10 MB) into a vector: SVG by default, or PNG, PDF, EPS or DXF. The image is reduced to at most \`colors\` colours and each colour region is traced into filled paths (imagetracerjs): a drawing as cut-out shapes with holes; a photograph (opaque, many colours) is first downscaled (${PHOTO.low.side}, ${PHOTO.medium.side} or ${PHOTO.high.side} px by \`detail\`) and median-filtered, its palette chosen by k-means, and its shapes stacked largest first so that no gap shows. At most ${MAX_PATHS.toLocaleString("en-US")} paths and ${MAX_PATH_BYTES / 1_000_000} MB of path data: beyond, the smallest shapes are left out. When the server has a hosted vectorizer, the image can be sent to it instead (\`engine\`). Images above ${MAX_TRACE_SIDE} px on a side are downscaled for local tracing and the vector keeps their size; above ${MAX_INPUT_PIXELS / 1_000_000} megapixels they are refused. Returns the SVG text or the file in base64, its size, path count and colours. The format is told by the file's bytes; anything else is refused and not charged.`,
    input: Input,
    output: Output,
    example: {
      input: { image_url: "https://example.com/logo.png", format: "svg", colors: 8 },
      output: {
        format: "svg",
        mime_type: "image/svg+xml",
        engine: "local",
        width: 64,
        height: 32,
        paths: 2,
        colors: ["#e01e1e", "#1e3ce0"],
        input_format: "png",
        svg: EXAMPLE_SVG,
      },
    },
    timeoutMs: 60_000,
    maxBodyBytes: MAX_BASE64_CHARS + 64 * 1024,
    // `raw`: the vector file itself.
    outputMedia: ["application/json", ...Object.values(VECTOR_MIME)],
    errors: {
      400: `${FETCH_ERRORS[400]} Or the data is no image this endpoint reads (bad_base64, bad_image, unsupported_image: told by its bytes), or has more than ${MAX_INPUT_PIXELS / 1_000_000} megapixels (image_too_large).`,
      413: `The image is more than ${MAX_IMAGE_BYTES} bytes (image_too_large).`,
      422: `${FETCH_ERRORS[422]} Or fetching the image answered an error status (image_status).`,
      ...(hosted
        ? {
            502: "The hosted vectorizer failed or answered no file of the format asked (upstream_failed, upstream_invalid).",
            504: "The hosted vectorizer gave no answer within its time limit (upstream_timeout).",
          }
        : {
            503: "`engine: hosted` and this server has no hosted vectorizer configured (provider_not_configured).",
          }),
    },
    handler: async function vectorize(input, ctx) {
      const rawQuery = new URL(ctx.request.url).searchParams.get("raw");
      const raw = input.raw || rawQuery === "1" || rawQuery === "true";
      const bytes = await load(input, ctx.signal);
      const inputFormat = checkImage(bytes);
      const format: VectorFormat = input.format;
      const mime = VECTOR_MIME[format];
      if (input.engine === "hosted" && !hosted)
        throw new AppError(
          503,
          "provider_not_configured",
          "this server has no hosted vectorizer configured; use engine `local` or `auto` (nothing was charged)",
        );
      const useHosted = input.engine !== "local" && hosted !== undefined;
      let result: VectorizeOutput;
      if (useHosted) {
        // Decoding also proves the image is readable and gives its size (only 1 px is kept).
        const image = await decodeImage(bytes, 1);
        const answer = await hosted.vectorize(
          { image: bytes, mime: IMAGE_MIME[inputFormat], format, colors: input.colors },
          ctx.signal,
        );
        if (!looksLike(format, answer.bytes))
          throw new AppError(
            502,
            "upstream_invalid",
            `the hosted vectorizer (${hosted.name}) did not answer a ${format} file`,
          );
        const svg = format === "svg" ? answer.bytes.toString("utf8") : undefined;
        result = {
          format,
          mime_type: mime,
          engine: hosted.name,
          width: image.originalWidth,
          height: image.originalHeight,
          paths: svg === undefined ? null : (svg.match(/<path[\s/>]/g) ?? []).length,
          colors:
            svg === undefined
              ? null
              : [
                  ...new Set(
                    [...svg.matchAll(/fill="(#[0-9a-fA-F]{6})"/g)].map((m) => (m[1] as string).toLowerCase()),
                  ),
                ],
          input_format: inputFormat,
          ...(svg === undefined ? { data_base64: answer.bytes.toString("base64") } : { svg }),
        };
        if (raw) return new Response(new Uint8Array(answer.bytes), { headers: { "content-type": mime } });
        return result;
      }
      const { drawing, format: imageFormat } = await traceLocally(bytes, {
        colors: input.colors,
        detail: input.detail,
        signal: ctx.signal,
      });
      ctx.signal.throwIfAborted();
      const svg = toSvg(drawing);
      let file: Buffer | undefined;
      if (format === "png") file = toPng(svg);
      else if (format === "pdf") file = await toPdf(drawing);
      else if (format === "eps") file = Buffer.from(toEps(drawing), "latin1");
      else if (format === "dxf") file = Buffer.from(toDxf(drawing), "utf8");
      if (raw)
        return new Response(file ? new Uint8Array(file) : svg, {
          headers: { "content-type": format === "svg" ? `${mime}; charset=utf-8` : mime },
        });
      return {
        format,
        mime_type: mime,
        engine: "local",
        width: drawing.width,
        height: drawing.height,
        paths: drawing.shapes.length,
        colors: drawingColors(drawing),
        input_format: imageFormat,
        ...(file ? { data_base64: file.toString("base64") } : { svg }),
      };
    },
  });
}
