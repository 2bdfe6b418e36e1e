/**
 * The store written out in the import format (src/analytics/export.ts) and imported into a fresh store gives
 * back every table the import fills, row for row, and the same file again; the channels' claims and moves come
 * back from their events, not as payments and transfers of their own. A file that exists, a folder that does
 * not, or a store with nothing in it stops the export with one line, and no file is left. The same round trip
 * of an indexed devnet week, to the reports' bytes: test/cli/export.test.ts. A store of the escrow's transfers
 * without the channel records is written back as those transfers (the payer's channels as the escrow).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { ExportError, exportNdjson } from "../../src/analytics/export.ts";
import { importNdjson } from "../../src/analytics/import.ts";
import {
  BASE_USDC,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from "../../src/chain/base.ts";
import {
  addr,
  balance,
  checkpoint,
  END,
  ndjsonFile,
  payment,
  tempAnalytics,
  timeOf,
  transfer,
} from "../helpers/data.ts";
import { tempDir } from "../helpers/indexer.ts";

const opened: Analytics[] = [];
afterEach(() => {
  for (const a of opened.splice(0)) a.close();
});
async function fresh(): Promise<Analytics> {
  const a = await tempAnalytics();
  opened.push(a);
  return a;
}

const M = addr("export-merchant");
const FARM = addr("export-farm");
const RELAYER = addr("export-relayer");
const ID = `0x${"5c".repeat(32)}`;
const OLD = `0x${"5d".repeat(32)}`;
const tx = (n: number) => `0x${(0xe000 + n).toString(16).padStart(64, "0")}`;

const channel = (id: string, created?: number) => ({
  type: "channel",
  chain: "base",
  channel: id,
  payer: FARM,
  payer_authorizer: FARM,
  receiver: M,
  receiver_authorizer: RELAYER,
  token: BASE_USDC,
  withdraw_delay: 900,
  salt: `0x${"00".repeat(31)}0${id === ID ? 1 : 2}`,
  ...(created !== undefined && { block_number: created, tx_hash: tx(created % 1000) }),
});
const event = (block: number, name: string, amount: number, over: object = {}) => ({
  type: "channel_event",
  chain: "base",
  tx_hash: tx(block % 1000),
  log_index: 7,
  block_number: block,
  block_time: timeOf(block),
  event: name,
  channel: ID,
  sender: RELAYER,
  amount: String(amount),
  ...over,
});

/** Every kind of record, with the optional fields both given and left out. */
const everything = () => [
  { type: "merchant", address: M, name: "shop.example", claimed: true },
  { type: "merchant", address: addr("held"), held: true },
  {
    type: "listing",
    pay_to: M,
    resource: "https://shop.example/a",
    price_usd: 0.015187,
    description: "a\tb",
  },
  {
    type: "listing",
    pay_to: M,
    resource: "https://shop.example/b",
    price_usd: 0.1 + 0.2,
    description: 'quoted "c", and d',
    method: "post",
  },
  {
    type: "hub",
    chain: "base",
    address: addr("exchange"),
    label: "Exchange 1",
    kind: "exchange",
    source: "https://hubs.example/1",
  },
  {
    ...payment({ payer: addr("buyer"), payTo: M, amount: 5_000, block: END - 2000, scheme: "exact" }),
    builder_app: "shop_app",
    builder_wallet: "x402_merchants",
    builder_services: "agent,cdp_sdk_client",
  },
  { ...payment({ payer: addr("buyer2"), payTo: M, amount: 9_007_199_254_740_993n, block: END - 1900 }) },
  { ...payment({ payer: addr("buyer"), payTo: M, amount: 7, block: END - 1800 }), asset: addr("token") },
  transfer(addr("exchange"), addr("buyer"), 50_000, END - 3000),
  transfer(M, FARM, 600_000, END - 1000),
  channel(ID, END - 900),
  channel(OLD),
  event(END - 900, "created", 0, { sender: undefined }),
  event(END - 900, "deposited", 600_000, { log_index: 8 }),
  event(END - 800, "claimed", 400_000),
  event(END - 700, "swept", 400_000, { channel: undefined, receiver: M }),
  event(END - 600, "refunded", 100_000, { sender: M }),
  event(END - 500, "claimed", 1, { channel: OLD }),
  balance(addr("buyer"), 12_000, END - 3000),
  checkpoint(END - 1500),
  checkpoint(),
];

const TABLES = [
  "payments",
  "transfers",
  "channels",
  "channel_events",
  "balances",
  "merchants",
  "listings",
  "checkpoints",
  "hub_labels",
  "payment_days",
];
async function tables(a: Analytics): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of TABLES) {
    const rows = await a.all(`SELECT * FROM ${t} ORDER BY ALL`);
    out[t] = JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? v.toString() : v));
  }
  return out;
}

