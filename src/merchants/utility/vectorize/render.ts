/**
 * Writes a traced `Drawing` in each output format: SVG (written here), PNG (resvg rasterising that SVG),
 * PDF (pdfkit drawing the same paths), EPS (PostScript written here) and DXF (@tarikjabiri/dxf: a solid hatch
 * and a closed polyline per contour). One shape is one SVG path / PDF and EPS fill / DXF hatch.
 */
import { createRequire } from "node:module";
import type { Resvg as ResvgClass } from "@resvg/resvg-js";
import { onFirstUse } from "../lazy.ts";
import type { Contour, Drawing } from "./drawing.ts";

// Each writer's package is loaded by the first file of its format (pdfkit alone is about 20 MB of a
// host's memory). resvg and the DXF writer are CommonJS to a static import too (the DXF writer's `main`
// is its .cjs file); pdfkit has an ESM build of its own, which `import()` keeps.
const require = createRequire(import.meta.url);
const resvg = onFirstUse(() => require("@resvg/resvg-js") as { Resvg: typeof ResvgClass });
const dxfWriter = onFirstUse(() => require("@tarikjabiri/dxf") as typeof import("@tarikjabiri/dxf"));
const pdfkit = onFirstUse(() => import("pdfkit"));

export type VectorFormat = "svg" | "png" | "pdf" | "eps" | "dxf";

export const VECTOR_MIME: Record<VectorFormat, string> = {
  svg: "image/svg+xml",
  png: "image/png",
  pdf: "application/pdf",
  eps: "application/postscript",
  dxf: "image/vnd.dxf",
};

/** SVG path data of one shape (all its contours). */
export function pathData(contours: Contour[]): string {
  return contours
    .map((c) => {
      const parts = [`M${c.start.x} ${c.start.y}`];
      for (const s of c.segments)
        parts.push(s.type === "L" ? `L${s.x} ${s.y}` : `Q${s.cx} ${s.cy} ${s.x} ${s.y}`);
      return `${parts.join("")}Z`;
    })
    .join("");
}

export function toSvg(drawing: Drawing): string {
  const { width, height } = drawing;
  const paths = drawing.shapes.map(
    (s) =>
      `<path fill="${s.color}"${s.opacity < 1 ? ` fill-opacity="${s.opacity}"` : ""} fill-rule="evenodd" d="${pathData(s.contours)}"/>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">\n${paths.join("\n")}\n</svg>\n`;
}

function renderSvg(svg: string, width?: number) {
  const { Resvg } = resvg();
  return new Resvg(svg, {
    fitTo: width === undefined ? { mode: "original" } : { mode: "width", value: width },
    font: { loadSystemFonts: false },
  }).render();
}

/** The SVG rasterised at the drawing's size, transparent where nothing is drawn. */
export function toPng(svg: string): Buffer {
  return renderSvg(svg).asPng();
}

/** The SVG rasterised to RGBA pixels (not premultiplied), `width` px wide (default its own size). */
export function rasterize(svg: string, width?: number): { width: number; height: number; data: Uint8Array } {
  const image = renderSvg(svg, width);
  return { width: image.width, height: image.height, data: image.pixels };
}

export async function toPdf(drawing: Drawing): Promise<Buffer> {
  const { default: PDFDocument } = await pdfkit();
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: [drawing.width, drawing.height],
      margin: 0,
      info: { Producer: "x402-merchants vectorize", Creator: "x402-merchants vectorize" },
    });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    for (const shape of drawing.shapes) {
      doc.path(pathData(shape.contours)).fillColor(shape.color, shape.opacity).fill("even-odd");
    }
    doc.end();
  });
}

/** PostScript numbers: short, no exponent. */
const ps = (n: number) => String(Math.round(n * 100) / 100);

