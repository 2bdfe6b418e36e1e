import { chainBySlug } from "../chain/chains.ts";
import { UsageError } from "../common/errors.ts";
import { untilSignal } from "../common/lifecycle.ts";
import { setLogLevel } from "../common/log.ts";
import { MCP_PATH } from "../common/mcp/http.ts";
import { loadMix, MixError } from "../demo/mix.ts";
import { SLOTS_PER_WEEK } from "../demo/plan-types.ts";
import { prepareStart } from "../demo/resume.ts";
import type { Demo, DemoEvent } from "../demo/world.ts";
import { configFrom } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { quietSdkLogs } from "./sdk-logs.ts";

/**
 * `demo` (and `npm start`): the whole service on a local devnet with the buyer simulator. Progress goes
 * to stderr; when the simulated week is on chain and indexed, the URLs go to stdout (one JSON line with
 * `--json`). Runs until SIGINT/SIGTERM, then stops every part and saves the chain. A data directory holding
 * part of a week, or a damaged one, stops it with the file to restore; `--fresh` deletes the week and starts
 * anew (src/demo/resume.ts).
 */
export async function runDemo(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("demo takes no arguments");
  const scale = flags.scale === undefined ? 1 : Number(flags.scale);
  if (flags.scale !== undefined && !/^\d+(\.\d+)?$/.test(flags.scale)) {
    throw new UsageError(`--scale must be a number such as 0.5, not "${flags.scale}"`);
  }
  if (flags.days !== undefined && !/^[1-7]$/.test(flags.days)) {
    throw new UsageError(`--days must be a whole number of days from 1 to 7, not "${flags.days}"`);
  }
  const days = flags.days === undefined ? undefined : Number(flags.days);
  const chains = demoChains(flags.chain);
  let mix: ReturnType<typeof loadMix>;
  try {
    mix = loadMix(flags.mix, scale);
  } catch (error) {
    if (error instanceof MixError) throw new UsageError(error.message);
    throw error;
  }
  // Loaded on demand like the rest of the demo; a mistake in the flag stops it before anything starts.
  const fundingLookback = (await import("./indexer.ts")).fundingLookbackFrom(flags);
  const config = configFrom(flags);
  // The simulator's thousands of requests would bury the progress line: a request's line is for an
  // operator who asks for it (X402M_LOG_LEVEL=info).
  if (!config.logLevel) setLogLevel("warn");
  const fresh = flags.fresh === true;
  // Decided before the demo's modules load (seconds of them), so a refusal comes at once; startDemo
  // decides again, for callers that start it themselves.
  await prepareStart(config.dataDir, { fresh });
  const { startDemo } = await import("../demo/world.ts");
  // Stdout is for the ready line; the progress line already counts the settlements the SDK would log.
  quietSdkLogs();
  const progress = createProgress(process.stderr);
  const stopped = untilSignal();
  const demo = await startDemo({
    config,
    mix,
    fresh,
    fundingLookback,
    days,
    chains,
    onEvent: progress.onEvent,
  });
  try {
    const first = await Promise.race([demo.ready.then(() => "ready" as const), stopped, demo.failed]);
    if (first === "ready") {
      progress.pause();
      process.stdout.write(
        flags.json ? `${JSON.stringify(readyLine(demo))}\n` : readyText(demo, config.dataDir),
      );
      await Promise.race([stopped, demo.failed]);
    }
  } finally {
    progress.stop();
    process.stderr.write("x402-merchants: stopping the demo (saving the chain)...\n");
    await demo.stop();
  }
  return 0;
}

/**
 * `--chain base` (Base alone), `base,arbitrum`, `base,solana` or `base,arbitrum,solana`: the chains beside Base
 * a fresh week plays; unset, the demo's default (every one it knows).
 */
function demoChains(flag: string | undefined): string[] | undefined {
  if (flag === undefined) return undefined;
  const list = flag
    .split(",")
    .map((slug) => slug.trim())
    .filter(Boolean);
  if (!list.includes("base")) {
    throw new UsageError(
      `--chain must list base, which the demo always plays (base, or base,arbitrum,solana), not "${flag}"`,
    );
  }
  return list.filter((slug) => slug !== "base");
}

function readyLine(demo: Demo) {
  return { ready: true, resumed: demo.resumed, ...demo.urls, mcp: mcpUrl(demo), merchants: demo.merchants };
}

/** The report service's MCP endpoint; every merchant host answers at the same path with its own tools. */
function mcpUrl(demo: Demo): string {
  return new URL(MCP_PATH, demo.urls.leaderboard).href;
}

const chainName = (slug: string) => chainBySlug(slug).name;

