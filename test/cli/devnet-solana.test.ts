/**
 * `devnet --chain solana` as a user runs it: one JSON line with working keys and RPC, SIGTERM ends it with exit 0;
 * flags that are the Base devnet's, and chains it does not play, are refused with a one-line reason.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { getBase58Encoder } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { SOLANA_DEVNET_FEE_PAYER } from "../../src/chain/devnet-signer.ts";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";
import { keyPairFromSeed } from "../../src/chain/solana/devnet/index.ts";
import { runMain } from "../helpers/in-process.ts";

const BIN = path.resolve("bin/x402-merchants");

async function rpc(url: string, method: string, params: unknown[]) {
  const response = await fetch(url, {
    method: "POST",
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()).result;
}

describe("devnet --chain solana", () => {
  it("prints one JSON line with the RPC, the fee payer and funded buyers, and stops on SIGTERM with exit 0", async (context) => {
    const child = spawn(
      process.execPath,
      [BIN, "devnet", "--chain", "solana", "--port", "0", "--buyers", "2"],
      { stdio: "pipe" },
    );
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    context.onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exit;
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0] ?? "");
      });
      child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
    });
    const ready = JSON.parse(line);
    expect(Object.keys(ready)).toEqual(["rpc", "facilitator", "network", "usdc", "buyers"]);
    expect(ready).toMatchObject({ network: SOLANA_NETWORK, usdc: SOLANA_USDC_MINT });
    expect(ready.rpc).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.buyers).toHaveLength(2);
    // The fee payer `index --chain solana` counts as a facilitator on the local Solana without --facilitator.
    expect(ready.facilitator.address).toBe(SOLANA_DEVNET_FEE_PAYER);
    for (const account of [ready.facilitator, ...ready.buyers]) {
      // The secret key is the 64-byte key pair: its seed gives back its address.
      const bytes = new Uint8Array(getBase58Encoder().encode(account.secretKey));
      expect(bytes).toHaveLength(64);
      expect(keyPairFromSeed(bytes.subarray(0, 32)).address).toBe(account.address);
    }
    expect((await rpc(ready.rpc, "getBalance", [ready.facilitator.address])).value).toBe(100_000_000_000);
    const owned = await rpc(ready.rpc, "getTokenAccountsByOwner", [
      ready.buyers[0].address,
      { mint: SOLANA_USDC_MINT },
      { encoding: "jsonParsed" },
    ]);
    expect(owned.value[0].account.data.parsed.info.tokenAmount.uiAmountString).toBe("1000");
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("refuses the Base devnet's flags and chains it does not play", async () => {
    for (const [argv, reason] of [
      [["--chain", "solana", "--open"], /--open is for the Base devnet/],
      [["--chain", "solana", "--background-tps", "5"], /--background-tps is for the Base devnet/],
      [["--chain", "polygon"], /devnet --chain is base or solana, not "polygon"/],
    ] as const) {
      const { code, stdout, stderr } = await runMain(["devnet", "--port", "0", ...argv]);
      expect(stdout).toBe("");
      expect(stderr).toMatch(reason);
      expect(code).toBe(2);
    }
  });
});
