import { UsageError } from "../common/errors.ts";
import { ADDRESS_FORMS, isAddress } from "../reports/index.ts";
import { parseEndBlock, parsePage, parseStoreChain } from "./flag-values.ts";
import type { Flags } from "./flags.ts";
import { withReader } from "./readers.ts";

export async function runReport(args: string[], flags: Flags): Promise<number> {
  const [address, ...extra] = args;
  if (!address || extra.length > 0) throw new UsageError("report takes exactly one ADDRESS");
  if (!isAddress(address)) throw new UsageError(`"${address}" is not an address: ${ADDRESS_FORMS}`);
  const endBlock = parseEndBlock(flags["end-block"]);
  const chain = parseStoreChain(flags.chain).slug;
  const document = await withReader<object>(flags, (reader) => {
    const on = reader.onChain(chain);
    return flags.evidence ? on.evidence(address, endBlock) : on.report(address, endBlock);
  });
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  return 0;
}

export async function runLeaderboard(args: string[], flags: Flags): Promise<number> {
  if (args.length > 0) throw new UsageError("leaderboard takes no arguments");
  const endBlock = parseEndBlock(flags["end-block"]);
  const page = parsePage(flags.page);
  const chain = parseStoreChain(flags.chain).slug;
  const board = await withReader(flags, (reader) => reader.onChain(chain).leaderboard(endBlock, page));
  process.stdout.write(`${JSON.stringify(board, null, 2)}\n`);
  return 0;
}
