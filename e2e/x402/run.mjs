/**
 * Runs x402-merchants under the official x402 e2e harness (github.com/coinbase/x402, `e2e/`), as the
 * facilitator or as a server, whichever `type` the test.config.json beside this file names; a server is
 * the merchant its `merchant` names (`utility`, the default, `inference` or `social`). The harness passes its
 * settings in its own variables and waits for its own ready line; this maps both onto the CLI. How to run
 * the suite: docs/e2e.md.
 *
 * The harness's variables changed between its versions: the suite at coinbase/x402 `dd927a26` gives a
 * facilitator `EVM_PRIVATE_KEY` and a server `EVM_PAYEE_ADDRESS`; the catalog-driven suite of
 * x402-foundation/x402 forwards the role's own keys, `FACILITATOR_EVM_PRIVATE_KEY` and `SERVER_EVM_ADDRESS`.
 * Either is taken, the older first.
 *
 * The harness's clients send GET without a body, and the inference API's chat routes are POST with a JSON
 * chat request. For `inference`, the merchant listens on a free loopback port and this process listens on
 * the harness's: a GET under /v1/chat/completions goes on as a POST with a short fixed chat request, its
 * headers (the payment's among them) untouched; every other request, and every answer (402s, payment
 * headers), passes through as it is. The merchant's public URL is this process's, so the 402's resource
 * is the URL the client asked for.
 *
 * For `social`, the social-data API's default provider is the archive in the data directory, which starts
 * empty: a small synthetic X (`social generate`, a fixed seed, so every run searches the same corpus) is
 * imported into it before the merchant starts.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const config = JSON.parse(fs.readFileSync(path.join(here, "test.config.json"), "utf8"));
const role = config.type;
const merchant = config.merchant ?? "utility";
const env = process.env;
const home = env.X402M_HOME;
if (!home || !fs.existsSync(path.join(home, "bin", "x402-merchants"))) {
  console.error("set X402M_HOME to an x402-merchants checkout (with npm install done)");
  process.exit(1);
}
if (role !== "server" && role !== "facilitator") {
  console.error(`test.config.json's type must be "server" or "facilitator", not ${JSON.stringify(role)}`);
  process.exit(1);
}
if (!["utility", "inference", "social"].includes(merchant)) {
  console.error(
    `test.config.json's merchant must be "utility", "inference" or "social", not ${JSON.stringify(merchant)}`,
  );
  process.exit(1);
}
const payee = env.EVM_PAYEE_ADDRESS || env.SERVER_EVM_ADDRESS;
const facilitatorKey = env.EVM_PRIVATE_KEY || env.FACILITATOR_EVM_PRIVATE_KEY;
const given = { PORT: env.PORT, EVM_RPC_URL: env.EVM_RPC_URL };
if (role === "server") {
  given["EVM_PAYEE_ADDRESS (or SERVER_EVM_ADDRESS)"] = payee;
  given.FACILITATOR_URL = env.FACILITATOR_URL;
} else {
  given["EVM_PRIVATE_KEY (or FACILITATOR_EVM_PRIVATE_KEY)"] = facilitatorKey;
}
for (const [name, value] of Object.entries(given)) {
  if (!value) {
    console.error(`the harness did not set ${name}`);
    process.exit(1);
  }
}

/** A port free on 127.0.0.1 now, for the merchant behind the GET bridge. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const CHAT_PREFIX = "/v1/chat/completions";
const CHAT_REQUEST = JSON.stringify({
  messages: [{ role: "user", content: "Say hello to the x402 e2e suite." }],
  max_tokens: 32,
});

/** The GET bridge in front of the inference merchant (see the top of this file). */
function bridge(listenPort, merchantPort) {
  const server = http.createServer((req, res) => {
    const chat = req.method === "GET" && (req.url ?? "").split("?")[0].startsWith(CHAT_PREFIX);
    const headers = { ...req.headers, host: `127.0.0.1:${merchantPort}` };
    if (chat) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(CHAT_REQUEST));
    }
    const upstream = http.request(
      { host: "127.0.0.1", port: merchantPort, method: chat ? "POST" : req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `the inference merchant did not answer: ${error.message}` }));
    });
    if (chat) upstream.end(CHAT_REQUEST);
    else req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(listenPort, "127.0.0.1", () => resolve(server)));
}

