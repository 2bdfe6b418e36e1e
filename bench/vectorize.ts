/**
 * `/api/vectorize`'s local engine on photographs, old against new (`npx tsx bench/vectorize.ts [-- --runs N]
 * [--sweep]`).
 *
 * The images are generated (`test/merchants/utility/vectorize/photos.ts`: no downloads): a portrait, a
 * landscape and a texture, each as a JPEG (quality 75, noise of 6 levels) at 640x427 and 1600x1067, and the
 * portrait as a GIF (256 colours, dithered); and the cases the photo pipeline must not make worse: a logo
 * (PNG, and JPEG at quality 95) and line art (PNG).
 *
 * For each image, both pipelines through `traceLocally` (decode, detection, preparation, the worker thread),
 * the SVG written as the endpoint writes it, at the endpoint's defaults (16 colours, detail `medium`):
 * - **old**: `mode: "graphic"` without the size bound, what every image went through before
 *   (imagetracerjs's own quantiser, cut-out shapes with holes);
 * - **new**: `mode: "auto"`, what the endpoint does now.
 * Figures: SSIM and mean absolute error of the SVG rasterised at the image's size against the decoded image
 * (`fidelity.ts`), SVG bytes, paths, and the time from bytes to SVG (median of `--runs`, default 3, the two
 * pipelines interleaved so load falls on both alike). `fidelity ms` is what measuring costs, to decide
 * whether the endpoint could report it.
 *
 * `--sweep` then varies one photo setting at a time around `PHOTO.medium` on the 1600x1067 photographs and
 * prints the mean SSIM, error, paths and time of each: the measurements `photo.ts`'s settings come from.
 *
 * A table on stderr, one JSON line of every figure on stdout.
 */
import os from "node:os";
import sharp from "sharp";
import { fidelity } from "../src/merchants/utility/vectorize/fidelity.ts";
import { decodeImage, MAX_INPUT_PIXELS } from "../src/merchants/utility/vectorize/image.ts";
import { type LocalMode, traceLocally } from "../src/merchants/utility/vectorize/local.ts";
import { PHOTO, type PhotoSettings } from "../src/merchants/utility/vectorize/photo.ts";
import { toSvg } from "../src/merchants/utility/vectorize/render.ts";
import { TraceThread } from "../src/merchants/utility/vectorize/trace-thread.ts";
import { twoShapesAs } from "../test/merchants/utility/vectorize/images.ts";
import { lineArt, PHOTO_KINDS, photo } from "../test/merchants/utility/vectorize/photos.ts";

const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;
if (!Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write("bench/vectorize: --runs takes a positive integer\n");
  process.exit(2);
}
const SWEEP = args.includes("--sweep");
const log = (message: string) => process.stderr.write(`${message}\n`);
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const round = (x: number, places = 3) => Math.round(x * 10 ** places) / 10 ** places;

interface Case {
  name: string;
  bytes: Buffer;
  /** Generated as a photograph (the detection should say so). */
  photo: boolean;
}

const cases: Case[] = [];
for (const [width, height] of [
  [640, 427],
  [1600, 1067],
] as const)
  for (const kind of PHOTO_KINDS)
    cases.push({ name: `${kind} ${width}x${height}`, bytes: await photo(kind, width, height), photo: true });
cases.push(
  {
    name: "portrait gif 640x427",
    bytes: await sharp(await photo("portrait", 640, 427))
      .gif()
      .toBuffer(),
    photo: true,
  },
  { name: "logo png 192x128", bytes: await twoShapesAs("png", 192, 128), photo: false },
  { name: "logo jpeg 640x427", bytes: await twoShapesAs("jpeg", 640, 427), photo: false },
  { name: "line art png 640x427", bytes: await lineArt(640, 427), photo: false },
);

const thread = new TraceThread();
const colors = 16;
const detail = "medium";

interface Figures {
  ssim: number;
  meanAbsError: number;
  svgBytes: number;
  paths: number;
  ms: number;
  fidelityMs: number;
  photo: boolean;
}

async function measure(c: Case, mode: LocalMode, photoSettings?: PhotoSettings): Promise<Figures> {
  const t0 = performance.now();
  // The old pipeline as it was: no size bound.
  const bound =
    mode === "graphic" ? { paths: Number.POSITIVE_INFINITY, bytes: Number.POSITIVE_INFINITY } : undefined;
  const { drawing, photo } = await traceLocally(c.bytes, {
    colors,
    detail,
    mode,
    thread,
    photoSettings,
    bound,
  });
  const svg = toSvg(drawing);
  const ms = performance.now() - t0;
  const reference = await decodeImage(c.bytes, MAX_INPUT_PIXELS);
  const t1 = performance.now();
  const { ssim, meanAbsError } = fidelity(svg, reference);
  const fidelityMs = performance.now() - t1;
  return {
    ssim,
    meanAbsError,
    svgBytes: Buffer.byteLength(svg),
    paths: drawing.shapes.length,
    ms,
    fidelityMs,
    photo,
  };
}

