import { COMMANDS, type Command, commandsOf, type Group, isCommand } from "./commands.ts";
import { DEFAULT_WAIT_SECONDS, type FlagName, flagOf } from "./flags.ts";

/** Help lines are wrapped to this width. */
const WIDTH = 110;

const READERS = `Readers beside a process that holds the analytics database (DuckDB allows one): report, leaderboard, publish, mcp and simulate --check ask the running serve or demo over HTTP (it records itself in DIR/report-service.json) and print the same; beside another command (a report, index) they wait up to --wait SECONDS (default ${DEFAULT_WAIT_SECONDS}) for it, then exit 1 naming it. To read while indexing, run serve --rpc URL instead of index --follow.`;

const ENVIRONMENT = `Environment: X402M_DATA (default ./data), X402M_PUBLIC_URL, PORT, X402M_HOST, X402M_DUCKDB_MEMORY (default 1GB), DATABASE_URL, X402M_FACILITATOR_URL (default http://127.0.0.1:8403), X402M_FACILITATOR_PAYEES, X402M_FACILITATOR_KEY or X402M_FACILITATOR_KEY_FILE, X402M_NETWORK (default eip155:8453; several, comma-separated), X402M_ASSET, X402M_ASSET_NAME, X402M_ASSET_VERSION, X402M_ASSET_DECIMALS (default Base USDC), X402M_UTILITY_PAY_TO, X402M_UTILITY_URL, X402M_UTILITY_PORT (default 8404), X402M_UTILITY_ALIAS_PAY_TO (default the utility's), X402M_UTILITY_ALIAS_URL, X402M_UTILITY_ALIAS_PORT (default 8405), X402M_INFERENCE_PAY_TO, X402M_INFERENCE_URL, X402M_INFERENCE_PORT (default 8407), X402M_SOCIAL_PAY_TO, X402M_SOCIAL_URL, X402M_SOCIAL_PORT (default 8408), X402M_SOCIAL_PROXY_PAY_TO (default the social's), X402M_SOCIAL_PROXY_URL, X402M_SOCIAL_PROXY_PORT (default 8409), X402M_SOCIAL_PROVIDER (archive, x-web, twitterapi), X402M_METRICS_PORT (default 9464; 0 any free port; off none), X402M_METRICS_HOST (default 127.0.0.1), X402M_METRICS_TOKEN, X402M_LOG_LEVEL (default info): every one, with the others, is in docs/operations.md.`;

const EXIT_CODES =
  "Exit codes: 0 done; 2 a usage mistake (command, arguments, flags or settings: nothing was attempted); 1 any other failure. Either way stderr says why in one line.";

/** `x402-merchants --help`: every command in a line, then what they share. */
export function programHelp(): string {
  const rows = COMMANDS.map((c) => [synopsis(c), c.summary] as const);
  return [
    "x402-merchants: honest weekly x402 payment reports for merchant wallets on Base",
    "",
    "Usage: x402-merchants COMMAND [ARGUMENTS] [FLAGS]",
    ...table([
      ["x402-merchants COMMAND --help", "the command's usage and every flag it takes (also: help COMMAND)"],
      ["x402-merchants --version", "the version (also: -v)"],
    ]),
    "",
    "Commands:",
    ...table(rows),
    "",
    ...hanging(READERS),
    "",
    ...hanging(ENVIRONMENT),
    "",
    ...hanging(EXIT_CODES),
  ].join("\n");
}

/** A command in the program's list: its name and arguments, and the flags it needs when they are short. */
function synopsis(command: Command): string {
  const full = [command.name, command.args, command.needs].filter(Boolean).join(" ");
  return full.length <= 28 ? full : [command.name, command.args].filter(Boolean).join(" ");
}

/** `x402-merchants COMMAND --help`: its usage and exactly the flags it takes. */
export function commandHelp(command: Command): string {
  const flags = Object.entries(command.flags) as [FlagName, string][];
  const rows = flags.map(([name, what]) => [shown(name), what] as const);
  return [
    ...hanging(`x402-merchants ${command.name}: ${command.summary}`),
    "",
    ...hanging(usage(command), " ".repeat("Usage: ".length)),
    ...(command.notes ? ["", ...hanging(command.notes, "")] : []),
    "",
    "Flags:",
    ...table([...rows, ["-h, --help", "this help"]]),
  ].join("\n");
}

/** `x402-merchants social --help`: its sub-commands. */
export function groupHelp(group: Group): string {
  const subs = commandsOf(group);
  return [
    ...hanging(`x402-merchants ${group.name}: ${group.summary}`),
    "",
    "Commands:",
    ...table(subs.map((c) => [synopsis(c), c.summary])),
    "",
    `Each one's usage and flags: x402-merchants ${group.name} COMMAND --help`,
  ].join("\n");
}

export function helpOf(topic: Command | Group | undefined): string {
  if (topic === undefined) return programHelp();
  return isCommand(topic) ? commandHelp(topic) : groupHelp(topic);
}

/**
 * `Usage: x402-merchants NAME ARGS NEEDS [--flag VALUE]...`: every flag it takes, the optional ones in
 * brackets, as words for `hanging` (a bracketed flag and its value are one).
 */
function usage(command: Command): string[] {
  const needed = new Set(command.needs?.match(/--[a-z-]+/g) ?? []);
  const optional = (Object.keys(command.flags) as FlagName[])
    .filter((name) => !needed.has(`--${name}`))
    .map((name) => `[${shown(name)}]${flagOf(name).multiple ? "..." : ""}`);
  const words = ["Usage:", "x402-merchants", command.name, command.args, command.needs].filter(
    (w): w is string => w !== undefined,
  );
  return [...words.flatMap((w) => w.split(" ")), ...optional];
}

/** A flag as it is written with its value: `--data DIR`, `--json`. */
function shown(name: FlagName): string {
  const flag = flagOf(name);
  return flag.type === "string" ? `--${name} ${flag.value}` : `--${name}`;
}

/** Two columns: the left padded to its widest entry (up to a limit), the right wrapped beside it. */
function table(rows: readonly (readonly [string, string])[]): string[] {
  const column = Math.min(Math.max(...rows.map(([left]) => left.length)), 30) + 4;
  const pad = " ".repeat(column);
  return rows.flatMap(([left, right]) => {
    const lines = wrap(right, WIDTH - column).map((line) => pad + line);
    const first = `  ${left}`;
    // A left entry too wide for its column gets a line of its own.
    if (first.length >= column - 1) return [first, ...lines];
    return [first.padEnd(column) + (lines[0] ?? "").slice(column), ...lines.slice(1)];
  });
}

/** A paragraph wrapped to the width, its lines after the first indented by `indent`. */
function hanging(text: string | string[], indent = "  "): string[] {
  return wrap(text, WIDTH - indent.length).map((line, i) => (i === 0 ? line : indent + line));
}

/** `text` in lines of at most `width` characters, broken between words (at spaces, or as given). */
function wrap(text: string | string[], width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of typeof text === "string" ? text.split(" ") : text) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  return line === "" ? lines : [...lines, line];
}
