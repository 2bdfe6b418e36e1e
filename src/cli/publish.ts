import fs from "node:fs";
import path from "node:path";
import { UsageError } from "../common/errors.ts";
import { projectVersion } from "../common/version.ts";
import { LICENSE_URL, publishSite } from "../reports/index.ts";
import { parseEndBlock, parseStoreChain } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { withReader } from "./readers.ts";

/** `publish DIR`: the week's reports, pages, badges and datasets as a static site (src/reports/publish/). */
export async function runPublish(args: string[], flags: Flags): Promise<number> {
  const [dir, ...extra] = args;
  if (!dir || extra.length > 0) throw new UsageError("publish takes exactly one DIR");
  const endBlock = parseEndBlock(flags["end-block"]);
  const chain = parseStoreChain(flags.chain);
  const target = path.resolve(dir);
  if (fs.existsSync(target)) {
    if (!fs.statSync(target).isDirectory()) throw new UsageError(`${dir} exists and is not a directory`);
    if (fs.readdirSync(target).length > 0 && !flags.replace) {
      throw new UsageError(`${dir} is not empty: --replace swaps it for the new site once that is whole`);
    }
  }
  const started = performance.now();
  const manifest = await withReader(flags, (reader) =>
    publishSite(reader.route, target, {
      endBlock,
      chain: chain.slug,
      version: projectVersion(),
      license: LICENSE_URL,
      ...(reader.merchants && {
        merchants: (end: number) =>
          (reader.merchants as NonNullable<typeof reader.merchants>)(end, chain.slug),
      }),
    }),
  );
  const bytes = manifest.files.reduce((n, f) => n + f.bytes, 0);
  process.stderr.write(
    `x402-merchants: published ${chain.name}'s window ending at block ${manifest.window.end_block} to ${target}: ${manifest.merchants} merchants, ${manifest.files.length} files, ${(bytes / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return 0;
}
