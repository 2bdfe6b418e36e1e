/**
 * Runs x402-merchants under the official x402 e2e harness (github.com/coinbase/x402, `e2e/`), as the
 * facilitator or as a server, whichever `type` the test.config.json beside this file names. The harness
 * passes its settings in its own variables and waits for its own ready line; this maps both onto the
 * CLI. How to run the suite: docs/e2e.md.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const role = JSON.parse(fs.readFileSync(path.join(here, "test.config.json"), "utf8")).type;
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
const needed = role === "server" ? ["EVM_PAYEE_ADDRESS", "FACILITATOR_URL"] : ["EVM_PRIVATE_KEY"];
for (const name of ["PORT", "EVM_RPC_URL", ...needed]) {
  if (!env[name]) {
    console.error(`the harness did not set ${name}`);
    process.exit(1);
  }
}

// A fresh data directory, and PGlite in it: a shared DATABASE_URL would carry ledgers between runs.
const data = fs.mkdtempSync(path.join(os.tmpdir(), `x402m-e2e-${role}-`));
const { DATABASE_URL: _shared, ...base } = env;
const [args, childEnv, readyLine] =
  role === "server"
    ? [
        ["serve", "--only", "utility"],
        {
          ...base,
          X402M_UTILITY_PORT: env.PORT,
          X402M_UTILITY_PAY_TO: env.EVM_PAYEE_ADDRESS,
          X402M_UTILITY_URL: `http://localhost:${env.PORT}`,
          X402M_FACILITATOR_URL: env.FACILITATOR_URL,
          X402M_NETWORK: env.EVM_NETWORK || "eip155:8453",
          X402M_RPC_URL: env.EVM_RPC_URL,
        },
        "Server listening",
      ]
    : [
        ["facilitator", "--rpc", env.EVM_RPC_URL, "--port", env.PORT],
        { ...base, X402M_FACILITATOR_KEY: env.EVM_PRIVATE_KEY },
        "Facilitator listening",
      ];

const child = spawn(process.execPath, [path.join(home, "bin", "x402-merchants"), ...args, "--data", data], {
  env: childEnv,
  stdio: ["ignore", "pipe", "inherit"],
});
// The CLI's ready line is its first JSON line on stdout.
let out = "";
let ready = false;
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  if (ready) return;
  out += chunk.toString();
  const lines = out.split("\n").slice(0, -1);
  if (lines.some((line) => line.startsWith("{"))) {
    ready = true;
    process.stdout.write(`${readyLine} on port ${env.PORT}\n`);
  }
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => {
  fs.rmSync(data, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
