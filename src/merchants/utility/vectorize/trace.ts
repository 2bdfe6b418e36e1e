/**
 * The local engine's tracer: RGBA pixels → a `Drawing` (filled shapes of one colour each, straight and
 * quadratic segments), using imagetracerjs (edge tracing per colour layer). Every output format is written
 * from the same `Drawing` (`render.ts`).
 *
 * Two layouts. A graphic (logo, line art) is quantised by imagetracerjs and drawn as cut-outs: each shape is
 * its outline plus holes, so shapes do not overlap and a hole shows what is behind the file. A photograph
 * (`photo.ts`) is quantised by k-means (`quantize.ts`) and drawn stacked: outlines only, largest first, over
 * a background of the largest shape's colour, so a speck the tracer drops or a sliver between two smoothed
 * borders shows the colour around it instead of a hole.
 */
import ImageTracer, { type TraceData, type TracePath, type TraceSegment } from "imagetracerjs";
import type { RgbaImage } from "./bmp.ts";
import type { Contour, Detail, Drawing, Segment, Shape } from "./drawing.ts";
import type { PhotoSettings } from "./photo.ts";
import { despeckle, keepLargestRegions, quantize, toRgba } from "./quantize.ts";
import { pathData } from "./render.ts";

export interface TraceOptions {
  /** Palette size, 2-64. */
  colors: number;
  detail: Detail;
  /**
   * A photograph, already prepared (`preparePhoto`), and its settings (`PHOTO[detail]` unless measuring
   * others): k-means palette, the settings' tolerances, stacked shapes.
   */
  photo?: PhotoSettings;
  /** The size bound; default `MAX_PATHS` and `MAX_PATH_BYTES` (bench/vectorize.ts lifts it to run the old pipeline). */
  bound?: { paths: number; bytes: number };
}

/** Tracing tolerances per detail level: line and curve error (px) and the smallest path kept (edge points). */
const DETAIL: Record<Detail, { ltres: number; qtres: number; pathomit: number }> = {
  low: { ltres: 2, qtres: 2, pathomit: 16 },
  medium: { ltres: 1, qtres: 1, pathomit: 8 },
  high: { ltres: 0.5, qtres: 0.5, pathomit: 2 },
};

/**
 * The largest vector answered: at most this many paths and this many bytes of path data. A photograph's
 * regions beyond the path count are merged into their neighbours before tracing (`keepLargestRegions`), which
 * bounds the tracer's time too; otherwise, the smallest shapes (by the area of their outline) are left out
 * (in a stacked photograph the shape beneath shows instead). The generated photographs stay well inside
 * (about 1,700 paths and 600 KB at detail `high`, 16 colours); noise reaches the bound, where the old pipeline
 * made 960,000 paths and 76 MB of SVG of a 1024 px noise image at 64 colours.
 */
export const MAX_PATHS = 5_000;
export const MAX_PATH_BYTES = 2_000_000;

/** Colours whose quantised alpha is below this are the transparent background: not drawn. */
const MIN_ALPHA = 8;

const hex = (n: number) => Math.round(n).toString(16).padStart(2, "0");
const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Traces `image`; coordinates are multiplied by `scale` (to give the vector the size of the original image
 * when the pixels were downscaled for tracing).
 */
export function trace(image: RgbaImage, options: TraceOptions, scale = 1): Drawing {
  const stacked = options.photo !== undefined;
  const bound = options.bound ?? { paths: MAX_PATHS, bytes: MAX_PATH_BYTES };
  let data: TraceData;
  if (options.photo) {
    const { ltres, qtres, pathomit, despeckle: passes } = options.photo;
    // One path is the background; each region left is one outline.
    const indexed = keepLargestRegions(
      despeckle(quantize(image, options.colors), passes),
      Math.max(1, bound.paths - 1),
    );
    // The pixels are exactly the palette's colours: one round maps each to its own entry.
    data = ImageTracer.imagedataToTracedata(toRgba(indexed), {
      ltres,
      qtres,
      pathomit,
      pal: indexed.palette,
      colorquantcycles: 1,
      rightangleenhance: false,
      blurradius: 0,
    });
  } else {
    data = ImageTracer.imagedataToTracedata(
      { width: image.width, height: image.height, data: image.data },
      {
        ...DETAIL[options.detail],
        numberofcolors: options.colors,
        // Deterministic sampling: the same image gives the same vector.
        colorsampling: 2,
        colorquantcycles: 3,
        mincolorratio: 0,
        rightangleenhance: true,
        blurradius: 0,
      },
    );
  }
  const point = (x: number, y: number) => ({ x: round(x * scale), y: round(y * scale) });
  const shapes: Shape[] = [];
  data.layers.forEach((layer, index) => {
    const colour = data.palette[index];
    if (!colour || colour.a < MIN_ALPHA) return;
    for (const path of layer) {
      if (path.isholepath || path.segments.length === 0) continue;
      const contours = [outline(path, point)];
      if (!stacked)
        for (const child of path.holechildren) {
          const hole = layer[child];
          if (hole && hole.segments.length > 0) contours.push(reversed(hole, point));
        }
      shapes.push({
        color: `#${hex(colour.r)}${hex(colour.g)}${hex(colour.b)}`,
        opacity: Math.round((colour.a / 255) * 1000) / 1000,
        contours,
      });
    }
  });
  const width = Math.round(image.width * scale);
  const height = Math.round(image.height * scale);
  if (!stacked) return { width, height, shapes: bounded(shapes, bound) };
  const areas = new Map(shapes.map((s) => [s, area(s.contours[0] as Contour)]));
  shapes.sort((a, b) => (areas.get(b) as number) - (areas.get(a) as number));
  const largest = shapes[0];
  if (largest) shapes.unshift({ color: largest.color, opacity: 1, contours: [frame(width, height)] });
  return { width, height, shapes: bounded(shapes, bound) };
}

