import { parseArgs } from "node:util";
import { UsageError } from "../common/errors.ts";
import { type Command, commandsOf, type Group, isCommand, lookup } from "./commands.ts";
import { FLAGS, type FlagName, type Flags, flagOf } from "./flags.ts";

export { UsageError };

/** The flags taken before a command (or instead of one); --help also after any command. */
const GLOBAL = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** What a command line asks for. */
export type CommandLine =
  | { kind: "run"; command: Command; args: string[]; values: Flags; positionals: string[] }
  /** Help on a command or a group of them; the whole program's without one. */
  | { kind: "help"; topic?: Command | Group }
  | { kind: "version" }
  /** No command at all: the whole program's help, and exit 2. */
  | { kind: "nothing" };

/**
 * Reads a command line: which command, and its flags, parsed with that command's flags alone. A flag the
 * command does not take, a flag without its value, a value given to a switch: a UsageError naming the flag
 * and the command. `--help` anywhere after a command asks for that command's help, whatever else is there.
 */
export function readCommandLine(argv: string[]): CommandLine {
  // The command's words first: parsed with every command's flags, so that a flag's value (--data DIR) is not
  // taken for a word, wherever the flags stand.
  const all = tokensOf(argv, { ...flagOptions(Object.keys(FLAGS) as FlagName[]), ...GLOBAL });
  const words = all.filter((t) => t.kind === "positional").map((t) => t.value);
  const options = all.filter((t) => t.kind === "option");
  if (words[0] === "help") return help(words.slice(1));
  if (words.length === 0) {
    const [first] = options;
    if (first === undefined) return { kind: "nothing" };
    if (first.name === "help") return { kind: "help" };
    if (first.name === "version") return { kind: "version" };
    throw new UsageError(
      Object.hasOwn(FLAGS, first.name)
        ? `${first.rawName} goes after the command that takes it (x402-merchants --help)`
        : `unknown flag ${first.rawName} (x402-merchants --help)`,
    );
  }
  const match = lookup(words);
  if (!match) throw new UsageError(`unknown command "${words[0]}" (x402-merchants --help)`);
  const { found } = match;
  const wantsHelp = options.some((t) => t.name === "help");
  if (!isCommand(found)) {
    if (wantsHelp) return { kind: "help", topic: found };
    const subs = commandsOf(found).map((c) => c.name.slice(found.name.length + 1));
    throw new UsageError(
      `usage: x402-merchants ${found.name} ${subs.join("|")} (x402-merchants ${found.name} --help)`,
    );
  }
  if (wantsHelp) return { kind: "help", topic: found };
  const { values, positionals } = parseFor(found, argv);
  return { kind: "run", command: found, args: positionals.slice(1), values, positionals };
}

/**
 * `argv` parsed as a command's: its flags and every word, the command's own included. Refuses what
 * readCommandLine refuses, and a line that names no command.
 */
export function parseCommandLine(argv: string[]): { values: Flags; positionals: string[] } {
  const line = readCommandLine(argv);
  if (line.kind !== "run") throw new UsageError("no command to run (x402-merchants --help)");
  return line;
}

function help(words: string[]): CommandLine {
  if (words.length === 0) return { kind: "help" };
  const match = lookup(words);
  if (!match || match.words < words.length) {
    throw new UsageError(`no command "${words.join(" ")}" (x402-merchants --help)`);
  }
  return { kind: "help", topic: match.found };
}

function parseFor(command: Command, argv: string[]): { values: Flags; positionals: string[] } {
  const names = Object.keys(command.flags) as FlagName[];
  // --version among them only to be named when refused: -v is not an unknown flag.
  const options = { ...flagOptions(names), ...GLOBAL };
  const helpHint = `(x402-merchants ${command.name} --help)`;
  // Read leniently first, to say what is wrong in our words and name the command.
  for (const token of tokensOf(argv, options)) {
    if (token.kind !== "option") continue;
    const name = token.name as FlagName;
    const flag = Object.hasOwn(command.flags, name) ? flagOf(name) : undefined;
    if (flag === undefined) {
      const why = command.refuses?.[name];
      throw new UsageError(
        Object.hasOwn(FLAGS, name) || Object.hasOwn(GLOBAL, name)
          ? `${command.name} does not take ${token.rawName}${why ? `: ${why}` : ""} ${helpHint}`
          : `unknown flag ${token.rawName} for ${command.name} ${helpHint}`,
      );
    }
    const form = `${command.name} ${token.rawName}${flag.type === "string" ? ` ${flag.value}` : ""}`;
    if (flag.type === "boolean" && token.inlineValue) {
      throw new UsageError(`${token.rawName} takes no value: ${form} ${helpHint}`);
    }
    // A value that looks like a flag is most likely the next flag, the value forgotten.
    const dashed = !token.inlineValue && token.value !== undefined && /^-./.test(token.value);
    if (flag.type === "string" && (token.value === undefined || dashed)) {
      throw new UsageError(`${token.rawName} needs a value: ${form} ${helpHint}`);
    }
    // Every string flag names something (a directory, a merchant, a URL, a number): an empty one (a shell
    // variable that was not set) would otherwise read as the flag not given, `--merchant ""` as every
    // merchant, `--data ""` as the working directory.
    if (flag.type === "string" && token.value?.trim() === "") {
      throw new UsageError(`${token.rawName} is empty: ${form} ${helpHint}`);
    }
  }
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as Flags, positionals };
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]} ${helpHint}`);
  }
}

type Options = Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

function flagOptions(names: readonly FlagName[]): Options {
  const options: Options = {};
  for (const name of names) {
    const { type, multiple } = flagOf(name);
    options[name] = multiple ? { type, multiple } : { type };
  }
  return options;
}

function tokensOf(argv: string[], options: Options) {
  return parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true }).tokens;
}
