import { AppError } from "../common/errors.ts";
import { projectVersion } from "../common/version.ts";
import { ConfigError } from "../config/config-error.ts";
import { readCommandLine, UsageError } from "./args.ts";
import { helpOf, programHelp } from "./usage.ts";

/**
 * Runs one command; returns the process exit code. Errors are one line on stderr. The commands, their
 * flags and their help are one table (src/cli/commands.ts); each command's module loads when it runs.
 */
export async function main(argv: string[]): Promise<number> {
  try {
    const line = readCommandLine(argv);
    switch (line.kind) {
      case "run":
        return await line.command.run(line.args, line.values);
      case "help":
        process.stdout.write(`${helpOf(line.topic)}\n`);
        return 0;
      case "version":
        process.stdout.write(`x402-merchants ${projectVersion()}\n`);
        return 0;
      case "nothing":
        // Help is what it asked for, but nothing was: 2, as for any other usage mistake.
        process.stdout.write(`${programHelp()}\n`);
        return 2;
    }
  } catch (error) {
    process.stderr.write(`x402-merchants: ${describe(error)}\n`);
    return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  }
}

function describe(error: unknown): string {
  if (error instanceof AppError) return error.message;
  // Not an error meant for people: a bug, or a failure nothing anticipated. Its name tells which.
  return error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
}
