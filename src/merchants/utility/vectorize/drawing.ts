/**
 * A traced image, as every output format is written from it (render.ts), and the detail it was traced at.
 * A file of its own: trace.ts makes drawings and writes their paths with render.ts, which reads them, and
 * photo.ts keeps settings per detail that trace.ts reads.
 */

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
