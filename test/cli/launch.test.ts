import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { cliBundle } from "../../src/cli/launch.mjs";
import { runCli } from "../helpers/process.ts";

/** A small source tree shaped like the project's: src/cli/main.ts, a module reading a file beside it. */
function sourceTree(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-launch-"));
  const cli = path.join(root, "src", "cli");
  fs.mkdirSync(cli, { recursive: true });
  fs.writeFileSync(path.join(root, "package.json"), '{"type":"module"}\n');
  fs.writeFileSync(path.join(root, "tsconfig.json"), "{}\n");
  fs.writeFileSync(
    path.join(cli, "main.ts"),
    [
      'import { note } from "./note.ts";',
      "export async function main(argv: string[]): Promise<string> {",
      '  return [note(), (await import("./late.ts")).late, argv.length].join(" ");',
      "}",
      "",
    ].join("\n"),
  );
  fs.writeFileSync(
    path.join(cli, "note.ts"),
    'import fs from "node:fs";\nexport const note = (): string => fs.readFileSync(new URL("./note.txt", import.meta.url), "utf8").trim();\n',
  );
  fs.writeFileSync(path.join(cli, "late.ts"), 'export const late: string = "late";\n');
  fs.writeFileSync(path.join(cli, "note.txt"), "beside its source\n");
  return root;
}

const run = async (file: string, argv: string[]) =>
  (
    (await import(`${pathToFileURL(file).href}?${Math.random()}`)) as { main(a: string[]): Promise<string> }
  ).main(argv);

describe("the command line's bundle", () => {
  it("is built once from the sources, and what a module finds beside itself is where its source is", async () => {
    const root = sourceTree();
    const first = await cliBundle({ root });
    expect(first.built).toBe(true);
    expect(first.file.startsWith(path.join(root, "node_modules", ".cache", "x402-merchants"))).toBe(true);
    expect(await run(first.file, ["a", "b"])).toBe("beside its source late 2");
    // Loaded on demand: the dynamically imported module is a chunk of its own.
    expect(fs.readdirSync(path.join(path.dirname(first.file), "chunks")).length).toBeGreaterThan(0);
    const again = await cliBundle({ root });
    expect(again).toEqual({ file: first.file, built: false });
  });

  it("is rebuilt when a source changes, and keeps older bundles until a week unused", async () => {
    const root = sourceTree();
    const first = await cliBundle({ root });
    fs.writeFileSync(path.join(root, "src", "cli", "late.ts"), 'export const late: string = "later";\n');
    const second = await cliBundle({ root });
    expect(second.built).toBe(true);
    expect(second.file).not.toBe(first.file);
    expect(await run(second.file, [])).toBe("beside its source later 0");
    expect(fs.existsSync(first.file)).toBe(true);

    const week = new Date(Date.now() - 8 * 24 * 3_600_000);
    fs.utimesSync(path.dirname(first.file), week, week);
    fs.writeFileSync(path.join(root, "src", "cli", "late.ts"), 'export const late: string = "latest";\n');
    const third = await cliBundle({ root });
    expect(await run(third.file, [])).toBe("beside its source latest 0");
    expect(fs.existsSync(first.file)).toBe(false);
    expect(fs.existsSync(second.file)).toBe(true);
  });

  it("fails whole on a source that does not compile, leaving no bundle behind", async () => {
    const root = sourceTree();
    fs.writeFileSync(path.join(root, "src", "cli", "late.ts"), "export const late: string = ;\n");
    await expect(cliBundle({ root })).rejects.toThrow();
    const cache = path.join(root, "node_modules", ".cache", "x402-merchants");
    expect(fs.existsSync(cache) ? fs.readdirSync(cache) : []).toEqual([]);
  });

  it("answers the same from the bundle and from the sources through tsx", async () => {
    const bundled = await runCli(["--help"]);
    const sources = await runCli(["--help"], { X402M_CLI_FROM_SOURCES: "1" });
    expect(bundled.code).toBe(0);
    expect(bundled).toEqual(sources);
  });
});
