/**
 * Malformed files given to `import` on a store that already holds a week: each must be refused in one
 * line naming the fault's line, with a non-zero exit, and leave the store exactly as it was.
 */
import fs from "node:fs";
import path from "node:path";
import { Analytics } from "../../src/analytics/duckdb.ts";
import { addr, checkpoint, END, payment, transfer } from "../helpers/data.ts";
import { tempDir } from "../helpers/indexer.ts";
import { seeded } from "../helpers/rpc-proxy.ts";
import { percentile, runCli } from "./child.ts";
import type { Scenario } from "./scenario.ts";

interface Case {
  name: string;
  /** The file's bytes. */
  bytes: Buffer;
  /** The 1-based line the message must name, when the fault is in one line. */
  line?: number;
}

const lines = (records: readonly (object | string)[]) =>
  Buffer.from(`${records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`);

/** `n` good payments with one record replaced at `at` (0-based) by `bad`. */
function withBad(n: number, at: number, bad: object | string, random: () => number): (object | string)[] {
  const records: (object | string)[] = [];
  for (let i = 0; i < n; i++) {
    records.push(
      i === at
        ? bad
        : payment({
            payer: addr(`p${i % 97}`),
            payTo: addr(`m${i % 13}`),
            amount: 1 + Math.floor(random() * 1e6),
            block: END - 10 - (i % 5000),
          }),
    );
  }
  return records;
}

function cases(random: () => number, quick: boolean): Case[] {
  const n = quick ? 20_000 : 200_000;
  const at = Math.floor(n * 0.73);
  const good = () => payment({ payer: addr("q"), payTo: addr("m1"), amount: 1000, block: END - 20 });
  const bad = (name: string, record: object | string, line = at + 1): Case => ({
    name,
    bytes: lines(withBad(n, at, record, random)),
    line,
  });
  const g = good();
  const latin1 = Buffer.from(`${JSON.stringify({ ...good(), payer: "PAYER" })}\n`, "utf8");
  const payerAt = latin1.indexOf("PAYER");
  latin1.set([0x30, 0x78, 0xe9, 0xe9, 0xe9], payerAt);
  return [
    bad("truncated line", JSON.stringify(good()).slice(0, 57)),
    bad("amount of the wrong type", { ...good(), amount: { value: 1 } }),
    bad("block number of the wrong type", { ...good(), block_number: "abc" }),
    bad("negative amount", { ...good(), amount: "-5" }),
    bad("amount of 2^63-1", { ...good(), amount: "9223372036854775807" }),
    bad("amount beyond 64 bits", { ...good(), amount: "99999999999999999999999999" }),
    bad("bad payer address", { ...good(), payer: "0x1234" }),
    bad("bad transaction hash", { ...good(), tx_hash: "0xzz" }),
    bad("unknown record type", { ...good(), type: "refund" }),
    bad("a very long line (4 MB address)", { ...good(), payer: `0x${"a".repeat(4 * 1024 * 1024)}` }),
    bad("binary garbage", "\u0000\u0001\u0002\u00ff\u00fe"),
    bad("two times for one block", { ...g, tx_hash: `0x${"ab".repeat(32)}`, block_time: g.block_time + 7 }),
    {
      name: "one key twice with different amounts",
      bytes: lines([...withBad(1_000, -1, {}, random), g, { ...g, amount: "2000" }]),
      line: 1_002,
    },
    { name: "empty file", bytes: Buffer.alloc(0) },
    {
      name: "UTF-16 text",
      bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(lines([good()]).toString(), "utf16le")]),
      line: 1,
    },
    { name: "Latin-1 bytes in an address", bytes: latin1, line: 1 },
  ];
}

/** Every table's rows, hashed: equal fingerprints mean an unchanged store. */
async function fingerprint(dataDir: string): Promise<string> {
  const analytics = await Analytics.open({ dataDir, threads: 1 });
  try {
    const parts: string[] = [];
    for (const t of ["payments", "transfers", "listings", "merchants", "checkpoints", "meta"]) {
      const row = await analytics.one<{ n: bigint; h: string | null }>(
        `SELECT count(*) AS n, sum(hash(t))::VARCHAR AS h FROM ${t} t`,
      );
      parts.push(`${t}:${row?.n}:${row?.h}`);
    }
    return parts.join(" ");
  } finally {
    analytics.close();
  }
}

export const importMalformed: Scenario = {
  name: "import-malformed",
  about:
    "import of malformed files (truncated and very long lines, wrong types, huge, zero and negative amounts, bad addresses and hashes, conflicting duplicates and block times, an empty file, wrong encodings) into a store holding data. Goal: each a one-line error with its line number and a non-zero exit, 0 crashes, 0 partial writes.",
  async run({ seed, quick, say }) {
    const random = seeded(seed);
    const dir = tempDir("x402m-stress-import-");
    const pristine = path.join(dir, "pristine");
    const data = path.join(dir, "data");
    const base = path.join(dir, "base.ndjson");
    fs.writeFileSync(
      base,
      lines([
        payment({ payer: addr("a"), payTo: addr("m1"), amount: 5 }),
        transfer(addr("x"), addr("a"), 10),
        checkpoint(),
      ]),
    );
    const made = await runCli(["import", base, "--data", pristine]);
    if (made.code !== 0) throw new Error(`the base import failed: ${made.stderr}`);
    const before = await fingerprint(pristine);
    const failures: string[] = [];
    const ms: number[] = [];
    let refused = 0;
    for (const c of cases(random, quick)) {
      const file = path.join(dir, "case.ndjson");
      fs.writeFileSync(file, c.bytes);
      // Each case on its own copy of the store, so one case's damage cannot be blamed on the next.
      fs.rmSync(data, { recursive: true, force: true });
      fs.cpSync(pristine, data, { recursive: true });
      const started = performance.now();
      const result = await runCli(["import", file, "--data", data]);
      ms.push(performance.now() - started);
      const message = result.stderr.trim();
      const problems: string[] = [];
      if (result.code === 0) problems.push("accepted");
      else refused++;
      if (result.code !== null && result.code > 2) problems.push(`exit ${result.code}`);
      if (result.code !== 0 && (message === "" || message.includes("\n")))
        problems.push(`not one line: ${JSON.stringify(message.slice(0, 300))}`);
      if (/\bat \S+ \(|RangeError|TypeError|INTERNAL/i.test(message)) problems.push("crashed");
      if (c.line !== undefined && !message.includes(`:${c.line}: `))
        problems.push(`does not name line ${c.line}: ${message.slice(0, 200)}`);
      if ((await fingerprint(data)) !== before) problems.push("the store changed");
      say(`${c.name}: ${problems.length === 0 ? "refused" : problems.join("; ")}`);
      if (problems.length > 0) failures.push(`${c.name}: ${problems.join("; ")}`);
      fs.rmSync(file);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    return {
      figures: {
        files: ms.length,
        refused,
        "partial writes": failures.filter((f) => f.includes("store changed")).length,
        crashes: failures.filter((f) => f.includes("crashed")).length,
        "p50 time to refuse (ms)": Math.round(percentile(ms, 50)),
        "max time to refuse (ms)": Math.round(Math.max(...ms)),
      },
      failures,
    };
  },
};
