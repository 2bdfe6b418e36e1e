/**
 * The analytics store's file as DuckDB lays it out, read by this program itself to verify it: DuckDB checks a
 * block's checksum only when it reads that block, and it reads lazily (opening reads the headers and the
 * catalog; `count(*)`, min and max are answered from metadata, an index only when it is used), so a damaged
 * block can sit unnoticed under cached reports and new writes until a query happens to need it.
 *
 * DuckDB 1.x's single-file layout (duckdb/duckdb, src/storage/single_file_block_manager.cpp):
 *
 * ```
 * 0       main header (4 KiB): checksum, "DUCK", storage version number, flags (bit 0: encrypted), versions
 * 4096    database header 1 (4 KiB): checksum, iteration, meta block, free list, block count, block size, ...
 * 8192    database header 2; the one with the higher iteration is current
 * 12288   block 0, block 1, ...: `block size` bytes each (256 KiB by default), an 8-byte checksum then data
 * ```
 *
 * A checksum is DuckDB's `Checksum`: 5381 XOR-ed with w * 0xbf58476d1ce4e5b9 (mod 2^64) for every 64-bit
 * little-endian word w of the data. The free list (blocks not in use, which may hold anything: old data,
 * holes, a write torn by a crash) is stored in metadata: a block cut into 64 sub-blocks, each starting with
 * the pointer to the next; a pointer is a block id with the sub-block's index in its top byte. What this
 * module does not know (an encrypted file, a storage version it has not seen) it does not judge: it says so
 * and leaves the file to DuckDB. test/analytics/store-file.test.ts holds this reading to DuckDB's own.
 */
import fs from "node:fs";

const HEADER_SIZE = 4096;
const BLOCKS_START = 3 * HEADER_SIZE;
const CHECKSUM_SIZE = 8;
const METADATA_SUB_BLOCKS = 64;
const INVALID_POINTER = 0xffff_ffff_ffff_ffffn;
/** Storage version numbers the DuckDB of this program reads (its error names the range: 64 to 68). */
const KNOWN_VERSIONS = { lowest: 64, highest: 68 };
/** Damaged blocks named one by one; past that, counted. */
const BLOCKS_NAMED = 10;

/** What a look at the store file found. */
export interface FileVerdict {
  /** Set when the file's layout is not one this module reads: nothing was judged, for DuckDB to decide. */
  skipped?: string;
  size: number;
  blockSize: number;
  blocksInUse: number;
  blocksVerified: number;
  /** What is wrong, one short phrase each; empty when nothing is. */
  damage: string[];
}

export interface VerifyOptions {
  /**
   * At most this many bytes of blocks are verified, spread evenly over the blocks in use (every block
   * when they fit). Default: all of them.
   */
  maxBytes?: number;
}

/**
 * Verifies the store file `file`: its headers, that it is long enough for every block in use, and the
 * checksum of every block in use (or of an even sample of `maxBytes` of them). Reads only.
 */
export function verifyStoreFile(file: string, options: VerifyOptions = {}): FileVerdict {
  return withFile(file, (fd, size) => {
    const verdict: FileVerdict = { size, blockSize: 0, blocksInUse: 0, blocksVerified: 0, damage: [] };
    const layout = readLayout(fd, size);
    if ("damage" in layout) verdict.damage.push(layout.damage);
    if ("skipped" in layout) verdict.skipped = layout.skipped;
    if (!("inUse" in layout)) return verdict;
    verifyBlocks(layout, options.maxBytes ?? Number.POSITIVE_INFINITY, verdict);
    return verdict;
  });
}

/** The ids of the blocks in use, as the file's current header and free list say; undefined if unreadable. */
export function blocksInUse(file: string): number[] | undefined {
  return withFile(file, (fd, size) => {
    const layout = readLayout(fd, size);
    return "inUse" in layout ? layout.inUse : undefined;
  });
}

/**
 * Descriptors of store files read here, kept open until the store is closed (`releaseStoreFile`). POSIX
 * drops every lock a process holds on a file when it closes any descriptor of that file: closing the one
 * read here would let go of DuckDB's lock on the store this process has open, and another process could
 * then open it and write beside this one (the demo's readers did).
 */
const descriptors = new Map<string, number>();

function withFile<T>(file: string, fn: (fd: number, size: number) => T): T {
  let fd = descriptors.get(file);
  if (fd === undefined) {
    fd = fs.openSync(file, "r");
    descriptors.set(file, fd);
  }
  return fn(fd, fs.fstatSync(fd).size);
}

/** Closes the descriptor `withFile` kept for `file`: call once DuckDB has closed the store. */
export function releaseStoreFile(file: string): void {
  const fd = descriptors.get(file);
  if (fd === undefined) return;
  descriptors.delete(file);
  fs.closeSync(fd);
}

interface Layout {
  blocks: BlockReader;
  size: number;
  /** Blocks the current header counts and the free list does not name, in order. */
  inUse: number[];
}

