import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPublicClient, http, parseAbiItem, zeroHash } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { FORK_GENESIS_FILE } from "../../../src/chain/devnet/forked.ts";
import { DevnetError, devnetChain, SavedChainError, startDevnet } from "../../../src/chain/devnet/index.ts";
import { SAVED_CHAIN_FILE } from "../../../src/chain/devnet/saved-chain.ts";

const connect = (rpc: string) => createPublicClient({ chain: devnetChain(rpc), transport: http(rpc) });
const OPTIONS = { port: 0, blockTime: 0, hardfork: "cancun", pruneHistory: 0, stateRoots: false } as const;
const GENESIS = 1_700_000_000;
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-forked-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** The anvil processes whose command line holds `needle`, by pid. */
function anvilsWith(needle: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return argv.some((a) => a.endsWith("/anvil")) && argv.join(" ").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("a devnet without state roots", () => {
  it("funds its buyers and keeps Base's block rules, with blocks that carry no state root", async () => {
    const devnet = await startDevnet({ ...OPTIONS, buyers: 2, genesisTimestamp: GENESIS });
    try {
      const client = connect(devnet.rpc);
      await devnet.mine(1_000);
      const [genesis, first, head] = await Promise.all([
        client.getBlock({ blockTag: "earliest" }),
        client.getBlock({ blockNumber: 1n }),
        client.getBlock(),
      ]);
      expect(genesis.number).toBe(0n);
      expect(genesis.timestamp).toBe(BigInt(GENESIS));
      expect(first.parentHash).toBe(genesis.hash);
      expect(head.stateRoot).toBe(zeroHash);
      expect(head.timestamp - first.timestamp).toBe(2n * (head.number - 1n));
      // The funding's mints are on chain as an indexer reads them, from block 0.
      const mints = await client.getLogs({
        address: devnet.usdc,
        event: TRANSFER,
        fromBlock: 0n,
        toBlock: head.number,
      });
      expect(mints.map((log) => log.args.to)).toEqual(devnet.buyers.map((b) => b.address));
      expect(
        await client.getBalance({ address: devnet.buyers[0]?.address as `0x${string}` }),
      ).toBeGreaterThan(0n);
      // An account nothing touched reads as empty: the upstream answers for it.
      expect(await client.getBalance({ address: "0x00000000000000000000000000000000000000aa" })).toBe(0n);
    } finally {
      await devnet.stop();
    }
  }, 60_000);

  it("resumes forked from the same genesis, whatever the next start asks", async () => {
    const dir = tempDir();
    const devnet = await startDevnet({ ...OPTIONS, buyers: 1, statePath: dir, genesisTimestamp: GENESIS });
    await devnet.mine(500);
    const before = await connect(devnet.rpc).getBlock();
    const genesis = (await connect(devnet.rpc).getBlock({ blockTag: "earliest" })).hash;
    await devnet.stop();
    expect(fs.readdirSync(dir).sort()).toEqual([FORK_GENESIS_FILE, SAVED_CHAIN_FILE]);

    const again = await startDevnet({ port: 0, blockTime: 0, hardfork: "cancun", statePath: dir });
    try {
      const client = connect(again.rpc);
      expect(again.resumed).toBe(true);
      expect((await client.getBlock()).hash).toBe(before.hash);
      expect((await client.getBlock({ blockTag: "earliest" })).hash).toBe(genesis);
      await again.mine(10);
      const head = await client.getBlock();
      expect(head.stateRoot).toBe(zeroHash);
      expect(head.timestamp).toBe(before.timestamp + 20n);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it("is refused when its genesis file is missing or damaged, naming it, and the save is left as it was", async () => {
    const dir = tempDir();
    const devnet = await startDevnet({ ...OPTIONS, buyers: 0, statePath: dir, genesisTimestamp: GENESIS });
    await devnet.mine(10);
    await devnet.stop();
    const saved = path.join(dir, SAVED_CHAIN_FILE);
    const bytes = fs.readFileSync(saved);
    const genesisFile = path.join(dir, FORK_GENESIS_FILE);

    fs.writeFileSync(genesisFile, "{");
    const damaged = await startDevnet({ ...OPTIONS, statePath: dir }).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(DevnetError);
    expect((damaged as Error).message).toBe(
      `${genesisFile} is not a genesis this version wrote: restore it, or start afresh`,
    );

    fs.rmSync(genesisFile);
    const missing = await startDevnet({ ...OPTIONS, statePath: dir }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SavedChainError);
    expect((missing as Error).message).toBe(
      `cannot load the saved chain ${saved}: its blocks have no state roots (it forked an empty chain) and ${FORK_GENESIS_FILE} beside it is missing: restore that file`,
    );
    expect(fs.readFileSync(saved).equals(bytes)).toBe(true);
  }, 60_000);

  it("leaves no genesis file behind a fresh chain with state roots in the same directory", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, FORK_GENESIS_FILE), JSON.stringify({ timestamp: GENESIS }));
    const devnet = await startDevnet({ ...OPTIONS, stateRoots: true, buyers: 0, statePath: dir });
    await devnet.mine(1);
    expect((await connect(devnet.rpc).getBlock()).stateRoot).not.toBe(zeroHash);
    await devnet.stop();
    expect(fs.readdirSync(dir)).toEqual([SAVED_CHAIN_FILE]);
  }, 60_000);

  it("refuses a genesis number: it forks an empty chain at block 0", async () => {
    await expect(startDevnet({ ...OPTIONS, genesisNumber: 1_000 })).rejects.toThrow(
      "a devnet without state roots forks an empty chain at block 0: no genesisNumber",
    );
  });

  it("stops with its upstream, and takes the upstream with it when it stops", async () => {
    // A genesis no other test uses finds this devnet's upstream among the machine's anvils.
    const stamp = GENESIS + 1 + Math.floor(Math.random() * 1_000_000);
    const devnet = await startDevnet({ ...OPTIONS, buyers: 0, genesisTimestamp: stamp });
    const [upstream] = anvilsWith(`--timestamp ${stamp}`);
    expect(upstream).toBeDefined();
    process.kill(upstream as number, "SIGKILL");
    await devnet.exited;
    await devnet.stop();

    const other = await startDevnet({ ...OPTIONS, buyers: 0, genesisTimestamp: stamp + 1 });
    expect(anvilsWith(`--timestamp ${stamp + 1}`)).toHaveLength(1);
    await other.stop();
    expect(anvilsWith(`--timestamp ${stamp + 1}`)).toEqual([]);
  }, 60_000);
});
