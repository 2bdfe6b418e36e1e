import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_BACKGROUND_TPS } from "../../src/chain/devnet/index.ts";
import { parseCommandLine, readCommandLine, UsageError } from "../../src/cli/args.ts";
import { COMMANDS, type Command, GROUPS } from "../../src/cli/commands.ts";
import { DEFAULT_DEVNET_BUYERS } from "../../src/cli/devnet.ts";
import { DEFAULT_RATE_PER_MINUTE } from "../../src/cli/facilitator-keys.ts";
import { FLAGS, type FlagName, flagOf } from "../../src/cli/flags.ts";
import { DEFAULT_RPS } from "../../src/cli/indexer.ts";
import { MERCHANT_HOSTS, merchantEnvPrefix } from "../../src/config/ports.ts";
import {
  DEFAULT_BATCH_BLOCKS,
  DEFAULT_CONCURRENCY,
  DEFAULT_DISCOVERY_REFRESH_MS,
  DEFAULT_FUNDING_LOOKBACK,
  DEFAULT_FUNDING_LOOKBACK_WEEKS,
  DEFAULT_REORG_DEPTH,
  DEFAULT_REORG_SECONDS,
  DEFAULT_SENDER_STRATEGY,
} from "../../src/indexer/index.ts";
import { DEFAULT_BACKOFF } from "../../src/indexer/rpc/backoff.ts";
import { runMain } from "../helpers/in-process.ts";

const VERSION = (JSON.parse(fs.readFileSync("package.json", "utf8")) as { version: string }).version;
const ALL_FLAGS = Object.keys(FLAGS) as FlagName[];

/** The flags a help text lists in its "Flags:" section, by name. */
function listedFlags(help: string): string[] {
  const section = help.slice(help.indexOf("\nFlags:\n"));
  return [...section.matchAll(/^ {2}(?:-h, )?--([a-z-]+)/gm)].map((m) => m[1] as string).sort();
}

/** `--name` with a value when it takes one. */
const given = (name: FlagName) => (flagOf(name).type === "string" ? [`--${name}`, "1"] : [`--${name}`]);

const words = (command: Command) => command.name.split(" ");

