import fs from "node:fs";

let version: string | undefined;

/** The version in package.json, read once (the CLI's bundle keeps each module's own `import.meta.url`). */
export function projectVersion(): string {
  version ??= (
    JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
  ).version;
  return version;
}