function readyText(demo: Demo, dataDir: string): string {
  const width = Math.max(...demo.merchants.map((m) => m.name.length));
  const lines = [
    "",
    `x402-merchants demo: a week of x402 payments on a local Base chain${(demo.urls.chains ?? []).map((c) => ` and ${chainName(c.chain)}`).join("")}${demo.urls.solana ? " and Solana" : ""}${demo.resumed ? " (resumed)" : ""}`,
    "",
    `  leaderboard   ${demo.urls.leaderboard}`,
    `  chain         ${demo.urls.rpc}  (anvil, chain id 8453, USDC at Base's address)`,
    ...(demo.urls.chains ?? []).flatMap((c) => [
      `  ${c.chain.padEnd(12)}  ${c.rpc}  (anvil, chain id ${c.chain_id}, its USDC; blocks as payments come)`,
      `    leaderboard ${c.leaderboard}`,
    ]),
    ...(demo.urls.solana
      ? [
          `  solana        ${demo.urls.solana.rpc}  (litesvm in process, USDC at mainnet's mint; its week played once)`,
          `    leaderboard ${demo.urls.solana.leaderboard}`,
        ]
      : []),
    ...(demo.urls.leaderboard_all
      ? [
          `  all chains    ${demo.urls.leaderboard_all}  (each merchant's chains side by side: /merchants/<address>)`,
        ]
      : []),
    `  facilitator   ${demo.urls.facilitator}`,
    `  shops         ${demo.urls.shops}`,
    `  paid proxy    ${demo.urls.merchants["social-proxy"]}/docs  (/pay/<agent_id>: the social-data API's user lookup)`,
    `  mcp           ${mcpUrl(demo)}  (report tools; each merchant host's paid tools at its own ${MCP_PATH}; stdio: x402-merchants mcp)`,
    ...(demo.urls.metrics ? [`  metrics       ${demo.urls.metrics}  (Prometheus)`] : []),
    "",
    "  merchants: report page, API reference",
    ...demo.merchants.map((m) => `    ${m.name.padEnd(width)}  ${m.report}  ${m.api}`),
    "",
    `  data in ${dataDir} (a second start resumes); ground truth: x402-merchants simulate --check`,
    "  Ctrl-C stops.",
    "",
  ];
  return `${lines.join("\n")}\n`;
}

/** Progress on stderr: a line that rewrites itself on a terminal, a JSON line a second otherwise. */
function createProgress(stream: NodeJS.WriteStream) {
  const tty = stream.isTTY === true;
  const state = { slot: 0, slots: SLOTS_PER_WEEK, payments: 0, failures: 0, indexed: 0, live: false };
  /** Payments settled on each chain played beside Base. */
  const further: Record<string, number> = {};
  let paused = false;
  let last = 0;
  let failuresShown = 0;
  const render = (force = false) => {
    if (paused) return;
    const now = Date.now();
    if (!force && now - last < 1_000) return;
    last = now;
    const days = ((state.slot + 1) / (SLOTS_PER_WEEK / 7)).toFixed(1);
    if (tty) {
      const phase = state.live ? "live" : `simulating day ${days} of ${(state.slots / 48).toFixed(1)}`;
      const others = Object.entries(further).map(([chain, n]) => ` · ${chain} ${n}`);
      stream.write(
        `\r\x1b[2K${phase} · ${state.payments} payments settled${state.failures ? ` (${state.failures} failed)` : ""}${others.join("")} · indexed to block ${state.indexed}`,
      );
    } else {
      const others = Object.keys(further).length > 0 ? { chains: further } : {};
      stream.write(`${JSON.stringify({ level: "info", msg: "demo", ...state, ...others })}\n`);
    }
  };
  const line = (text: string) => {
    if (tty) stream.write("\r\x1b[2K");
    stream.write(`${text}\n`);
  };
  return {
    onEvent(event: DemoEvent) {
      switch (event.type) {
        case "started":
          state.slot = event.slot;
          state.slots = Math.max(event.slots, 1);
          line(
            `x402-merchants demo: ${event.resumed ? "resuming" : "starting"}; leaderboard at ${event.urls.leaderboard} (fills as the week is played)`,
          );
          break;
        case "note":
          line(`x402-merchants demo: ${event.message}`);
          break;
        case "simulator": {
          const e = event.event;
          const on = event.chain ? ` on ${event.chain}` : "";
          if (e.type === "payment_failed") {
            // The first few, so a broken endpoint shows; the count covers the rest.
            if (failuresShown++ < 5)
              line(`payment failed${on}: ${e.merchant} ${e.path}: ${e.status} ${e.reason}`);
            return;
          }
          if (event.chain) {
            further[event.chain] = e.payments;
            render();
            return;
          }
          state.slot = e.slot;
          state.payments = e.payments;
          state.failures = e.failures;
          if (e.type === "caught_up") state.live = true;
          render(e.type === "caught_up");
          break;
        }
        case "indexer": {
          const e = event.event;
          if (event.chain) {
            if (e.type === "reorg" || e.type === "listings_failed" || e.type === "rpc_state")
              line(`indexer (${event.chain}): ${JSON.stringify(e)}`);
            return;
          }
          if (e.type === "batch") state.indexed = e.to;
          else if (e.type === "caught_up") state.indexed = e.block;
          else if (e.type === "reorg" || e.type === "listings_failed" || e.type === "rpc_state")
            line(`indexer: ${JSON.stringify(e)}`);
          render();
          break;
        }
      }
    },
    pause() {
      if (tty && !paused) stream.write("\r\x1b[2K");
      paused = true;
    },
    stop() {
      if (tty && !paused) stream.write("\n");
      paused = true;
    },
  };
}