/** Encapsulated PostScript 3.0: y flipped once, quadratics raised to cubics, each shape filled even-odd. */
export function toEps(drawing: Drawing): string {
  const { width, height } = drawing;
  const lines = [
    "%!PS-Adobe-3.0 EPSF-3.0",
    `%%BoundingBox: 0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
    `%%HiResBoundingBox: 0 0 ${width} ${height}`,
    "%%Creator: x402-merchants vectorize",
    "%%LanguageLevel: 2",
    "%%Pages: 1",
    "%%EndComments",
    "%%BeginProlog",
    "/m {moveto} bind def /l {lineto} bind def /c {curveto} bind def /h {closepath} bind def",
    "/f {setrgbcolor eofill} bind def",
    "%%EndProlog",
    "%%Page: 1 1",
    "gsave",
    `0 ${ps(height)} translate 1 -1 scale`,
  ];
  for (const shape of drawing.shapes) {
    const r = Number.parseInt(shape.color.slice(1, 3), 16) / 255;
    const g = Number.parseInt(shape.color.slice(3, 5), 16) / 255;
    const b = Number.parseInt(shape.color.slice(5, 7), 16) / 255;
    const ops = ["newpath"];
    for (const contour of shape.contours) {
      let x0 = contour.start.x;
      let y0 = contour.start.y;
      ops.push(`${ps(x0)} ${ps(y0)} m`);
      for (const s of contour.segments) {
        if (s.type === "L") ops.push(`${ps(s.x)} ${ps(s.y)} l`);
        else {
          // Quadratic (p0, c, p1) = cubic (p0, p0 + 2/3 (c - p0), p1 + 2/3 (c - p1), p1).
          const c1x = x0 + (2 / 3) * (s.cx - x0);
          const c1y = y0 + (2 / 3) * (s.cy - y0);
          const c2x = s.x + (2 / 3) * (s.cx - s.x);
          const c2y = s.y + (2 / 3) * (s.cy - s.y);
          ops.push(`${ps(c1x)} ${ps(c1y)} ${ps(c2x)} ${ps(c2y)} ${ps(s.x)} ${ps(s.y)} c`);
        }
        x0 = s.x;
        y0 = s.y;
      }
      ops.push("h");
    }
    ops.push(`${ps(r)} ${ps(g)} ${ps(b)} f`);
    lines.push(ops.join(" "));
  }
  lines.push("grestore", "showpage", "%%Trailer", "%%EOF", "");
  return lines.join("\n");
}

/** The contour as points, quadratics flattened to `steps` chords, in DXF coordinates (y up). */
function polyline(contour: Contour, height: number, steps = 4): { x: number; y: number }[] {
  const points = [{ x: contour.start.x, y: height - contour.start.y }];
  let x0 = contour.start.x;
  let y0 = contour.start.y;
  for (const s of contour.segments) {
    if (s.type === "Q") {
      for (let i = 1; i < steps; i++) {
        const t = i / steps;
        const u = 1 - t;
        points.push({
          x: u * u * x0 + 2 * u * t * s.cx + t * t * s.x,
          y: height - (u * u * y0 + 2 * u * t * s.cy + t * t * s.y),
        });
      }
    }
    points.push({ x: s.x, y: height - s.y });
    x0 = s.x;
    y0 = s.y;
  }
  // The last point is the start again: the polyline is closed by its flag.
  const last = points[points.length - 1];
  if (points.length > 1 && last && last.x === points[0]?.x && last.y === points[0]?.y) points.pop();
  return points.map((p) => ({ x: Math.round(p.x * 100) / 100, y: Math.round(p.y * 100) / 100 }));
}

/** DXF (AutoCAD R2007+ text): one layer per colour; per shape a solid hatch (outline + holes) and its outlines. */
export function toDxf(drawing: Drawing): string {
  const {
    DxfWriter,
    HatchBoundaryPaths,
    HatchPolylineBoundary,
    HatchPredefinedPatterns,
    LWPolylineFlags,
    pattern,
    point2d,
    TrueColor,
    vertex,
  } = dxfWriter();
  const dxf = new DxfWriter();
  const layers = new Set<string>();
  for (const shape of drawing.shapes) {
    const layerName = `COLOR_${shape.color.slice(1).toUpperCase()}`;
    const trueColor = String(TrueColor.fromHex(shape.color));
    if (!layers.has(layerName)) {
      layers.add(layerName);
      dxf.addLayer(layerName, 7, "CONTINUOUS");
    }
    const boundary = new HatchBoundaryPaths();
    const outlines = shape.contours.map((c) => polyline(c, drawing.height));
    for (const points of outlines) {
      boundary.addPolylineBoundary(new HatchPolylineBoundary(points.map((p) => vertex(p.x, p.y))));
    }
    dxf.addHatch(boundary, pattern({ name: HatchPredefinedPatterns.SOLID }), { layerName, trueColor });
    for (const points of outlines) {
      dxf.addLWPolyline(
        points.map((p) => ({ point: point2d(p.x, p.y) })),
        { flags: LWPolylineFlags.Closed, layerName, trueColor },
      );
    }
  }
  return dxf.stringify();
}
