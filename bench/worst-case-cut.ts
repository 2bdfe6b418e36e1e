/**
 * Where a page reader's CPU cap cuts, apart from the host's load (`npx tsx bench/worst-case-cut.ts [KIND...]`,
 * KIND alt-check, scrape, metadata or summarize; all four by default). `bench:worst-case` pays the readers'
 * worst page through the whole x402 flow, and on a busy host the wall-clock deadline refuses it before the CPU
 * cap is reached; here the page goes straight to a warm reader's process (`JobProcess`, with the endpoint's own
 * CPU share and heap cap, `PageWorker`) with the deadline out of the way, three times per reader, and the CPU
 * of this process and of every process under it is read from `/proc` before the call and once the killed
 * reader has been reaped. What it leaves out is the endpoint's fetch and payment, which `bench:worst-case` counts.
 * Issue 69's page: ~66,000 styled blocks just under the 3 MiB page cap. Linux only.
 */
import fs from "node:fs";
import os from "node:os";
import { JobProcess } from "../src/merchants/utility/job-process.ts";
import { type PageJob, type PageTask, PageWorker } from "../src/merchants/utility/pages/work.ts";
import { widePage } from "../test/helpers/worst-pages.ts";

const ROUTES = { "alt-check": "0.001", scrape: "0.001", metadata: "0.001", summarize: "0.002" } as const;
type Kind = keyof typeof ROUTES;

/** CPU of a process, ms: its own (every thread), and its reaped children's when `reaped`. */
function statMs(pid: number | "self", reaped: boolean): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (reaped ? [11, 12, 13, 14] : [11, 12]).reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
}

/** CPU of this process, of its reaped children, and of those still running, ms. */
function treeCpuMs(): number {
  let total = statMs("self", true);
  for (const task of fs.readdirSync("/proc/self/task"))
    for (const child of fs
      .readFileSync(`/proc/self/task/${task}/children`, "utf8")
      .split(" ")
      .filter(Boolean))
      try {
        total += statMs(Number(child), true);
      } catch {
        // Reaped between the listing and the reading: this process's figures count it.
      }
  return total;
}

const kinds = (process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(ROUTES)) as Kind[];
const page = { url: "http://127.0.0.1/wide", status: 200, headerCharset: null, html: widePage() };
const small = {
  ...page,
  html: `<html><body>${"<p>A sentence about tide pools and the small fish in them.</p>".repeat(20)}<img src="a.png"></body></html>`,
};
process.stderr.write(
  `worst-case-cut on ${os.cpus()[0]?.model} x${os.cpus().length}, load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}\n`,
);
const rows: {
  kind: Kind;
  budgetMs: number;
  capMs: number;
  outcome: string;
  cpuMs: number;
  hostMs: number;
}[] = [];
for (const kind of kinds) {
  const endpoint = new PageWorker(ROUTES[kind]);
  const reader = new JobProcess<PageJob, unknown>(
    new URL("../src/merchants/utility/pages/page-worker.ts", import.meta.url),
    {
      maxOldSpaceMb: endpoint.heapMb,
    },
  );
  const task: PageTask = kind === "summarize" ? { kind, sentences: 10 } : { kind };
  for (let i = 0; i < 3; i++) {
    // Warm: the reader's start is not the page's.
    await reader.run({ ...task, page: small });
    const cpuBefore = treeCpuMs();
    const hostBefore = process.cpuUsage();
    const outcome = await reader
      .run({ ...task, page }, undefined, { cpuMs: endpoint.processCpuMs, deadlineMs: 600_000 })
      .then(
        () => "served",
        (error: { code?: string }) => error.code ?? String(error),
      );
    // The killed reader reaped: its CPU, its exit's included, is in this process's figures then.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const host = process.cpuUsage(hostBefore);
    const row = {
      kind,
      budgetMs: endpoint.cpuMs,
      capMs: endpoint.processCpuMs,
      outcome,
      cpuMs: treeCpuMs() - cpuBefore,
      hostMs: Math.round((host.user + host.system) / 1000),
    };
    rows.push(row);
    process.stderr.write(
      `  ${kind}: ${outcome}, ${row.cpuMs} CPU-ms in all (budget ${row.budgetMs}, the reader's cap ${row.capMs}), ${row.hostMs} in this process\n`,
    );
  }
  await Promise.all([reader.close(), endpoint.close()]);
}
console.log(JSON.stringify({ rows }));