/** The file's layout, or the damage that makes it unreadable, or why this module does not read it. */
function readLayout(fd: number, size: number): Layout | { damage: string } | { skipped: string } {
  if (size < BLOCKS_START) {
    return { damage: `it is ${size} bytes long, shorter than DuckDB's headers (${BLOCKS_START} bytes)` };
  }
  const headers = Buffer.alloc(BLOCKS_START);
  fs.readSync(fd, headers, 0, BLOCKS_START, 0);
  if (headers.toString("latin1", 8, 12) !== "DUCK")
    return { damage: "it does not start with DuckDB's header" };
  const version = Number(headers.readBigUInt64LE(12));
  if (version < KNOWN_VERSIONS.lowest || version > KNOWN_VERSIONS.highest) {
    return { skipped: `storage version ${version}` };
  }
  if (headers.readBigUInt64LE(20) !== 0n) return { skipped: "an encrypted file" };
  const bad = [0, HEADER_SIZE, 2 * HEADER_SIZE].filter(
    (at) => !checksumHolds(headers.subarray(at, at + HEADER_SIZE)),
  );
  if (bad.length > 0) {
    return { damage: bad.map((at) => `its header at byte ${at} fails its checksum`).join("; ") };
  }
  const current = [HEADER_SIZE, 2 * HEADER_SIZE]
    .map((at) => readDatabaseHeader(headers, at))
    .reduce((a, b) => (a.iteration > b.iteration ? a : b));
  const { blockSize, blockCount } = current;
  if (blockSize < 4096 || blockSize > 1 << 30 || (blockSize & (blockSize - 1)) !== 0) {
    return { skipped: `a block size of ${blockSize} bytes` };
  }
  const blocks = new BlockReader(fd, size, blockSize);
  const free = readFreeList(blocks, current.freeList, blockCount);
  if (typeof free === "string") {
    // A free list whose block holds its checksum but reads as nonsense is more likely a layout this module
    // does not know than damage; a missing block or a failed checksum is damage, whatever the layout.
    const id = Number(current.freeList & 0xff_ffff_ffff_ffffn);
    const at = `block ${id} (byte ${blockOffset(id, blockSize)})`;
    if (!blocks.read(id)) {
      return {
        damage: `it ends at byte ${size}, before ${at}, which holds its list of free blocks: it was cut short`,
      };
    }
    if (!blocks.checksumHolds(id)) return { damage: `${at}, its list of free blocks, fails its checksum` };
    return { skipped: `a list of free blocks read as ${free}` };
  }
  const inUse: number[] = [];
  for (let id = 0; id < blockCount; id++) if (!free.has(id)) inUse.push(id);
  return { blocks, size, inUse };
}

function verifyBlocks(layout: Layout, maxBytes: number, verdict: FileVerdict): void {
  const { blocks, size, inUse } = layout;
  const { blockSize } = blocks;
  verdict.blockSize = blockSize;
  verdict.blocksInUse = inUse.length;
  const present = Math.max(0, Math.floor((size - BLOCKS_START) / blockSize));
  const missing = inUse.filter((id) => id >= present);
  if (missing.length > 0) {
    verdict.damage.push(
      `it ends at byte ${size}, before ${missing.length} of its ${inUse.length} blocks in use (from byte ${blockOffset(missing[0] as number, blockSize)}): it was cut short`,
    );
  }
  const budget = Math.max(1, Math.floor(maxBytes / blockSize));
  const step = inUse.length > budget ? inUse.length / budget : 1;
  const bad: number[] = [];
  for (let i = 0; i < inUse.length; i += step) {
    const id = inUse[Math.floor(i)] as number;
    if (id >= present) continue;
    verdict.blocksVerified++;
    if (!blocks.checksumHolds(id)) bad.push(id);
  }
  if (bad.length > 0) {
    const named = bad.slice(0, BLOCKS_NAMED).map((id) => `${id} (byte ${blockOffset(id, blockSize)})`);
    const more = bad.length > BLOCKS_NAMED ? ` and ${bad.length - BLOCKS_NAMED} more` : "";
    verdict.damage.push(
      bad.length === 1
        ? `block ${named[0]} fails its checksum`
        : `${bad.length} blocks ${named.join(", ")}${more} fail their checksums`,
    );
  }
}

interface DatabaseHeader {
  iteration: bigint;
  freeList: bigint;
  blockCount: number;
  blockSize: number;
}

function readDatabaseHeader(headers: Buffer, at: number): DatabaseHeader {
  return {
    iteration: headers.readBigUInt64LE(at + 8),
    freeList: headers.readBigUInt64LE(at + 24),
    blockCount: Number(headers.readBigUInt64LE(at + 32)),
    blockSize: Number(headers.readBigUInt64LE(at + 40)),
  };
}

const blockOffset = (id: number, blockSize: number) => BLOCKS_START + id * blockSize;

class BlockReader {
  private readonly buffer: Buffer;

  constructor(
    private readonly fd: number,
    private readonly size: number,
    readonly blockSize: number,
  ) {
    this.buffer = Buffer.alloc(blockSize);
  }

