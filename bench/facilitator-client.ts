/**
 * `npx tsx bench/facilitator-client.ts [--payments N] [--rounds N] [--concurrency N]`: the merchant's CPU for
 * one paid request's facilitator calls (a `/verify` and a `/settle`), through the SDK's `HTTPFacilitatorClient`
 * and through the kit's client (src/merchant-kit/payments/facilitators/http-client.ts), alternated round by
 * round in one process against one facilitator stand-in in a child process (canned answers, so that only the
 * client's side is counted: this process's `process.cpuUsage`, the calls' promises and all).
 *
 * `bench:paid` measures the same cut inside the whole merchant, where a load of 10-18 moves a round by more
 * than the cut; here the two clients run on the same payload at the same moment. The payload is a buyer's
 * payment as the middleware hands it on (a decoded header), the requirements the SDK's strings.
 */
import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import { FacilitatorHttpClient } from "../src/merchant-kit/payments/facilitators/http-client.ts";
import { EXACT_REQUIREMENTS, exactPayment } from "../test/helpers/fixtures/payment.ts";

const flags = { payments: 2000, rounds: 6, concurrency: 16 };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = (process.argv[i] ?? "").replace(/^--/, "") as keyof typeof flags;
  const value = Number(process.argv[i + 1]);
  if (!(key in flags) || !Number.isSafeInteger(value) || value < 1)
    throw new Error(
      `flags: ${Object.keys(flags)
        .map((k) => `--${k} N`)
        .join(" ")}`,
    );
  flags[key] = value;
}

/** The stand-in: the project's facilitator's answers, as it gives them, without its work. */
const STAND_IN = `
const http = require("node:http");
const verify = JSON.stringify({ isValid: true, payer: "0x1111111111111111111111111111111111111111" });
const settle = JSON.stringify({ success: true, transaction: "0x${"ab".repeat(32)}", network: "eip155:8453",
  payer: "0x1111111111111111111111111111111111111111", amount: "1000" });
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url.endsWith("/settle") ? settle : verify);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
process.stdin.on("end", () => process.exit(0)).resume();
`;

const requirements = EXACT_REQUIREMENTS;
const payload = exactPayment(
  { url: "http://127.0.0.1:8404/api/calc?expr=2%5E200", description: "calc", mimeType: "" },
  { bazaar: { info: { input: { type: "http", method: "GET" } } } },
);

async function round(client: FacilitatorClient): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: flags.concurrency }, async () => {
      while (next++ < flags.payments) {
        const verified = await client.verify(payload, requirements);
        const settled = await client.settle(payload, requirements);
        if (!verified.isValid || !settled.success) throw new Error("the stand-in's answer was not read");
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / flags.payments;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

const child: ChildProcess = spawn(process.execPath, ["-e", STAND_IN], { stdio: ["pipe", "pipe", "inherit"] });
try {
  const port = await new Promise<string>((resolve) =>
    child.stdout?.once("data", (d) => resolve(String(d).trim())),
  );
  const url = `http://127.0.0.1:${port}`;
  const clients: Record<string, FacilitatorClient> = {
    sdk: new HTTPFacilitatorClient({ url, timeoutMs: 15_000 }),
    kit: new FacilitatorHttpClient({ url, timeoutMs: 15_000, settleTimeoutMs: 90_000 }),
  };
  const load = os.loadavg().map((x) => x.toFixed(1));
  process.stderr.write(
    `facilitator clients, ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, load ${load.join(" ")}: ${flags.payments} payments (a verify and a settle each) a round at ${flags.concurrency}\n`,
  );
  // One round each first, not counted: the JIT and the connections.
  for (const client of Object.values(clients)) await round(client);
  const us: Record<string, number[]> = { sdk: [], kit: [] };
  for (let r = 0; r < flags.rounds; r++) {
    const order = r % 2 === 0 ? ["sdk", "kit"] : ["kit", "sdk"];
    for (const name of order) us[name]?.push(await round(clients[name] as FacilitatorClient));
    process.stderr.write(
      `round ${r + 1}: sdk ${us.sdk?.at(-1)?.toFixed(0)} µs, kit ${us.kit?.at(-1)?.toFixed(0)} µs a payment\n`,
    );
  }
  const sdk = median(us.sdk ?? []);
  const kit = median(us.kit ?? []);
  process.stderr.write(
    `median: sdk ${sdk.toFixed(0)} µs, kit ${kit.toFixed(0)} µs a payment: kit / sdk ${(kit / sdk).toFixed(2)}\n`,
  );
  console.log(
    JSON.stringify({
      bench: "facilitator-client",
      date: new Date().toISOString(),
      load,
      flags,
      us,
      medianUs: { sdk, kit },
    }),
  );
} finally {
  child.stdin?.end();
}
