/**
 * A devnet chain saved between runs, compressed. anvil's own `--state` file is its state as plain JSON,
 * about 1.5 KB a block (467 MB for a week of Base blocks, mostly empty block headers); the same state from
 * `anvil_dumpState` is gzip, about 100 bytes a block. So the devnet saves through that call into
 * `state.json.gz`, and loads it back through a named pipe as `--load-state` (`feedChain`): anvil's HTTP
 * server refuses request bodies over 2 MB, so `anvil_loadState` would need its IPC socket, which was 4x slower.
 * A `state.json` that an earlier version left (anvil's own format) still loads, by `--load-state`, and is
 * removed once the compressed file replacing it is written.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { fetchWithin } from "../../common/fetch-within.ts";
import { timeoutSignal } from "../../common/timeout-signal.ts";

/** The saved chain in a state directory. */
export const SAVED_CHAIN_FILE = "state.json.gz";
/** What anvil's `--state` wrote before the chain was saved compressed. */
export const LEGACY_CHAIN_FILE = "state.json";

export type SavedChain = { format: "gzip" | "json"; file: string };

/** The chain saved in `dir`, the compressed one first (it is the newer when both are there). */
export function findSavedChain(dir: string): SavedChain | undefined {
  const gzip = path.join(dir, SAVED_CHAIN_FILE);
  if (fs.existsSync(gzip)) return { format: "gzip", file: gzip };
  const json = path.join(dir, LEGACY_CHAIN_FILE);
  if (fs.existsSync(json)) return { format: "json", file: json };
  return undefined;
}

/**
 * Asks anvil for its state and writes it to `dir/state.json.gz`: to a temporary file first, flushed, then
 * renamed over the last save, so a crash at any moment leaves the previous save or this one, never a torn
 * file. A legacy `state.json` goes once the new file is in place.
 */
export async function saveChain(rpc: string, dir: string, timeoutMs: number): Promise<string> {
  const response = await fetchWithin(rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_dumpState", params: [] }),
    signal: timeoutSignal(timeoutMs),
  });
  const reply = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (typeof reply.result !== "string") {
    throw new Error(
      `anvil_dumpState answered ${reply.error?.message ?? JSON.stringify(reply).slice(0, 200)}`,
    );
  }
  const bytes = Buffer.from(reply.result.replace(/^0x/, ""), "hex");
  // gzip's magic number: anything else is not a state this module can load back.
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b)
    throw new Error("anvil_dumpState answered something other than gzip");
  const file = path.join(dir, SAVED_CHAIN_FILE);
  const temporary = `${file}.tmp`;
  const fd = fs.openSync(temporary, "w");
  try {
    fs.writeSync(fd, bytes);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  fs.rmSync(path.join(dir, LEGACY_CHAIN_FILE), { force: true });
  return file;
}

/** A save a crash cut short: never the saved chain itself, which is replaced only by a rename. */
export function removeUnfinishedSave(dir: string): void {
  fs.rmSync(path.join(dir, `${SAVED_CHAIN_FILE}.tmp`), { force: true });
}

/**
 * A named pipe anvil reads the saved chain from (`--load-state PIPE`), fed `file` decompressed as it reads:
 * anvil takes only plain JSON, and the 470 MB of a week need not be written out. (Sent as hex to
 * `anvil_loadState` over its IPC socket instead, a week took 50 s to load against 15-18 s this way.)
 *
 * `fed` settles once anvil has read the whole chain, or with the reason the file could not be read.
 * `close()` ends a feed anvil never opened (it failed first): call it once anvil is running or gone.
 */
export function feedChain(file: string): { pipe: string; fed: Promise<void>; close(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-chain-"));
  const pipe = path.join(dir, "state.json");
  try {
    execFileSync("mkfifo", ["-m", "600", pipe]);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot make a named pipe to load the chain through: ${(error as Error).message}`);
  }
  // Opening a pipe to write waits for a reader: it settles when anvil opens it, or when close() does.
  const fed = pipeline(fs.createReadStream(file), zlib.createGunzip(), fs.createWriteStream(pipe));
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    // A reader that opens and closes at once: a writer still waiting is let through and finds no reader.
    fs.closeSync(fs.openSync(pipe, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  fed.catch(() => undefined);
  return { pipe, fed, close };
}
