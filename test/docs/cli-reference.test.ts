/**
 * docs/cli.md's command reference is what `npm run docs:cli` writes from the command table now: a command,
 * argument or flag changed in src/cli/commands.ts without the document fails here.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { BEGIN, CLI_DOC, cliReference, END, withReference } from "../../scripts/cli-reference.ts";
import { COMMANDS } from "../../src/cli/commands.ts";
import { helpOf } from "../../src/cli/usage.ts";

const doc = fs.readFileSync(CLI_DOC, "utf8");

describe("docs/cli.md", () => {
  it("holds the command reference the command table gives now", () => {
    expect(doc, `${CLI_DOC} is out of date with src/cli/commands.ts: run \`npm run docs:cli\``).toBe(
      withReference(doc),
    );
  });

  it("has one generated part, which holds every command's help", () => {
    expect(doc.split(BEGIN)).toHaveLength(2);
    expect(doc.split(END)).toHaveLength(2);
    const generated = cliReference();
    for (const command of COMMANDS) {
      expect(generated, command.name).toContain(`### ${command.name}\n`);
      expect(generated, command.name).toContain(helpOf(command));
    }
  });

  it("replaces only what lies between the markers", () => {
    const replaced = withReference(`before\n${BEGIN}\nstale\n${END}\nafter\n`);
    expect(replaced).toBe(`before\n${cliReference()}\nafter\n`);
    expect(() => withReference("no markers")).toThrow(/markers/);
  });
});
