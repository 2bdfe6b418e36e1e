/**
 * `x402-merchants mcp`: the report tools (src/reports/serve/mcp.ts) over stdio, for an MCP client that starts
 * its servers as commands. Stdout carries MCP's JSON-RPC and nothing else: the log is on stderr already,
 * and console output of the libraries is sent there too.
 *
 * The store is opened for each call and closed after it, as `report` does (src/cli/readers.ts): a client
 * keeps this process for hours, and holding the store that long would stop `serve` or the demo from
 * starting on it. While one of them holds it, each call asks its report service instead.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { UsageError } from "../common/errors.ts";
import { type ReportAnswers, reportMcpServer } from "../reports/index.ts";
import { configFrom, parseWaitMs } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { type Reader, withReader } from "./readers.ts";
import { quietSdkLogs } from "./sdk-logs.ts";

export async function runMcp(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("mcp takes no arguments");
  // Settings and flags are checked before the client is answered: a mistake is one line and exit 2.
  configFrom(flags);
  parseWaitMs(flags.wait, 0);
  quietSdkLogs();
  const calls = oneAtATime();
  const ask = <T>(read: (reader: Reader) => Promise<T>) => calls(() => withReader(flags, read));
  // Each call opens the store (or asks the service) for itself, then reads the chain the tool names.
  const answers = (chain: string): ReportAnswers => {
    const on = (reader: Reader) => reader.onChain(chain);
    return {
      report: (address, endBlock) => ask((reader) => on(reader).report(address, endBlock)),
      evidence: (address, endBlock) => ask((reader) => on(reader).evidence(address, endBlock)),
      leaderboard: (endBlock, page) => ask((reader) => on(reader).leaderboard(endBlock, page)),
      search: (query, endBlock) => ask((reader) => on(reader).search(query, endBlock)),
      flags: (endBlock, page, merchant) => ask((reader) => on(reader).flags(endBlock, page, merchant)),
      wallet: (address) => ask((reader) => on(reader).wallet(address)),
      weeks: () => ask((reader) => on(reader).weeks()),
    };
  };
  const server = reportMcpServer(answers);
  const transport = new StdioServerTransport();
  // The client ends the session by closing our stdin (MCP's stdio transport), or stops us with a signal.
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.connect(transport);
  await ended;
  // The call under way finishes, so that a store it opened is closed whole.
  await calls(async () => undefined);
  await server.close();
  return 0;
}

/**
 * Runs the calls given to it one after another: each opens the store for itself, and two at once in one
 * process would wait on each other's lock.
 */
function oneAtATime() {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => undefined);
    return next;
  };
}
