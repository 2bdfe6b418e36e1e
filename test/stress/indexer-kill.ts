/**
 * The indexer killed with SIGKILL at random moments while it follows a devnet with paying traffic, and
 * restarted each time; at the end its store is compared with the chain's own logs: every settlement the
 * traffic made must be stored exactly once.
 */
import { Analytics } from "../../src/analytics/duckdb.ts";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import { derive } from "../../src/chain/devnet/index.ts";
import { GENESIS, startTestDevnet, tempDir } from "../helpers/indexer.ts";
import { seeded } from "../helpers/rpc-proxy.ts";
import { type Paid, rpc, Settler } from "../helpers/settle.ts";
import { runCli, startCli } from "./child.ts";
import type { Scenario } from "./scenario.ts";

export const indexerKill: Scenario = {
  name: "indexer-kill",
  about:
    "index --follow on a devnet with settlements every block, SIGKILLed at random moments (mid-batch included) and restarted; then every settlement is looked for in the store. Goal: 0 lost, 0 duplicated.",
  async run({ seed, quick, say }) {
    const random = seeded(seed);
    const kills = quick ? 4 : 10;
    const devnet = await startTestDevnet({ buyers: 6 });
    const data = tempDir("x402m-stress-index-");
    const settler = new Settler(devnet, devnet.facilitatorAccount);
    const paid: Paid[] = [];
    let traffic = true;
    let trafficError: unknown;
    // A block every ~100 ms with 1-4 settlements: the indexer always has a batch in flight to be killed in.
    const producing = (async () => {
      let i = 0;
      while (traffic) {
        const orders = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
          buyer: devnet.buyers[i++ % devnet.buyers.length] as DevnetAccount,
          payTo: derive(200 + Math.floor(random() * 8)).address,
          amount: BigInt(1_000 + Math.floor(random() * 100_000)),
        }));
        paid.push(...(await settler.settle(orders)));
        await devnet.mine(1);
        await new Promise((r) => setTimeout(r, 100));
      }
    })().catch((error) => {
      trafficError = error;
    });

    const args = [
      "index",
      "--rpc",
      devnet.rpc,
      "--from-block",
      String(GENESIS + 1),
      "--facilitator",
      devnet.facilitatorAccount.address,
      "--reorg-depth",
      "1",
      "--poll-ms",
      "50",
      "--batch-blocks",
      "3",
      "--funding-lookback",
      "0",
      "--data",
      data,
    ];
    const killedAfterMs: number[] = [];
    let afterCommit = 0;
    try {
      for (let k = 0; k < kills; k++) {
        const follower = startCli([...args, "--follow"]);
        // Alive for 0.5-4 s: sometimes still starting or catching up, sometimes mid-batch while following.
        const lifeMs = 500 + Math.floor(random() * 3_500);
        await new Promise((r) => setTimeout(r, lifeMs));
        if (follower.child.exitCode !== null) {
          throw new Error(
            `the indexer stopped by itself (${follower.child.exitCode}): ${follower.stderr().slice(-500)}`,
          );
        }
        // A kill after the first commit of this life lands while it follows: between or inside batches.
        if (follower.lines.some((l) => l.msg === "indexed")) afterCommit++;
        follower.kill();
        await follower.exit;
        killedAfterMs.push(lifeMs);
        say(`kill ${k + 1}/${kills} after ${lifeMs} ms (${paid.length} settlements so far)`);
      }
    } finally {
      traffic = false;
      await producing;
    }
    if (trafficError) throw trafficError;
    await devnet.mine(3);
    const head = Number(await rpc<string>(devnet.rpc, "eth_blockNumber"));
    // A last run to the head (after the reorg depth) without a kill: what the restarts left must finish cleanly.
    const last = await runCli([...args, "--to-block", String(head - 1)]);
    if (last.code !== 0) throw new Error(`the final index run failed: ${last.stderr.slice(-500)}`);

    // The chain's own record of what was settled: each traffic transaction's receipt and its block.
    const expected = new Map<string, Paid>();
    for (const p of paid) expected.set(p.tx.toLowerCase(), p);
    const analytics = await Analytics.open({ dataDir: data, threads: 1 });
    let stored: { tx_hash: string; n: bigint; payer: string; pay_to: string; amount: bigint }[];
    try {
      stored = await analytics.all(
        "SELECT tx_hash, count(*) AS n, any_value(payer) AS payer, any_value(pay_to) AS pay_to, any_value(amount) AS amount FROM payments GROUP BY tx_hash",
      );
    } finally {
      analytics.close();
    }
    const byHash = new Map(stored.map((r) => [r.tx_hash.toLowerCase(), r]));
    let lost = 0;
    let wrong = 0;
    for (const [hash, p] of expected) {
      const row = byHash.get(hash);
      if (!row) lost++;
      else if (
        row.payer !== p.payer.toLowerCase() ||
        row.pay_to !== p.payTo.toLowerCase() ||
        row.amount !== p.amount
      )
        wrong++;
    }
    const duplicated = stored.reduce((n, r) => n + Number(r.n) - 1, 0);
    const unknown = stored.filter((r) => !expected.has(r.tx_hash.toLowerCase())).length;
    await devnet.stop();
    const failures: string[] = [];
    if (lost > 0) failures.push(`${lost} settlements lost`);
    if (duplicated > 0) failures.push(`${duplicated} payments duplicated`);
    if (wrong > 0) failures.push(`${wrong} payments stored with the wrong payer, merchant or amount`);
    if (unknown > 0) failures.push(`${unknown} stored payments the traffic never made`);
    return {
      figures: {
        kills,
        "kills after a commit": afterCommit,
        settlements: expected.size,
        stored: stored.length,
        lost,
        duplicated,
        wrong,
        "life before kill (ms)": `${Math.min(...killedAfterMs)}-${Math.max(...killedAfterMs)}`,
      },
      failures,
    };
  },
};
