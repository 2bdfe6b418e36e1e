/**
 * A buyer a merchant funded long before its first payment, dormant since: found by coverage however long
 * ago within the lookback, missed past it. A week of blocks stands for the twelve weeks a gamer would wait
 * (a chain of 3.6 million blocks took anvil minutes and 4 GB, too much for every run of the suite); the
 * default lookback's length is checked against twelve weeks directly. The provider in front answers
 * `balanceOf` at past blocks from the Transfer logs, as an archive node does.
 *
 * The week is mined on a devnet without state roots (`stateRoots: false`, from block 0): anvil rebuilds the
 * state trie for every block otherwise, about 5,000 empty blocks a second over the devnet's contracts (63 s
 * of the file's 77 in CI) against tens of thousands without. Nothing the indexer reads changes: the blocks,
 * their 2 s clock, the logs and the gap are the same, and the chain is younger than the default lookback
 * from either genesis, so the history reads back to its first block both ways.
 */
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Analytics } from "../../src/analytics/duckdb.ts";
import { WEEK_BLOCKS } from "../../src/chain/base.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { DEFAULT_FUNDING_LOOKBACK, type IndexerOptions, runIndexer } from "../../src/indexer/index.ts";
import { openTempAnalytics, startTestDevnet } from "../helpers/indexer.ts";
import { type Provider, startProvider } from "../helpers/provider.ts";
import { fundedAccount, mineAll, rpc, sendRaw, sendTransfer, signSettlements } from "../helpers/settle.ts";

const USD = 1_000_000n;
const DORMANT_BLOCKS = WEEK_BLOCKS;
/** One anvil_mine of millions of blocks outlasts fetch's header timeout. */
const MINE_STEP = 200_000;

let devnet: Devnet;
let archive: Provider;
const merchant = derive(701);
const buyer = derive(702);
let funding: Hex;
let fundedAt = 0;
let paidAt = 0;

beforeAll(async () => {
  devnet = await startTestDevnet({
    buyers: 1,
    hardfork: "cancun",
    pruneHistory: 0,
    stateRoots: false,
    genesisNumber: 0,
  });
  archive = await startProvider(devnet.rpc, { hosted: false, archive: devnet.usdc });
  const [bank] = devnet.buyers as [DevnetAccount];
  await fundedAccount(devnet, merchant);
  await mineAll(devnet, [await sendTransfer(devnet, bank, merchant.address, 50n * USD)]);
  funding = await sendTransfer(devnet, merchant, buyer.address, 5n * USD);
  fundedAt = await mineAll(devnet, [funding]);
  for (let mined = 0; mined < DORMANT_BLOCKS; mined += MINE_STEP) {
    const count = Math.min(MINE_STEP, DORMANT_BLOCKS - mined);
    await rpc(devnet.rpc, "anvil_mine", [`0x${count.toString(16)}`, "0x2"]);
  }
  const nonce = Number(
    await rpc<string>(devnet.rpc, "eth_getTransactionCount", [devnet.facilitatorAccount.address, "pending"]),
  );
  const [settlement] = await signSettlements(devnet.usdc, devnet.facilitatorAccount, nonce, [
    { buyer, payTo: merchant.address, amount: USD },
  ]);
  paidAt = await mineAll(devnet, await sendRaw(devnet.rpc, [(settlement as { tx: Hex }).tx]));
  await devnet.mine(2);
}, 120_000);

afterAll(async () => {
  await archive?.close();
  await devnet?.stop();
});

function index(analytics: Analytics, options: Partial<IndexerOptions> = {}) {
  return runIndexer({
    analytics,
    rpc: { url: archive.url },
    registry: FacilitatorRegistry.base().withSigners([devnet.facilitatorAccount.address]),
    fromBlock: paidAt,
    toBlock: paidAt + 2,
    reorgDepth: 8,
    ...options,
  });
}

describe("a buyer funded long ahead and dormant since", () => {
  it("is found within the default lookback and not within a shorter one than its wait", async () => {
    expect(paidAt - fundedAt).toBeGreaterThan(DORMANT_BLOCKS);
    // The default reads further back than the twelve weeks of the gamer's wait the issue names.
    expect(DEFAULT_FUNDING_LOOKBACK).toBeGreaterThan(12 * WEEK_BLOCKS);
    const found = await openTempAnalytics();
    const missed = await openTempAnalytics();
    try {
      await index(found);
      const rows = await found.all<{ tx_hash: string }>("SELECT tx_hash FROM transfers");
      expect(rows.map((r) => r.tx_hash)).toContain(funding);
      const balances = await found.all<{ wallet: string; block_number: bigint; amount: bigint }>(
        "SELECT wallet, block_number, amount FROM balances WHERE wallet = $1",
        [buyer.address.toLowerCase()],
      );
      expect(balances.map((b) => [Number(b.block_number), BigInt(b.amount)])).toEqual([
        [paidAt - 1, 5n * USD],
      ]);

      await index(missed, { fundingLookback: Math.floor(DORMANT_BLOCKS / 2) });
      const none = await missed.all<{ tx_hash: string }>("SELECT tx_hash FROM transfers");
      expect(none.map((r) => r.tx_hash)).not.toContain(funding);
    } finally {
      found.close();
      missed.close();
    }
  }, 60_000);
});
