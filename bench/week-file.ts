/**
 * The synthetic week the report benchmarks read (scripts/synthetic.ts), generated into .bench/ in a child
 * process (its memory does not count) and reused while its parameters and the generator are the same.
 */
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { SyntheticSummary } from "../scripts/synthetic.ts";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const benchDir = path.join(root, ".bench");
const generator = path.join(root, "scripts", "synthetic.ts");

export interface WeekParams {
  seed: number;
  merchants: number;
  buyers: number;
  payments: number;
  endBlock: number;
  endTime: string;
  funding: number;
}

export type FileSummary = Omit<SyntheticSummary, "roles" | "wallets">;

const fmt = (n: number) => n.toLocaleString("en-US");

/** The week's file: reused when one of these parameters and this generator exists, else generated. */
export async function weekFile(
  params: WeekParams,
  line: (text: string) => void,
): Promise<{ dataFile: string; summary: FileSummary; generateSeconds: number | null }> {
  fs.mkdirSync(benchDir, { recursive: true });
  const generatorHash = crypto
    .createHash("sha256")
    .update(fs.readFileSync(generator))
    .digest("hex")
    .slice(0, 12);
  const stem = `week-s${params.seed}-m${params.merchants}-b${params.buyers}-p${params.payments}${params.funding > 0 ? `-f${params.funding}` : ""}`;
  const dataFile = path.join(benchDir, `${stem}.ndjson`);
  const markerFile = path.join(benchDir, `${stem}.json`);
  line(
    `x402-merchants report benchmark: ${fmt(params.payments)} payments, ${fmt(params.merchants)} merchants, ${fmt(params.buyers)} buyers`,
  );
  try {
    const marker = JSON.parse(fs.readFileSync(markerFile, "utf8")) as {
      generator: string;
      summary: FileSummary;
    };
    if (marker.generator === generatorHash && fs.statSync(dataFile).size === marker.summary.bytes) {
      line(
        `data       reusing ${path.relative(root, dataFile)} (${fmt(marker.summary.lines)} lines, ${(marker.summary.bytes / 2 ** 30).toFixed(2)} GiB)`,
      );
      return { dataFile, summary: marker.summary, generateSeconds: null };
    }
  } catch {
    // No usable file: generate it.
  }
  for (const f of [dataFile, markerFile]) fs.rmSync(f, { force: true });
  const started = performance.now();
  const partial = `${dataFile}.partial`;
  const summary = await generate(params, partial);
  fs.renameSync(partial, dataFile);
  fs.writeFileSync(markerFile, `${JSON.stringify({ generator: generatorHash, params, summary }, null, 2)}\n`);
  const generateSeconds = Number(((performance.now() - started) / 1000).toFixed(2));
  line(
    `data       generated ${path.relative(root, dataFile)}: ${fmt(summary.lines)} lines, ${(summary.bytes / 2 ** 30).toFixed(2)} GiB in ${generateSeconds} s`,
  );
  return { dataFile, summary, generateSeconds };
}

/** Reads a file to its end in 16 MB pieces, keeping nothing: this VM's page cache drops idle files. */
export function readThrough(file: string): void {
  const fd = fs.openSync(file, "r");
  const buffer = Buffer.allocUnsafe(16 * 2 ** 20);
  try {
    while (fs.readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** Runs the generator's CLI in a child process (same Node and tsx loader as this one). */
function generate(params: WeekParams, out: string): Promise<FileSummary> {
  const args = [
    ...process.execArgv,
    generator,
    "--out",
    out,
    ...Object.entries(params).flatMap(([k, v]) => [
      `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
      String(v),
    ]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`generator exited with ${code}`));
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as FileSummary);
    });
  });
}