// A fresh data directory, and PGlite in it: a shared DATABASE_URL would carry ledgers between runs.
// A facilitator with API keys (made beforehand by `facilitator keys add --data DIR`) needs its own directory:
// X402M_E2E_FACILITATOR_DATA names it, and it is kept.
const kept = role === "facilitator" ? env.X402M_E2E_FACILITATOR_DATA : undefined;
if (kept) fs.mkdirSync(kept, { recursive: true });
const data = kept || fs.mkdtempSync(path.join(os.tmpdir(), `x402m-e2e-${role}-`));
function removeData() {
  if (!kept) fs.rmSync(data, { recursive: true, force: true });
}
const { DATABASE_URL: _shared, ...base } = env;
const cli = path.join(home, "bin", "x402-merchants");

/** Runs the CLI to its end, its stdout to `out` (a file descriptor); false if it failed. */
function runCli(args, out) {
  const run = spawnSync(process.execPath, [cli, ...args], { env: base, stdio: ["ignore", out, "inherit"] });
  return run.status === 0;
}

if (role === "server" && merchant === "social") {
  // 300 tweets, seed 1: enough for the config's searches to find something, and quick to import.
  const corpus = path.join(data, "corpus.jsonl");
  const file = fs.openSync(corpus, "w");
  const made = runCli(["social", "generate", "--tweets", "300", "--seed", "1"], file);
  fs.closeSync(file);
  // The import's summary goes to stderr: stdout is where the harness looks for the ready line.
  if (!made || !runCli(["social", "import", corpus, "--data", data], 2)) {
    removeData();
    console.error("could not fill the social-data API's archive");
    process.exit(1);
  }
}
const merchantPort = merchant === "inference" ? await freePort() : Number(env.PORT);
const prefix = `X402M_${merchant.toUpperCase()}_`;
const [args, childEnv, readyLine] =
  role === "server"
    ? [
        ["serve", "--only", merchant],
        {
          ...base,
          [`${prefix}PORT`]: String(merchantPort),
          [`${prefix}PAY_TO`]: payee,
          [`${prefix}URL`]: `http://localhost:${env.PORT}`,
          X402M_FACILITATOR_URL: env.FACILITATOR_URL,
          X402M_NETWORK: env.EVM_NETWORK || "eip155:8453",
          X402M_RPC_URL: env.EVM_RPC_URL,
          // The suite pays for answers, not for a model: the inference API answers on its offline engine.
          ...(merchant === "inference" && { X402M_INFERENCE_ENGINE: "offline" }),
        },
        "Server listening",
      ]
    : [
        ["facilitator", "--rpc", env.EVM_RPC_URL, "--port", env.PORT],
        { ...base, X402M_FACILITATOR_KEY: facilitatorKey },
        "Facilitator listening",
      ];

const child = spawn(process.execPath, [cli, ...args, "--data", data], {
  env: childEnv,
  stdio: ["ignore", "pipe", "inherit"],
});
// The CLI's ready line is its first JSON line on stdout; the harness's follows once the bridge listens.
let out = "";
let ready = false;
child.stdout.on("data", async (chunk) => {
  process.stdout.write(chunk);
  if (ready) return;
  out += chunk.toString();
  const lines = out.split("\n").slice(0, -1);
  if (lines.some((line) => line.startsWith("{"))) {
    ready = true;
    if (merchantPort !== Number(env.PORT)) await bridge(Number(env.PORT), merchantPort);
    process.stdout.write(`${readyLine} on port ${env.PORT}\n`);
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  removeData();
  process.exit(code ?? (signal ? 1 : 0));
});
