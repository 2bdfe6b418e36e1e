/**
 * `export` and `import` move a store: a devnet week with payment channels (deposits, claims, a sweep, a refund,
 * a timed withdrawal, and a merchant whose money comes back to it through a channel of a wallet it funded),
 * indexed, written out by `export` and imported by `import` into a fresh store, gives every merchant's report,
 * its evidence and the flag feed byte for byte as the indexed store gives them; the exact payments carry ERC-8021
 * builder codes, which the evidence shows. The same week written three ways (the channel records; the records and
 * the chain's own USDC transfers into and out of the escrow and its deposit collector; those transfers and the
 * claims as payments, without the records) gives the same reports each way. Bad input to `export` is one
 * line and a non-zero exit.
 */
import fs from "node:fs";
import path from "node:path";
import type { FacilitatorContext, FacilitatorExtension } from "@x402/core/types";
import { ExactEvmScheme as ExactFacilitator } from "@x402/evm/exact/facilitator";
import { BUILDER_CODE, BuilderCodeFacilitatorExtension } from "@x402/extensions/builder-code";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Analytics, openAnalytics } from "../../src/analytics/duckdb.ts";
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
} from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import type { Devnet, DevnetAccount } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { decodeLog, TRANSFER_TOPIC } from "../../src/indexer/decode.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import type { RawLog } from "../../src/indexer/raw-log.ts";
import { ReportService } from "../../src/reports/index.ts";
import { startMiner } from "../helpers/chain.ts";
import {
  channelConfig,
  claimChannel,
  depositErc3009,
  type FacilitatorOf,
  facilitatorOf,
  MIN_WITHDRAW_DELAY,
  payExactPermit2,
  walletOf,
} from "../helpers/channels.ts";
import { runMain } from "../helpers/in-process.ts";
import { GENESIS, startTestDevnet, tempDir } from "../helpers/indexer.ts";
import { rpc } from "../helpers/settle.ts";
import { newMerchant, pay, requirementsFor } from "../helpers/x402.ts";

let devnet: Devnet;
let head: number;
/** The indexed store's data directory. */
let indexed: string;
const shop = newMerchant();

/** The SDK's builder-code extension with a facilitator's code, as a facilitator hands it to its schemes. */
const BUILDER = new BuilderCodeFacilitatorExtension({ builderCode: "export_facilitator" });
const WITH_CODES: FacilitatorContext = {
  getExtension: <T extends FacilitatorExtension>(key: string) =>
    (key === BUILDER_CODE ? BUILDER : undefined) as T | undefined,
};

/**
 * An exact EIP-3009 payment, settled by the SDK's facilitator as the devnet's facilitator account; the payment
 * names its app, as a client copies it from a 402, and the settlement ends with the codes.
 */
async function payExact(f: FacilitatorOf, buyer: DevnetAccount, payTo: `0x${string}`, amount: string) {
  const requirements = requirementsFor(payTo, amount);
  const payload = {
    ...(await pay(buyer, requirements)),
    extensions: { [BUILDER_CODE]: { info: { a: "export_app", s: ["export_agent"] } } },
  };
  const settled = await new ExactFacilitator(f.signer).settle(payload, requirements, WITH_CODES);
  if (!settled.success) throw new Error(`exact payment refused: ${JSON.stringify(settled)}`);
  await f.receiptOf(settled.transaction as `0x${string}`);
}