/** A rectangle over the whole drawing. */
function frame(width: number, height: number): Contour {
  return {
    start: { x: 0, y: 0 },
    segments: [
      { type: "L", x: width, y: 0 },
      { type: "L", x: width, y: height },
      { type: "L", x: 0, y: height },
    ],
  };
}

/** Area enclosed by a contour's end points (shoelace; quadratic bulges ignored, enough to rank shapes). */
function area(contour: Contour): number {
  let sum = 0;
  let { x, y } = contour.start;
  for (const s of contour.segments) {
    sum += x * s.y - s.x * y;
    x = s.x;
    y = s.y;
  }
  sum += x * contour.start.y - contour.start.x * y;
  return Math.abs(sum) / 2;
}

/** `shapes` in their order, without the smallest ones beyond `bound.paths` paths or `bound.bytes` of path data. */
function bounded(shapes: Shape[], bound: { paths: number; bytes: number }): Shape[] {
  const sizes = shapes.map((s) => pathData(s.contours).length);
  if (shapes.length <= bound.paths && sizes.reduce((a, b) => a + b, 0) <= bound.bytes) return shapes;
  const byArea = shapes.map((_, i) => i);
  const areas = shapes.map((s) => area(s.contours[0] as Contour));
  byArea.sort((a, b) => (areas[b] as number) - (areas[a] as number));
  const kept = new Set<number>();
  let bytes = 0;
  for (const i of byArea) {
    if (kept.size === bound.paths || bytes + (sizes[i] as number) > bound.bytes) break;
    kept.add(i);
    bytes += sizes[i] as number;
  }
  return shapes.filter((_, i) => kept.has(i));
}

type Pointer = (x: number, y: number) => { x: number; y: number };

function end(s: TraceSegment): [number, number] {
  return s.x3 !== undefined && s.y3 !== undefined ? [s.x3, s.y3] : [s.x2, s.y2];
}

function outline(path: TracePath, point: Pointer): Contour {
  const first = path.segments[0] as TraceSegment;
  return {
    start: point(first.x1, first.y1),
    segments: path.segments.map((s): Segment => {
      const [x, y] = end(s);
      if (s.type === "Q") {
        const c = point(s.x2, s.y2);
        return { type: "Q", cx: c.x, cy: c.y, ...point(x, y) };
      }
      return { type: "L", ...point(x, y) };
    }),
  };
}

/** A hole, walked backwards (as imagetracerjs draws it), so nonzero fills leave it open too. */
function reversed(path: TracePath, point: Pointer): Contour {
  const last = path.segments[path.segments.length - 1] as TraceSegment;
  const [sx, sy] = end(last);
  const segments: Segment[] = [];
  for (let i = path.segments.length - 1; i >= 0; i--) {
    const s = path.segments[i] as TraceSegment;
    if (s.type === "Q") {
      const c = point(s.x2, s.y2);
      segments.push({ type: "Q", cx: c.x, cy: c.y, ...point(s.x1, s.y1) });
    } else segments.push({ type: "L", ...point(s.x1, s.y1) });
  }
  return { start: point(sx, sy), segments };
}

/** Distinct colours of the drawing, in drawing order. */
export function drawingColors(drawing: Drawing): string[] {
  return [...new Set(drawing.shapes.map((s) => s.color))];
}
