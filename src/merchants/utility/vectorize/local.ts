/**
 * The local engine, from an image's bytes to a `Drawing`: decode (at most `MAX_TRACE_SIDE` on a side), tell a
 * photograph from a graphic (`photo.ts`), prepare a photograph (working size, median), trace in the worker
 * thread. The endpoint, the tests and bench/vectorize.ts all go through here, so what is measured is what is
 * sold.
 *
 * @example
 * const { drawing, photo } = await traceLocally(bytes, { colors: 16, detail: "medium" });
 * const svg = toSvg(drawing);
 */

import type { Detail, Drawing } from "./drawing.ts";
import { decodeImage, type ImageFormat } from "./image.ts";
import { looksLikePhoto, PHOTO, type PhotoSettings, preparePhoto } from "./photo.ts";
import type { TraceOptions } from "./trace.ts";
import { type TraceThread, traceThread } from "./trace-thread.ts";

/**
 * `auto` decides by the image; `graphic` is the pipeline every image went through before photographs had
 * their own (kept for comparison and for images the detection would get wrong); `photo` forces the photo
 * pipeline (the image is treated as opaque).
 */
export type LocalMode = "auto" | "photo" | "graphic";

export interface LocalTraceOptions {
  colors: number;
  detail: Detail;
  mode?: LocalMode;
  /** Photo settings other than `PHOTO[detail]` (bench/vectorize.ts measures them). */
  photoSettings?: PhotoSettings;
  /** A size bound other than the endpoint's (bench/vectorize.ts lifts it to run the old pipeline as it was). */
  bound?: TraceOptions["bound"];
  signal?: AbortSignal;
  /** The worker that traces; default the process's own. */
  thread?: TraceThread;
}

export interface LocalTrace {
  /** At the image's own size. */
  drawing: Drawing;
  /** Whether the photo pipeline traced it. */
  photo: boolean;
  format: ImageFormat;
}

export async function traceLocally(bytes: Uint8Array, options: LocalTraceOptions): Promise<LocalTrace> {
  const { signal } = options;
  const image = await decodeImage(bytes);
  signal?.throwIfAborted();
  const mode = options.mode ?? "auto";
  const photo = mode === "photo" || (mode === "auto" && looksLikePhoto(image));
  const settings = photo ? (options.photoSettings ?? PHOTO[options.detail]) : undefined;
  const pixels = settings ? await preparePhoto(image, settings) : image;
  signal?.throwIfAborted();
  // In a worker thread: seconds of tracing must not stall other requests, and a timeout stops it.
  const drawing = await (options.thread ?? traceThread()).trace(
    pixels,
    {
      colors: options.colors,
      detail: options.detail,
      ...(settings && { photo: settings }),
      ...(options.bound && { bound: options.bound }),
    },
    image.originalWidth / pixels.width,
    signal,
  );
  // The trace's rounding may differ by a pixel from the image's size: keep the image's.
  drawing.width = image.originalWidth;
  drawing.height = image.originalHeight;
  return { drawing, photo, format: image.format };
}
