import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createPublicClient, type Hex, http } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
} from "../../../src/chain/base.ts";
import { BATCH_SETTLEMENT_RUNTIME_BYTECODE } from "../../../src/chain/batch-settlement.ts";
import { devnetChain, SavedChainError, startDevnet } from "../../../src/chain/devnet/index.ts";
import { LEGACY_CHAIN_FILE, SAVED_CHAIN_FILE } from "../../../src/chain/devnet/saved-chain.ts";
import { ERC3009_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE } from "../../../src/chain/erc3009-deposit-collector.ts";
import { EXACT_PROXY_RUNTIME_BYTECODE } from "../../../src/chain/exact-proxy.ts";
import { PERMIT2_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE } from "../../../src/chain/permit2-deposit-collector.ts";
import { eventually } from "../../helpers/process.ts";

const connect = (rpc: string) => createPublicClient({ chain: devnetChain(rpc), transport: http(rpc) });
const OPTIONS = { port: 0, buyers: 1, blockTime: 0, hardfork: "cancun", pruneHistory: 0 } as const;

/** The contracts a chain saved before them lacks, and their code. */
const LATER_CONTRACTS = [
  [X402_EXACT_PROXY_ADDRESS, EXACT_PROXY_RUNTIME_BYTECODE],
  [X402_BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_RUNTIME_BYTECODE],
  [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE],
  [PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, PERMIT2_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE],
] as const;

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-saved-chain-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A chain of `blocks` empty blocks saved in a new directory; returns it and the head's hash. */
async function savedChain(blocks: number): Promise<{ dir: string; head: `0x${string}` }> {
  const dir = tempDir();
  const devnet = await startDevnet({ ...OPTIONS, statePath: dir, genesisTimestamp: 1_700_000_000 });
  await devnet.mine(blocks);
  const head = (await connect(devnet.rpc).getBlock()).hash;
  await devnet.stop();
  return { dir, head };
}

describe("the devnet's saved chain", () => {
  it("is gzip, about a tenth of a kilobyte a block, and resumes at the same head", async () => {
    const { dir, head } = await savedChain(20_000);
    expect(fs.readdirSync(dir)).toEqual([SAVED_CHAIN_FILE]);
    const size = fs.statSync(path.join(dir, SAVED_CHAIN_FILE)).size;
    // anvil's own --state wrote about 1,500 bytes a block.
    expect(size / 20_000).toBeLessThan(200);
    const again = await startDevnet({ ...OPTIONS, statePath: dir });
    try {
      expect(again.resumed).toBe(true);
      expect((await connect(again.rpc).getBlock()).hash).toBe(head);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it("loads a state.json an earlier version saved, and replaces it with the compressed file", async () => {
    const { dir, head } = await savedChain(100);
    // anvil's --state format is the JSON inside the gzip. An earlier version saved no x402 contract but
    // the upto proxy: the others are taken out of the state, and must be back once it resumes.
    const gzip = path.join(dir, SAVED_CHAIN_FILE);
    const state = JSON.parse(zlib.gunzipSync(fs.readFileSync(gzip)).toString()) as {
      accounts: Record<string, unknown>;
    };
    const later = new Map(LATER_CONTRACTS.map(([address, code]) => [address.toLowerCase(), code]));
    const removed = Object.keys(state.accounts).filter((a) => later.has(a.toLowerCase()));
    for (const address of removed) delete state.accounts[address];
    expect(removed).toHaveLength(later.size);
    fs.writeFileSync(path.join(dir, LEGACY_CHAIN_FILE), JSON.stringify(state));
    fs.rmSync(gzip);
    const again = await startDevnet({ ...OPTIONS, statePath: dir });
    expect(again.resumed).toBe(true);
    const client = connect(again.rpc);
    expect((await client.getBlock()).hash).toBe(head);
    for (const [address, code] of later) expect(await client.getCode({ address: address as Hex })).toBe(code);
    await again.stop();
    expect(fs.readdirSync(dir)).toEqual([SAVED_CHAIN_FILE]);
  }, 60_000);

  it("refuses a damaged save with the file's name, and leaves it as it was", async () => {
    const { dir } = await savedChain(100);
    const file = path.join(dir, SAVED_CHAIN_FILE);
    const torn = fs.readFileSync(file).subarray(0, 200);
    fs.writeFileSync(file, torn);
    const error = await startDevnet({ ...OPTIONS, statePath: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SavedChainError);
    expect((error as Error).message).toBe(`cannot load the saved chain ${file}: unexpected end of file`);
    expect(fs.readFileSync(file).equals(torn)).toBe(true);
    // Whole gzip, but not a chain: anvil's own complaint, in one line.
    const notAChain = zlib.gzipSync('{"blocks": 1}');
    fs.writeFileSync(file, notAChain);
    const refused = await startDevnet({ ...OPTIONS, statePath: dir }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SavedChainError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^cannot load the saved chain ${file}: error: invalid value .* for '--load-state <PATH>': [^\\n]+$`,
      ),
    );
    expect(fs.readFileSync(file).equals(notAChain)).toBe(true);
    expect(fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith("x402m-chain-"))).toEqual([]);
  }, 60_000);

  it("saves on its timer, and a chain that died keeps its last save", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, `${SAVED_CHAIN_FILE}.tmp`), "a save a crash cut short");
    const devnet = await startDevnet({ ...OPTIONS, statePath: dir, saveIntervalSeconds: 1 });
    const file = path.join(dir, SAVED_CHAIN_FILE);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    await devnet.mine(10);
    expect(await eventually(() => fs.existsSync(file), 10_000)).toBe(true);
    const saved = fs.readFileSync(file);
    process.kill(devnet.pid, "SIGKILL");
    await devnet.exited;
    await devnet.stop();
    expect(fs.readFileSync(file).equals(saved)).toBe(true);
  }, 60_000);
});