/** The figures of `RUNS` runs: quality of the first (the pipelines are deterministic), median times. */
async function runs(c: Case, modes: LocalMode[]): Promise<Figures[]> {
  const all: Figures[][] = modes.map(() => []);
  for (let run = 0; run < RUNS; run++)
    for (const [i, mode] of modes.entries()) (all[i] as Figures[]).push(await measure(c, mode));
  return all.map((list) => ({
    ...(list[0] as Figures),
    ms: median(list.map((f) => f.ms)),
    fidelityMs: median(list.map((f) => f.fidelityMs)),
  }));
}

log(
  `bench/vectorize: ${os.cpus()[0]?.model ?? "cpu"}, ${os.cpus().length} cores, Node ${process.version}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}, ${RUNS} runs, colors ${colors}, detail ${detail}`,
);
log(
  `${"image".padEnd(22)} ${"pipeline".padEnd(9)} photo   SSIM   error  SVG bytes  paths   ms     fidelity ms`,
);
const results: Record<string, { old: Figures; new: Figures }> = {};
for (const c of cases) {
  const [before, after] = (await runs(c, ["graphic", "auto"])) as [Figures, Figures];
  results[c.name] = { old: before, new: after };
  for (const [label, f] of [
    ["old", before],
    ["new", after],
  ] as const)
    log(
      `${c.name.padEnd(22)} ${label.padEnd(9)} ${String(f.photo).padEnd(7)} ${f.ssim.toFixed(3)}  ${f.meanAbsError
        .toFixed(2)
        .padStart(5)}  ${String(f.svgBytes).padStart(9)}  ${String(f.paths).padStart(5)}  ${f.ms
        .toFixed(0)
        .padStart(5)}  ${f.fidelityMs.toFixed(0).padStart(6)}`,
    );
  if (after.photo !== c.photo) log(`  !! detected as ${after.photo ? "a photograph" : "a graphic"}`);
}

const sweep: {
  setting: string;
  ssim: number;
  meanAbsError: number;
  paths: number;
  svgBytes: number;
  ms: number;
}[] = [];
if (SWEEP) {
  const base = PHOTO.medium;
  const variants: [string, PhotoSettings][] = [
    ["medium (as set)", base],
    ["low (as set)", PHOTO.low],
    ["high (as set)", PHOTO.high],
  ];
  for (const side of [512, 1024]) variants.push([`side ${side}`, { ...base, side }]);
  for (const median of [0, 3, 7]) variants.push([`median ${median}`, { ...base, median }]);
  for (const pathomit of [4, 16, 32]) variants.push([`pathomit ${pathomit}`, { ...base, pathomit }]);
  for (const despeckle of [0, 2]) variants.push([`despeckle ${despeckle}`, { ...base, despeckle }]);
  for (const tolerance of [1, 2])
    variants.push([`ltres/qtres ${tolerance}`, { ...base, ltres: tolerance, qtres: tolerance }]);
  const photos = cases.filter((c) => c.photo && c.name.endsWith("1600x1067"));
  log(`\nsweep: one setting at a time around PHOTO.medium, mean over ${photos.length} photographs 1600x1067`);
  log(`${"setting".padEnd(18)} SSIM   error  paths  SVG bytes  ms`);
  const variantsWithColours: [string, PhotoSettings, number][] = variants.map(([n, s]) => [n, s, colors]);
  for (const n of [8, 24, 32, 64]) variantsWithColours.push([`colors ${n}`, base, n]);
  for (const [name, settings, n] of variantsWithColours) {
    const figures: Figures[] = [];
    for (const c of photos) {
      const t0 = performance.now();
      const { drawing } = await traceLocally(c.bytes, {
        colors: n,
        detail,
        mode: "photo",
        thread,
        photoSettings: settings,
      });
      const svg = toSvg(drawing);
      const ms = performance.now() - t0;
      const { ssim, meanAbsError } = fidelity(svg, await decodeImage(c.bytes, MAX_INPUT_PIXELS));
      figures.push({
        ssim,
        meanAbsError,
        svgBytes: svg.length,
        paths: drawing.shapes.length,
        ms,
        fidelityMs: 0,
        photo: true,
      });
    }
    const mean = (pick: (f: Figures) => number) => figures.reduce((s, f) => s + pick(f), 0) / figures.length;
    const row = {
      setting: name,
      ssim: round(mean((f) => f.ssim)),
      meanAbsError: round(
        mean((f) => f.meanAbsError),
        2,
      ),
      paths: Math.round(mean((f) => f.paths)),
      svgBytes: Math.round(mean((f) => f.svgBytes)),
      ms: Math.round(mean((f) => f.ms)),
    };
    sweep.push(row);
    log(
      `${name.padEnd(18)} ${row.ssim.toFixed(3)}  ${row.meanAbsError.toFixed(2).padStart(5)}  ${String(row.paths).padStart(5)}  ${String(row.svgBytes).padStart(9)}  ${row.ms}`,
    );
  }
}
await thread.close();

const rounded = Object.fromEntries(
  Object.entries(results).map(([name, r]) => [
    name,
    Object.fromEntries(
      Object.entries(r).map(([k, f]) => [
        k,
        {
          ...f,
          ssim: round(f.ssim),
          meanAbsError: round(f.meanAbsError, 2),
          ms: Math.round(f.ms),
          fidelityMs: Math.round(f.fidelityMs),
        },
      ]),
    ),
  ]),
);
process.stdout.write(`${JSON.stringify({ runs: RUNS, colors, detail, results: rounded, sweep })}\n`);
