/**
 * `x402-merchants verify REPORT.json... --rpc URL [--attester ADDRESS]`: checks downloaded reports against
 * the chain, with nothing but an RPC (src/reports/attest/verify.ts says what is checked, docs/attestation.md
 * how to do it by hand). One line per report verified, in the order given; the first that does not verify
 * stops it, `<file>: <reason>` on stderr and exit 1. It writes nothing.
 */
import fs from "node:fs";
import { type Address, createPublicClient, http, isAddress } from "viem";
import { UsageError } from "../common/errors.ts";
import { VerifyError, verifyReport } from "../reports/index.ts";
import type { Flags } from "./flags.ts";

export async function runVerify(args: string[], flags: Flags): Promise<number> {
  if (args.length === 0) throw new UsageError("verify takes one or more REPORT.json files");
  const missing = args.find((file) => !fs.existsSync(file));
  if (missing !== undefined) throw new UsageError(`no file ${missing}`);
  const rpc = flags.rpc;
  if (!rpc) throw new UsageError("verify needs --rpc URL: a JSON-RPC endpoint of the chain the reports name");
  if (!/^https?:\/\//.test(rpc)) throw new UsageError(`--rpc must be an http(s) URL, not "${rpc}"`);
  const attester = flags.attester;
  if (attester !== undefined && !isAddress(attester, { strict: false })) {
    throw new UsageError(`--attester must be an address: 0x followed by 40 hex digits, not "${attester}"`);
  }

  const client = createPublicClient({ transport: http(rpc, { retryCount: 1, timeout: 10_000 }) });
  for (const file of args) {
    try {
      const verified = await verifyReport(readJson(file), client, {
        attester: attester as Address | undefined,
      });
      const { address, endBlock, uid, time } = verified;
      const by = verified.attester.toLowerCase();
      process.stdout.write(
        flags.json
          ? `${JSON.stringify({ file, address, end_block: endBlock, attester: by, time, uid })}\n`
          : `ok ${address} week ending at block ${endBlock}, attested by ${by} at ${time} (uid ${uid})\n`,
      );
    } catch (error) {
      if (error instanceof VerifyError) throw new VerifyError(error.code, `${file}: ${error.message}`);
      throw error;
    }
  }
  return 0;
}

/** The file's JSON; a file that cannot be read or is not JSON is a report that does not verify. */
function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new VerifyError("not_report", `cannot read it: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new VerifyError("not_report", `not JSON: ${(error as Error).message.split("\n")[0]}`);
  }
}
