import { createRequire } from "node:module";
import path from "node:path";
import { DevnetError } from "./devnet-errors.ts";

/** The anvil binary inside `@foundry-rs/anvil-<os>-<arch>`, run directly rather than through the package's
 * node wrapper, so the process we signal is anvil itself. */
export function anvilBinary(): string {
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string];
  const name = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    throw new DevnetError(
      `no anvil binary for ${process.platform}-${process.arch}: ${name} is not installed`,
    );
  }
  return path.join(dir, "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
}