/** The week on chain: every kind of move a channel makes, beside exact payments. */
async function playWeek(): Promise<void> {
  const f = facilitatorOf(devnet);
  const [b0, b1, b2] = devnet.buyers as [DevnetAccount, DevnetAccount, DevnetAccount];
  await payExact(f, b0, shop, "5000");
  await payExactPermit2(devnet, f, b1, shop, 250_000n);
  // b0's channel to the shop: deposit, two claims, the sweep, a refund, and the rest withdrawn by the payer.
  const config = channelConfig(devnet, b0.address, shop);
  await depositErc3009(devnet, f, b0, config, 2_000_000n);
  await claimChannel(f, b0, config, 300_000n);
  await claimChannel(f, b0, config, 750_000n);
  await f.escrow("settle", [shop, devnet.usdc]);
  await f.escrow("refund", [config, 500_000n]);
  // A merchant (b2) funds a fresh wallet whose channel pays the merchant back: flagged, once indexed.
  // A fixed key: the channel's id, its payer's and the merchant's addresses sort in one order every run, as the
  // evidence's cluster is named by its lowest wallet (the third test compares the week read without the id).
  const key = `0x${"5a".repeat(32)}` as const;
  const funded = { address: privateKeyToAccount(key).address, privateKey: key };
  await f.receiptOf(
    await walletOf(devnet, b2).writeContract({
      address: devnet.usdc,
      abi: usdcAbi,
      functionName: "transfer",
      args: [funded.address, 600_000n],
    }),
  );
  const loop = channelConfig(devnet, funded.address, b2.address, 2n);
  await depositErc3009(devnet, f, funded, loop, 600_000n);
  await claimChannel(f, funded, loop, 400_000n);
  await payExact(f, b1, b2.address, "20000");
  const payer = walletOf(devnet, b0);
  const escrow = { address: X402_BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const;
  await f.receiptOf(
    await payer.writeContract({
      ...escrow,
      functionName: "initiateWithdraw",
      args: [config, 750_000n],
    } as never),
  );
  // Last: the delay passes on the chain's own clock, 2 s a block as on Base (the indexer's rule), which puts
  // the chain ahead of the wall clock that signed authorizations expire by.
  await devnet.mine(MIN_WITHDRAW_DELAY / 2 + 1);
  await f.receiptOf(
    await payer.writeContract({ ...escrow, functionName: "finalizeWithdraw", args: [config] } as never),
  );
}

beforeAll(async () => {
  devnet = await startTestDevnet({ buyers: 3 });
  const miner = startMiner(devnet);
  try {
    await playWeek();
  } finally {
    await miner.stop();
  }
  await devnet.mine(2);
  head = Number(await rpc(devnet.rpc, "eth_blockNumber"));
  indexed = tempDir("x402m-export-indexed-");
  const analytics = await openAnalytics({ dataDir: indexed, duckdbMemory: "256MB", duckdbThreads: 1 });
  try {
    await runIndexer({
      analytics,
      rpc: { url: devnet.rpc },
      registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
      fromBlock: GENESIS + 1,
      toBlock: head,
      reorgDepth: 4,
    });
  } finally {
    analytics.close();
  }
}, 120_000);
afterAll(() => devnet?.stop());

/** Everything a store's readers publish of its latest window, as the bytes they publish. */
async function published(dataDir: string): Promise<Record<string, string>> {
  const analytics: Analytics = await openAnalytics({ dataDir, duckdbMemory: "256MB", duckdbThreads: 1 });
  try {
    // One clock for both: a report says when its window was built.
    const service = new ReportService(analytics, {
      publicUrl: "https://r.test",
      now: () => new Date(Date.UTC(2030, 0, 1)),
    });
    const out: Record<string, string> = {};
    const reports = await service.readReports();
    out.window = JSON.stringify(reports.window);
    for await (const batch of reports.batches)
      for (const body of batch) out[`report ${(JSON.parse(body) as { address: string }).address}`] = body;
    for await (const batch of (await service.readMerchants()).batches)
      for (const m of batch) {
        out[`details ${m.report.address}`] = JSON.stringify(m.details);
        out[`evidence ${m.report.address}`] = JSON.stringify(m.evidence);
      }
    const flags: string[] = [];
    for await (const batch of (await service.readFlags()).batches)
      flags.push(...batch.map((r) => JSON.stringify(r)));
    out.flags = flags.join("\n");
    return out;
  } finally {
    analytics.close();
  }
}

/** The store's export, as its lines. */
async function exportLines(dataDir: string): Promise<Record<string, unknown>[]> {
  const file = path.join(tempDir("x402m-export-file-"), "week.ndjson");
  const exported = await runMain(["export", file, "--data", dataDir]);
  expect(exported.code, exported.stderr).toBe(0);
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `lines` imported into a fresh store: its data directory. */
async function importedStore(lines: readonly object[]): Promise<string> {
  const file = path.join(tempDir("x402m-export-way-"), "week.ndjson");
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  const dir = tempDir("x402m-export-way-store-");
  const imported = await runMain(["import", file, "--data", dir]);
  expect(imported.code, imported.stderr).toBe(0);
  const checked = await runMain(["check", "--data", dir, "--json"]);
  expect(checked.code, checked.stdout).toBe(0);
  return dir;
}

/**
 * The chain's own USDC transfers into and out of the escrow and its deposit collectors, as transfer lines: what
 * a file written from the token's logs alone holds of the channels (the indexer stores none of them).
 */
async function escrowTransfers(): Promise<Record<string, unknown>[]> {
  const plumbing = new Set(
    [X402_BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, PERMIT2_DEPOSIT_COLLECTOR_ADDRESS].map(
      (a) => a.toLowerCase(),
    ),
  );
  const hex = (n: number) => `0x${n.toString(16)}`;
  const logs = await rpc<RawLog[]>(devnet.rpc, "eth_getLogs", [
    { fromBlock: hex(GENESIS + 1), toBlock: hex(head), address: devnet.usdc, topics: [TRANSFER_TOPIC] },
  ]);
  const lines: Record<string, unknown>[] = [];
  for (const raw of logs) {
    const log = decodeLog(raw);
    if (log?.kind !== "transfer" || !(plumbing.has(log.from) || plumbing.has(log.to))) continue;
    const block = await rpc<{ timestamp: string }>(devnet.rpc, "eth_getBlockByNumber", [
      raw.blockNumber,
      false,
    ]);
    lines.push({
      type: "transfer",
      chain: "base",
      tx_hash: log.tx,
      log_index: log.logIndex,
      block_number: log.block,
      block_time: Number(block.timestamp),
      from: log.from,
      to: log.to,
      amount: String(log.value),
    });
  }
  return lines;
}

describe("export, then import into a fresh store", () => {
  it("gives the indexed week's reports, evidence and flag feed, byte for byte", async () => {
    const file = path.join(tempDir("x402m-export-file-"), "week.ndjson");
    const exported = await runMain(["export", file, "--data", indexed]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ file, channel: 2, channel_event: 11 });
    const events = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes('"type":"channel_event"'))
      .map((l) => (JSON.parse(l) as { event: string }).event);
    expect(new Set(events)).toEqual(
      new Set([
        "created",
        "deposited",
        "claimed",
        "swept",
        "refunded",
        "withdrawInitiated",
        "withdrawFinalized",
      ]),
    );
    const copy = tempDir("x402m-export-copy-");
    const imported = await runMain(["import", file, "--data", copy]);
    expect(imported.code, imported.stderr).toBe(0);
    // The imported store is whole by the store's own invariants (one time a block, one row a key).
    const checked = await runMain(["check", "--data", copy, "--json"]);
    expect(checked.code, checked.stdout).toBe(0);

    const [from, to] = [await published(indexed), await published(copy)];
    // The week is what it should be: both merchants, the shop paid by channel, the loop flagged.
    const [b2] = [(devnet.buyers[2] as DevnetAccount).address.toLowerCase()];
    const shopReport = JSON.parse(from[`report ${shop.toLowerCase()}`] as string);
    expect(shopReport.schemes["batch-settlement"]).toMatchObject({ tx: 2, usd: 0.75 });
    expect(JSON.parse(from[`report ${b2}`] as string).flags).toEqual({
      merchant_funded: { tx: 1, usd: 0.4 },
    });
    // The exact payment's codes, as the evidence shows them: the import carried them.
    expect(JSON.parse(from[`evidence ${shop.toLowerCase()}`] as string).apps.apps).toEqual([
      { app: "export_app", tx: 1, usd: 0.005 },
    ]);
    expect(Object.keys(to).sort()).toEqual(Object.keys(from).sort());
    for (const key of Object.keys(from)) expect(to[key], key).toBe(from[key]);
  });

  it("gives the same reports from the channel records, the escrow's transfers, or both", async () => {
    const records = await exportLines(indexed);
    const transfers = await escrowTransfers();
    // The chain's own: two deposits into the collector and on to the escrow, the sweep, the refund, the withdrawal.
    expect(transfers).toHaveLength(7);
    const channels = new Map(
      records
        .filter((l) => l.type === "channel")
        .map((l) => [l.channel as string, l as { payer: string; receiver: string }]),
    );
    // Without the records, a claim is a payment line of the payer to the receiver, as any indexer of payments
    // writes one (keyed by its Claimed log).
    const claims = records
      .filter((l) => l.type === "channel_event" && l.event === "claimed")
      .map((l) => {
        const config = channels.get(l.channel as string) as { payer: string; receiver: string };
        return {
          type: "payment",
          chain: "base",
          tx_hash: l.tx_hash,
          log_index: l.log_index,
          block_number: l.block_number,
          block_time: l.block_time,
          facilitator: l.sender,
          payer: config.payer,
          pay_to: config.receiver,
          amount: l.amount,
          scheme: "batch-settlement",
          transfer_method: "channel",
        };
      });
    expect(claims).toHaveLength(3);
    const without = records.filter((l) => l.type !== "channel" && l.type !== "channel_event");
    const ways = {
      records: await importedStore(records),
      both: await importedStore([...records, ...transfers]),
      transfers: await importedStore([...without, ...claims, ...transfers]),
    };
    const truth = await published(indexed);
    const b2 = (devnet.buyers[2] as DevnetAccount).address.toLowerCase();
    for (const [way, dir] of Object.entries(ways)) {
      let got = await published(dir);
      // Without the records, a payer's channels are one wallet named after the payer (docs/import.md): the week's
      // payers have one channel each, so naming it by that channel's id gives the truth's bytes.
      if (way === "transfers")
        for (const [id, config] of channels) {
          const pool = `0x${"f".repeat(24)}${config.payer.slice(2)}`;
          got = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.replaceAll(pool, id)]));
        }
      // The loop's claim is flagged every way: the merchant's money came back to it through the channel.
      expect(JSON.parse(got[`report ${b2}`] as string).flags, way).toEqual({
        merchant_funded: { tx: 1, usd: 0.4 },
      });
      expect(Object.keys(got).sort(), way).toEqual(Object.keys(truth).sort());
      for (const key of Object.keys(truth)) expect(got[key], `${way}: ${key}`).toBe(truth[key]);
    }
  });

  it("refuses bad input in one line with a non-zero exit, writing no file", async () => {
    const dir = tempDir("x402m-export-bad-");
    const file = path.join(dir, "week.ndjson");
    fs.writeFileSync(file, "mine\n");
    const cases: [string[], number, string][] = [
      [["export", "--data", indexed], 2, "export takes exactly one FILE.ndjson"],
      [["export", file, "--data", indexed], 1, `${file}: it exists: pass --replace to write over it`],
      [
        ["export", path.join(dir, "x.ndjson"), "--data", path.join(dir, "none")],
        1,
        "there is no analytics store at",
      ],
      [["export", path.join(dir, "no", "x.ndjson"), "--data", indexed], 1, "does not exist"],
      [["export", path.join(dir, "x.ndjson"), "--data", indexed, "--follow"], 2, "--follow"],
    ];
    for (const [argv, code, says] of cases) {
      const run = await runMain(argv);
      expect(run.code, argv.join(" ")).toBe(code);
      expect(run.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
      expect(run.stderr, argv.join(" ")).toContain(says);
    }
    expect(fs.readdirSync(dir)).toEqual(["week.ndjson"]);
    expect(fs.readFileSync(file, "utf8")).toBe("mine\n");
  });
});
