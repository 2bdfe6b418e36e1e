/** The part of imagetracerjs 1.2.6 (no types of its own) the local engine uses. */
declare module "imagetracerjs" {
  export interface TraceSegment {
    type: "L" | "Q";
    x1: number;
    y1: number;
    x2: number;
    y2: number;
    /** Present on quadratic segments (end point; x2/y2 is then the control point). */
    x3?: number;
    y3?: number;
  }
  export interface TracePath {
    segments: TraceSegment[];
    boundingbox: [number, number, number, number];
    holechildren: number[];
    isholepath: boolean;
  }
  export interface TraceColor {
    r: number;
    g: number;
    b: number;
    a: number;
  }
  export interface TraceData {
    layers: TracePath[][];
    palette: TraceColor[];
    width: number;
    height: number;
  }
  export interface ImageDataLike {
    width: number;
    height: number;
    data: Uint8Array | Uint8ClampedArray;
  }
  export interface TraceOptions {
    ltres?: number;
    qtres?: number;
    pathomit?: number;
    rightangleenhance?: boolean;
    colorsampling?: 0 | 1 | 2;
    numberofcolors?: number;
    mincolorratio?: number;
    colorquantcycles?: number;
    layering?: 0 | 1;
    blurradius?: number;
    blurdelta?: number;
    pal?: TraceColor[];
  }
  const ImageTracer: {
    imagedataToTracedata(imgd: ImageDataLike, options?: TraceOptions): TraceData;
  };
  export default ImageTracer;
}