describe("the command line's help", () => {
  it("names every command, a line each, and says how to get a command's own", async () => {
    const help = await runMain(["--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    for (const command of COMMANDS) {
      const line = help.stdout.split("\n").find((l) => l.startsWith(`  ${command.name} `));
      expect(line, command.name).toContain(command.summary);
    }
    expect(help.stdout).toContain("x402-merchants COMMAND --help");
    expect(help.stdout).toContain("Exit codes: 0 done; 2 a usage mistake");
    expect(help.stdout).toContain("X402M_FACILITATOR_KEY_FILE");
    // The same from `help` and `-h`; with nothing at all, the same text but exit 2: nothing was asked.
    expect(await runMain(["help"])).toEqual(help);
    expect(await runMain(["-h"])).toEqual(help);
    expect(await runMain([])).toEqual({ ...help, code: 2 });
  });

  it("of each command lists exactly the flags it takes: each is accepted, any other refused with exit 2", async () => {
    for (const command of COMMANDS) {
      const help = await runMain([...words(command), "--help"]);
      expect(help, command.name).toMatchObject({ code: 0, stderr: "" });
      // Its first line, however wrapped.
      const first = help.stdout.slice(0, help.stdout.indexOf("\n\n")).replaceAll("\n  ", " ");
      expect(first).toBe(`x402-merchants ${command.name}: ${command.summary}`);
      expect(await runMain(["help", ...words(command)])).toEqual(help);
      expect(await runMain([...words(command), "-h"])).toEqual(help);

      const takes = Object.keys(command.flags) as FlagName[];
      expect(listedFlags(help.stdout), command.name).toEqual([...takes, "help"].sort());
      // The usage names only flags it takes, and every one of them.
      const usage = help.stdout.slice(
        help.stdout.indexOf("Usage:"),
        help.stdout.indexOf("\n\n", 1 + help.stdout.indexOf("Usage:")),
      );
      expect(new Set(usage.match(/--[a-z-]+/g)), command.name).toEqual(new Set(takes.map((f) => `--${f}`)));

      for (const flag of ALL_FLAGS) {
        const argv = [...words(command), ...given(flag)];
        if (takes.includes(flag)) {
          const { values } = parseCommandLine(argv);
          const expected = flagOf(flag).type === "boolean" ? true : flagOf(flag).multiple ? ["1"] : "1";
          expect(values[flag], `${command.name} --${flag}`).toEqual(expected);
        } else {
          const why = command.refuses?.[flag];
          expect(await runMain(argv), `${command.name} --${flag}`).toEqual({
            code: 2,
            stdout: "",
            stderr: `x402-merchants: ${command.name} does not take --${flag}${why ? `: ${why}` : ""} (x402-merchants ${command.name} --help)\n`,
          });
        }
      }
    }
  });

  it("says what each flag does, with the defaults the code has", () => {
    for (const command of COMMANDS) {
      for (const [flag, what] of Object.entries(command.flags)) {
        expect(what.length, `${command.name} --${flag}`).toBeGreaterThan(10);
        // Where a flag may be given again, its line says so.
        if (flagOf(flag as FlagName).multiple) expect(what).toContain("repeatable");
      }
    }
    const said = (name: string, flag: FlagName) => COMMANDS.find((c) => c.name === name)?.flags[flag];
    const n = (value: number) => value.toLocaleString("en-US");
    for (const name of ["index", "serve"]) {
      expect(said(name, "rps")).toContain(`default ${DEFAULT_RPS};`);
      expect(said(name, "reorg-depth")).toContain(
        `default ${DEFAULT_REORG_SECONDS} s of blocks: ${DEFAULT_REORG_DEPTH} of 2 s`,
      );
      expect(said(name, "batch-blocks")).toContain(`default ${n(DEFAULT_BATCH_BLOCKS)})`);
      expect(said(name, "concurrency")).toContain(`default ${DEFAULT_CONCURRENCY})`);
      expect(said(name, "tx-from")).toContain(`default ${DEFAULT_SENDER_STRATEGY};`);
      expect(said(name, "funding-lookback")).toContain(
        `default ${DEFAULT_FUNDING_LOOKBACK_WEEKS} weeks of blocks: ${n(DEFAULT_FUNDING_LOOKBACK)} of 2 s`,
      );
      expect(said(name, "discovery-refresh")).toContain(`default ${n(DEFAULT_DISCOVERY_REFRESH_MS / 1000)})`);
      expect(said(name, "rpc-attempts")).toContain(`default ${DEFAULT_BACKOFF.attempts})`);
    }
    expect(said("devnet", "buyers")).toContain(`default ${DEFAULT_DEVNET_BUYERS})`);
    expect(said("devnet", "background-tps")).toContain(`0 to ${n(MAX_BACKGROUND_TPS)} (default 0;`);
    expect(said("facilitator keys add", "rate")).toContain(`(default ${DEFAULT_RATE_PER_MINUTE})`);
    expect(said("listings", "only")).toContain(Object.keys(MERCHANT_HOSTS).join(","));
  });

  it("of a group lists its commands and no other", async () => {
    for (const group of GROUPS) {
      const help = await runMain([...group.name.split(" "), "--help"]);
      expect(help, group.name).toMatchObject({ code: 0, stderr: "" });
      const listed = COMMANDS.filter((c) =>
        new RegExp(`^  ${c.name}(?: ${c.args ?? ""})?(?: {2,}|$)`, "m").test(help.stdout),
      ).map((c) => c.name);
      expect(listed).toEqual(COMMANDS.filter((c) => c.name.startsWith(`${group.name} `)).map((c) => c.name));
    }
    expect(await runMain(["social"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "x402-merchants: usage: x402-merchants social import|generate (x402-merchants social --help)\n",
    });
    expect((await runMain(["facilitator", "keys", "rotate"])).stderr).toBe(
      "x402-merchants: usage: x402-merchants facilitator keys add|list|revoke (x402-merchants facilitator keys --help)\n",
    );
  });

  it("of demo is also start's", async () => {
    expect(await runMain(["start", "--help"])).toEqual(await runMain(["demo", "--help"]));
  });
});

describe("the command line", () => {
  it("prints its version from package.json: --version, -v", async () => {
    for (const flag of ["--version", "-v"]) {
      expect(await runMain([flag])).toEqual({ code: 0, stdout: `x402-merchants ${VERSION}\n`, stderr: "" });
    }
    expect(await runMain(["report", "--version"])).toMatchObject({ code: 2, stdout: "" });
  });

  it("refuses a flag the command does not take, naming both, before anything runs", async () => {
    expect(await runMain(["listings", "--follow", "--scale", "3", "--evidence"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "x402-merchants: listings does not take --follow (x402-merchants listings --help)\n",
    });
    // --help wins over the rest: it is what was asked.
    expect((await runMain(["listings", "--follow", "--help"])).code).toBe(0);
  });

  it("refuses unknown flags, missing values, values for switches, and unknown commands in one line", async () => {
    const refusals: [string[], string][] = [
      [["report", "--bogus"], "unknown flag --bogus for report (x402-merchants report --help)"],
      [["report", "-x"], "unknown flag -x for report (x402-merchants report --help)"],
      [
        ["report", "0x12", "--data"],
        "--data needs a value: report --data DIR (x402-merchants report --help)",
      ],
      // The value forgotten, the next flag would be taken for it.
      [["check", "--data", "--json"], "--data needs a value: check --data DIR (x402-merchants check --help)"],
      [["check", "--json=yes"], "--json takes no value: check --json (x402-merchants check --help)"],
      // An empty value names nothing: not every merchant, not the working directory.
      [
        ["channels", "claim", "--merchant", ""],
        "--merchant is empty: channels claim --merchant NAME (x402-merchants channels claim --help)",
      ],
      [
        ["channels", "list", "--merchant= "],
        "--merchant is empty: channels list --merchant NAME (x402-merchants channels list --help)",
      ],
      [["report", "--data", ""], "--data is empty: report --data DIR (x402-merchants report --help)"],
      [["channels", "claim", "--merchant", ", ,"], '--merchant names no merchant: ", ,"'],
      [["frobnicate"], 'unknown command "frobnicate" (x402-merchants --help)'],
      [["help", "frobnicate"], 'no command "frobnicate" (x402-merchants --help)'],
      [["--bogus"], "unknown flag --bogus (x402-merchants --help)"],
      [["--data", "d"], "--data goes after the command that takes it (x402-merchants --help)"],
    ];
    for (const [argv, message] of refusals) {
      expect(await runMain(argv), argv.join(" ")).toEqual({
        code: 2,
        stdout: "",
        stderr: `x402-merchants: ${message}\n`,
      });
    }
  });

  it("hands a command its words and flags as before, wherever the flags stand", () => {
    const line = readCommandLine([
      "--data",
      "d",
      "facilitator",
      "keys",
      "--name",
      "n",
      "add",
      "--payee",
      "a",
    ]);
    expect(line).toMatchObject({
      kind: "run",
      command: { name: "facilitator keys add" },
      args: ["keys", "add"],
      values: { data: "d", name: "n", payee: ["a"] },
    });
    expect(parseCommandLine(["social", "import", "f.jsonl", "--data", "d"])).toMatchObject({
      positionals: ["social", "import", "f.jsonl"],
      values: { data: "d" },
    });
    const index = parseCommandLine([
      "index",
      "--rpc",
      "u",
      "--facilitator",
      "a",
      "--facilitator=b",
      "--follow",
    ]);
    expect(index.values).toEqual({ rpc: "u", facilitator: ["a", "b"], follow: true });
    expect(readCommandLine(["start", "--fresh"])).toMatchObject({ command: { name: "demo" }, args: [] });
    expect(() => parseCommandLine(["--help"])).toThrow(UsageError);
  });

  it("listings with no merchant's wallet set says which settings would give it one, exit 2", async () => {
    const hosts = Object.keys(MERCHANT_HOSTS);
    const unset = Object.fromEntries(hosts.map((h) => [`${merchantEnvPrefix(h)}PAY_TO`, ""]));
    const run = await runMain(["listings"], unset);
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(
      run.stderr.startsWith("x402-merchants: listings has no merchant to list: set a merchant's wallet"),
    ).toBe(true);
    for (const name of Object.keys(unset)) expect(run.stderr).toContain(name);
    expect(run.stderr.indexOf("\n")).toBe(run.stderr.length - 1);
  });
});
