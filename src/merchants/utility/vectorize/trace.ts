/**
 * The local engine's tracer: RGBA pixels → a `Drawing` (filled shapes of one colour each, outer contour plus
 * holes, straight and quadratic segments), using imagetracerjs (colour quantisation, then edge tracing per
 * colour layer). Every output format is written from the same `Drawing` (`render.ts`).
 */
import ImageTracer, { type TracePath, type TraceSegment } from "imagetracerjs";
import type { RgbaImage } from "./bmp.ts";

export type Segment =
  | { type: "L"; x: number; y: number }
  | { type: "Q"; cx: number; cy: number; x: number; y: number };

/** A closed contour: from `start` through the segments back to `start`. */
export interface Contour {
  start: { x: number; y: number };
  segments: Segment[];
}

export interface Shape {
  /** "#rrggbb" */
  color: string;
  /** 0-1 (quantised alpha; PDF and SVG keep it, EPS and DXF draw the shape opaque). */
  opacity: number;
  /** The first is the outline; the others are holes (drawn in the opposite direction; fill even-odd). */
  contours: Contour[];
}

export interface Drawing {
  width: number;
  height: number;
  shapes: Shape[];
}

export type Detail = "low" | "medium" | "high";

export interface TraceOptions {
  /** Palette size, 2-64. */
  colors: number;
  detail: Detail;
}

/** Tracing tolerances per detail level: line and curve error (px) and the smallest path kept (edge points). */
const DETAIL: Record<Detail, { ltres: number; qtres: number; pathomit: number }> = {
  low: { ltres: 2, qtres: 2, pathomit: 16 },
  medium: { ltres: 1, qtres: 1, pathomit: 8 },
  high: { ltres: 0.5, qtres: 0.5, pathomit: 2 },
};

/** Colours whose quantised alpha is below this are the transparent background: not drawn. */
const MIN_ALPHA = 8;

const hex = (n: number) => Math.round(n).toString(16).padStart(2, "0");
const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Traces `image`; coordinates are multiplied by `scale` (to give the vector the size of the original image
 * when the pixels were downscaled for tracing).
 */
export function trace(image: RgbaImage, options: TraceOptions, scale = 1): Drawing {
  const data = ImageTracer.imagedataToTracedata(
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
  const point = (x: number, y: number) => ({ x: round(x * scale), y: round(y * scale) });
  const shapes: Shape[] = [];
  data.layers.forEach((layer, index) => {
    const colour = data.palette[index];
    if (!colour || colour.a < MIN_ALPHA) return;
    for (const path of layer) {
      if (path.isholepath || path.segments.length === 0) continue;
      const contours = [outline(path, point)];
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
  return { width: Math.round(image.width * scale), height: Math.round(image.height * scale), shapes };
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