  /** Block `id` as stored (checksum first), or undefined when the file ends before it. */
  read(id: number): Buffer | undefined {
    const at = blockOffset(id, this.blockSize);
    if (at + this.blockSize > this.size) return undefined;
    fs.readSync(this.fd, this.buffer, 0, this.blockSize, at);
    return this.buffer;
  }

  checksumHolds(id: number): boolean {
    const block = this.read(id);
    return block !== undefined && checksumHolds(block);
  }
}

/**
 * The blocks the free list `pointer` names (a set), or what made it unreadable. Layout (SingleFileBlockManager::
 * WriteHeader): a count, then that many 64-bit block ids, in metadata sub-blocks chained by their first 8 bytes.
 */
function readFreeList(blocks: BlockReader, pointer: bigint, blockCount: number): Set<number> | string {
  const free = new Set<number>();
  if (pointer === INVALID_POINTER) return free;
  const subBlockSize = Math.floor((blocks.blockSize - CHECKSUM_SIZE) / METADATA_SUB_BLOCKS / 8) * 8;
  let chunk: Buffer | undefined;
  let offset = 0;
  const seen = new Set<bigint>();
  const next = (at: bigint): string | undefined => {
    if (at === INVALID_POINTER || seen.has(at)) return "a broken chain of sub-blocks";
    seen.add(at);
    const id = Number(at & 0xff_ffff_ffff_ffffn);
    const index = Number(at >> 56n);
    if (id >= blockCount || index >= METADATA_SUB_BLOCKS) return `a pointer past the file's blocks`;
    const block = blocks.read(id);
    if (!block) return `a pointer past the end of the file`;
    const start = CHECKSUM_SIZE + index * subBlockSize;
    chunk = Buffer.from(block.subarray(start, start + subBlockSize));
    offset = 8;
    return undefined;
  };
  const readU64 = (): bigint | string => {
    if (!chunk || offset + 8 > subBlockSize) {
      const failed = next(chunk ? chunk.readBigUInt64LE(0) : pointer);
      if (failed) return failed;
    }
    const value = (chunk as Buffer).readBigUInt64LE(offset);
    offset += 8;
    return value;
  };
  const count = readU64();
  if (typeof count === "string") return count;
  if (count > BigInt(blockCount)) return `${count} free blocks of ${blockCount}`;
  for (let i = 0n; i < count; i++) {
    const id = readU64();
    if (typeof id === "string") return id;
    if (id >= BigInt(blockCount)) return `free block ${id} of ${blockCount}`;
    free.add(Number(id));
  }
  return free;
}

// DuckDB's checksum constant, in 32-bit halves: JavaScript has no 64-bit integer arithmetic short of BigInt,
// which ran at 55 MB/s here.
const K_LO = 0x1ce4e5b9;
const K_HI = 0xbf58476d;
const TWO_32 = 4294967296;

/**
 * Whether a block's stored checksum (its first 8 bytes) is DuckDB's checksum of the rest. The 64-bit product
 * w * K mod 2^64 is built from 32-bit halves: its low half is Math.imul(w_lo, K_LO); the carry into the high
 * half, floor(w_lo * K_LO / 2^32), comes from the double product, whose rounding error (under 2^9) is far
 * below the 2^32 that separates candidates, so rounding (product - low half) / 2^32 gives it exactly. About
 * 2 GB/s once compiled, seven times a product built from 16-bit pieces.
 */
export function checksumHolds(block: Buffer): boolean {
  if (block.byteOffset % 4 !== 0 || block.length % 8 !== 0) return checksumHolds(Buffer.from(block));
  const words = new Uint32Array(block.buffer, block.byteOffset, block.length / 4);
  let lo = 5381;
  let hi = 0;
  for (let i = 2; i < words.length; i += 2) {
    const wLo = words[i] as number;
    const low = Math.imul(wLo, K_LO);
    const carry = Math.round((wLo * K_LO - (low >>> 0)) / TWO_32);
    lo ^= low;
    hi ^= carry + Math.imul(words[i + 1] as number, K_LO) + Math.imul(wLo, K_HI);
  }
  return lo >>> 0 === words[0] && hi >>> 0 === words[1];
}

/**
 * What is wrong with the write-ahead log `wal` (DuckDB's `<file>.wal`: the transactions committed since the
 * last checkpoint), or undefined. DuckDB takes a log whose first entry does not parse for one torn by a crash
 * and skips it without a word, then overwrites it with the next write: every transaction in it is lost. The
 * first entry is its version, which DuckDB writes as field 100 (the entry type) = 98 (WAL_VERSION); a log
 * too short to hold it is a crash's torn write, which DuckDB is right to skip. Damage further in fails an
 * entry's checksum when DuckDB replays it.
 */
export function walDamage(wal: string): string | undefined {
  let head: Buffer;
  try {
    const fd = fs.openSync(wal, "r");
    try {
      head = Buffer.alloc(8);
      const read = fs.readSync(fd, head, 0, 8, 0);
      if (read < head.length) return undefined;
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (head[0] === 0x64 && head[1] === 0x00 && head[2] === 98) return undefined;
  return `its write-ahead log ${wal} does not start as DuckDB writes one, so DuckDB would skip it and lose the transactions in it`;
}