describe("export", () => {
  it("writes what an import into a fresh store makes back into the same tables, and the same file again", async () => {
    const source = await fresh();
    await importNdjson(source, ndjsonFile(everything()));
    const dir = tempDir("x402m-export-");
    const file = path.join(dir, "store.ndjson");
    const counts = await exportNdjson(source, file, { replace: false });
    expect(counts).toEqual({
      merchant: 2,
      listing: 2,
      hub: 1,
      channel: 2,
      payment: 3,
      transfer: 2,
      channel_event: 6,
      balance: 1,
      checkpoint: 2,
    });
    const text = fs.readFileSync(file, "utf8");
    expect(text).toContain(
      '"builder_app":"shop_app","builder_wallet":"x402_merchants","builder_services":"agent,cdp_sdk_client"',
    );
    // The claims and the channel's moves are not written twice: their events make them again.
    expect(text).not.toContain('"transfer_method":"channel"');
    expect(text).not.toContain(`"to":"${ID}"`);
    expect(text.split("\n").slice(0, 2)).toEqual([
      `{"type":"merchant","address":"${addr("held")}","held":true}`,
      `{"type":"merchant","address":"${M}","name":"shop.example","claimed":true}`,
    ]);

    const copy = await fresh();
    await importNdjson(copy, file);
    expect(await tables(copy)).toEqual(await tables(source));
    const again = path.join(dir, "again.ndjson");
    await exportNdjson(copy, again, { replace: false });
    expect(fs.readFileSync(again, "utf8")).toBe(text);
  });

  it("writes a store of the escrow's transfers without the channel records back as those transfers", async () => {
    const escrow = X402_BATCH_SETTLEMENT_ADDRESS.toLowerCase();
    const collector = ERC3009_DEPOSIT_COLLECTOR_ADDRESS.toLowerCase();
    const usdc = (block: number, log: number, from: string, to: string, amount: number) => ({
      ...transfer(from, to, amount, block),
      tx_hash: tx(block % 1000),
      log_index: log,
    });
    const claim = {
      ...payment({ payer: FARM, payTo: M, amount: 400_000, block: END - 800, scheme: "batch-settlement" }),
      transfer_method: "channel",
    };
    const source = await fresh();
    await importNdjson(
      source,
      ndjsonFile([
        transfer(M, FARM, 600_000, END - 1000),
        usdc(END - 900, 1, FARM, collector, 600_000),
        usdc(END - 900, 2, collector, escrow, 600_000),
        claim,
        usdc(END - 700, 2, escrow, M, 400_000),
        usdc(END - 600, 2, escrow, FARM, 100_000),
        checkpoint(),
      ]),
    );
    // The farm's channels are one wallet of the store, which its claim spends.
    const pool = `0x${"f".repeat(24)}${FARM.slice(2)}`;
    expect(await source.all("SELECT channel FROM payments")).toEqual([{ channel: pool }]);
    const dir = tempDir("x402m-export-");
    const file = path.join(dir, "store.ndjson");
    await exportNdjson(source, file, { replace: false });
    const text = fs.readFileSync(file, "utf8");
    expect(text).not.toContain(pool);
    expect(text).toContain(`"from":"${FARM}","to":"${escrow}","amount":"600000"`);
    expect(text).toContain(`"from":"${escrow}","to":"${FARM}","amount":"100000"`);
    expect(text).toContain('"transfer_method":"channel"');
    const copy = await fresh();
    await importNdjson(copy, file);
    expect(await tables(copy)).toEqual(await tables(source));
    const again = path.join(dir, "again.ndjson");
    await exportNdjson(copy, again, { replace: false });
    expect(fs.readFileSync(again, "utf8")).toBe(text);
  });

  it("refuses a file that exists unless told to replace it, a folder that does not exist, and an empty store, leaving no file", async () => {
    const source = await fresh();
    await importNdjson(
      source,
      ndjsonFile([payment({ payer: addr("b"), payTo: M, amount: 1 }), checkpoint()]),
    );
    const dir = tempDir("x402m-export-");
    const file = path.join(dir, "store.ndjson");
    fs.writeFileSync(file, "kept\n");
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e as ExportError,
      );
    const exists = await refusal(exportNdjson(source, file, { replace: false }));
    expect(exists).toBeInstanceOf(ExportError);
    expect(exists?.message).toBe(`${file}: it exists: pass --replace to write over it`);
    expect(fs.readFileSync(file, "utf8")).toBe("kept\n");
    await exportNdjson(source, file, { replace: true });
    expect(fs.readFileSync(file, "utf8")).toContain('"type":"payment"');

    const nowhere = path.join(dir, "no-such-folder", "store.ndjson");
    expect((await refusal(exportNdjson(source, nowhere, { replace: false })))?.message).toBe(
      `${nowhere}: its folder ${path.dirname(nowhere)} does not exist`,
    );
    const empty = await fresh();
    const none = path.join(dir, "none.ndjson");
    expect((await refusal(exportNdjson(empty, none, { replace: false })))?.message).toBe(
      `${none}: the analytics database holds nothing to export`,
    );
    // Nothing beside the files written on purpose: no part of an export is left behind.
    expect(fs.readdirSync(dir).sort()).toEqual(["store.ndjson"]);
  });

  it("refuses to write over the analytics database's own file or a pipe or device, even told to replace it", async () => {
    const source = await fresh();
    await importNdjson(
      source,
      ndjsonFile([payment({ payer: addr("b"), payTo: M, amount: 1 }), checkpoint()]),
    );
    const refusal = (file: string) =>
      exportNdjson(source, file, { replace: true }).then(
        () => undefined,
        (e: unknown) => (e as ExportError).message,
      );
    const before = fs.readFileSync(source.file);
    expect(await refusal(source.file)).toBe(
      `${source.file}: it is the analytics database's own file (${source.file})`,
    );
    // Through a link, as through its name.
    const link = path.join(tempDir("x402m-export-"), "store.ndjson");
    fs.symlinkSync(source.file, link);
    expect(await refusal(link)).toBe(`${link}: it is the analytics database's own file (${source.file})`);
    expect(fs.readFileSync(source.file).equals(before)).toBe(true);
    expect(await source.one("SELECT count(*) AS n FROM payments")).toEqual({ n: 1n });
    // A named pipe stands for /dev/null and the other devices (the test must not risk those on a regression).
    const fifo = path.join(tempDir("x402m-export-"), "pipe");
    execFileSync("mkfifo", [fifo]);
    expect(await refusal(fifo)).toBe(`${fifo}: it is not a regular file`);
  });
});
