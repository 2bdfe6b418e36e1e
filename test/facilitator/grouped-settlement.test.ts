/**
 * Settlements committed in groups (issue 66 item 1, docs/facilitator.md "Settlements in groups"): a lone
 * settlement is sent at once in a transaction of its own; the exact EIP-3009 settlements that become ready
 * while it is in flight go together into the next transaction, through Multicall3's `aggregate3`. Each
 * payment is answered on its own, the ledger holds one row each, the indexer counts each paid one once, and
 * a facilitator killed between a group's broadcast and its receipt leaves every payment of it to be settled
 * once after its restart.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { encodeFunctionData, type Hex, parseEther, parseEventLogs, parseGwei } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MULTICALL3_ADDRESS } from "../../src/chain/base.ts";
import { type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { FacilitatorRegistry } from "../../src/chain/facilitators.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { type Database, openDatabase } from "../../src/common/db/index.ts";
import { addKey, listKeys } from "../../src/facilitator/access/index.ts";
import { type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { runIndexer } from "../../src/indexer/index.ts";
import { useDevnet, walletHolding } from "../helpers/chain.ts";
import { isolatedDatabaseOptions, LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { GENESIS, openTempAnalytics } from "../helpers/indexer.ts";
import { eventually } from "../helpers/process.ts";
import { rpc } from "../helpers/settle.ts";
import {
  newMerchant,
  pay,
  requirementsFor,
  transferWithAuthorizationData,
  usdcReader,
} from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 4, genesisNumber: GENESIS });
const PRICE = 1000n;
let usdc: ReturnType<typeof usdcReader>;

beforeAll(() => {
  usdc = usdcReader(chain.devnet.rpc);
});

/** A settling key of its own, with ETH for gas: its nonces meet no other facilitator's on this chain. */
async function newSigner(): Promise<{ key: Hex; address: `0x${string}` }> {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await rpc(chain.devnet.rpc, "anvil_setBalance", [address, "0xde0b6b3a7640000"]);
  return { key, address };
}

/** The ledger rows of `payments`, in their order: state and hash. */
async function rows(db: Database, payments: PaymentPayload[]) {
  const out: { state: string; tx_hash: string | null }[] = [];
  for (const payment of payments) {
    const { authorization: a } = payment.payload as { authorization: { from: string; nonce: string } };
    const { rows: found } = await db.query<{ state: string; tx_hash: string | null }>(
      "SELECT state, tx_hash FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2",
      [a.from.toLowerCase(), a.nonce.toLowerCase()],
    );
    out.push(found[0] ?? { state: "missing", tx_hash: null });
  }
  return out;
}

/** What `from` sends to front-run the group: at a priority fee far above the facilitator's, mined first. */
async function sendFirst(from: DevnetAccount, to: `0x${string}`, data: Hex): Promise<Hex> {
  const account = privateKeyToAccount(from.privateKey);
  const viemChain = devnetChain(chain.devnet.rpc);
  return usdc.client.sendRawTransaction({
    serializedTransaction: await account.signTransaction({
      chainId: viemChain.id,
      type: "eip1559",
      nonce: await usdc.nonceOf(account.address),
      to,
      data,
      gas: 200_000n,
      maxFeePerGas: parseGwei("200"),
      maxPriorityFeePerGas: parseGwei("100"),
    }),
  });
}

/**
 * A lone settlement sent and left unmined (the miner paused), then `settle` of `payments` started: they
 * wait for the next group. Resolves once every one of them waits, with the lone one's answer to come.
 */
async function behindALoneOne<T>(
  untilWaiting: (n: number) => Promise<unknown>,
  settleOne: (payment: PaymentPayload) => Promise<T>,
  lone: PaymentPayload,
  payments: PaymentPayload[],
) {
  chain.miner.pause();
  const first = settleOne(lone);
  expect(await eventually(async () => (await chain.miner.pending()) === 1)).toBe(true);
  const answers = payments.map((p) => settleOne(p));
  // Each verifies before it joins the group, which under load takes as long as it takes: awaited, not timed.
  await untilWaiting(payments.length);
  return { first, answers };
}

describe("settlements in groups, in process", () => {
  let db: Database;
  let close: () => Promise<void>;
  let facilitator: Facilitator;
  let signer: `0x${string}`;

  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(LEDGER_KIND));
    const { key, address } = await newSigner();
    signer = address;
    facilitator = await devnetFacilitator(chain.devnet, db, { privateKey: key, groupSettlements: true });
  });
  afterAll(async () => {
    chain.miner.resume();
    await facilitator?.close();
    await close?.();
  });

  it("sends a lone settlement at once in a transaction of its own, to the token", async () => {
    const [buyer] = chain.devnet.buyers as [DevnetAccount];
    const requirements = requirementsFor(newMerchant(), String(PRICE));
    const payment = await pay(buyer, requirements);
    expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
    const settled = await facilitator.settle(payment, requirements);
    expect(settled).toMatchObject({ success: true });
    const tx = await usdc.client.getTransaction({ hash: settled.transaction as Hex });
    expect(tx.to).toBe(chain.devnet.usdc.toLowerCase());
    expect(tx.from).toBe(signer.toLowerCase());
  });

  it("sends the 20 that wait behind it in one transaction; 3 that fail in it are answered on their own, and the 17 indexed once each", async () => {
    const [b0, b1, , b3] = chain.devnet.buyers as DevnetAccount[] as [
      DevnetAccount,
      DevnetAccount,
      DevnetAccount,
      DevnetAccount,
    ];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, String(PRICE));
    // A wallet that holds the price of one payment, and moves it away before the group is mined.
    const thin = await walletHolding(chain.devnet, PRICE, 2);
    await rpc(chain.devnet.rpc, "anvil_setBalance", [thin.address, "0xde0b6b3a7640000"]);
    const lone = await pay(b1, requirements);
    const payments: PaymentPayload[] = [];
    // Two payments of one payer to one payee for one price in every pair: only each one's own logs tell
    // which of them succeeded.
    for (let i = 0; i < 19; i++) payments.push(await pay(i % 2 === 0 ? b0 : b1, requirements));
    payments.push(await pay(thin, requirements));
    for (const p of [lone, ...payments])
      expect((await facilitator.verify(p, requirements)).isValid).toBe(true);
    const used = [payments[0], payments[2]] as PaymentPayload[];
    const failing = new Set([...used, payments[19] as PaymentPayload]);
    const fromBlock = Number(await rpc(chain.devnet.rpc, "eth_blockNumber"));

    const { first, answers } = await behindALoneOne(
      (n) => facilitator.untilSettlementsWaiting(n),
      (p) => facilitator.settle(p, requirements),
      lone,
      payments,
    );
    await chain.devnet.mine(1);
    const alone = await first;
    expect(alone).toMatchObject({ success: true });
    // The group is broadcast once the lone one's receipt came: every row pending with its one hash.
    expect(
      await eventually(async () => {
        const now = await rows(db, payments);
        return now.every((r) => r.state === "pending" && r.tx_hash === now[0]?.tx_hash);
      }),
    ).toBe(true);
    const group = (await rows(db, payments))[0]?.tx_hash as Hex;
    expect(await chain.miner.pending()).toBe(1);

    // Before the group is mined, two of its authorizations are submitted by someone else, and the thin
    // wallet's money leaves it: their calls fail inside the group, the others do not.
    for (const p of used) await sendFirst(b3, chain.devnet.usdc, transferWithAuthorizationData(p));
    await sendFirst(
      thin,
      chain.devnet.usdc,
      encodeFunctionData({ abi: usdcAbi, functionName: "transfer", args: [b3.address, PRICE] }),
    );
    expect(await eventually(async () => (await chain.miner.pending()) === 4)).toBe(true);
    await chain.devnet.mine(1);
    chain.miner.resume();

    const answered = await Promise.all(answers);
    const receipt = await usdc.receipt(group);
    expect(receipt.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
    expect(receipt.from).toBe(signer.toLowerCase());
    expect(receipt.status).toBe("success");
    // Mined after the three that front-ran it.
    const block = await usdc.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.transactions.indexOf(group)).toBe(3);

    payments.forEach((p, i) => {
      const answer = answered[i];
      if (failing.has(p)) {
        expect(answer, `payment ${i}`).toMatchObject({
          success: false,
          errorReason: "invalid_transaction_state",
          transaction: group,
          payer: (p.payload as { authorization: { from: string } }).authorization.from,
        });
      } else {
        expect(answer, `payment ${i}`).toMatchObject({ success: true, transaction: group });
      }
    });
    expect(await rows(db, payments)).toEqual(
      payments.map((p) => ({ state: failing.has(p) ? "failed" : "settled", tx_hash: group })),
    );
    // One success each: a repeat is told the nonce is used; a failure is answered again as it was.
    expect(await facilitator.settle(payments[1] as PaymentPayload, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await facilitator.settle(payments[0] as PaymentPayload, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_transaction_state",
      transaction: group,
    });

    // On chain: 17 AuthorizationUsed + Transfer pairs in the group, each of its own authorization.
    const logs = parseEventLogs({ abi: usdcAbi, logs: receipt.logs });
    expect(logs.filter((l) => l.eventName === "AuthorizationUsed")).toHaveLength(17);
    expect(logs.filter((l) => l.eventName === "Transfer")).toHaveLength(17);
    // The merchant got the lone payment, the 17, and the two used elsewhere (sent to it by someone else).
    expect(await usdc.balanceOf(merchant)).toBe(PRICE * 20n);

    // The indexer: the group's 17 payments once each, none of its 3 failed calls; the two front-runs were
    // sent by a wallet no registry knows: candidates, not payments.
    const analytics = await openTempAnalytics();
    try {
      const head = Number(await rpc(chain.devnet.rpc, "eth_blockNumber"));
      await runIndexer({
        analytics,
        rpc: { url: chain.devnet.rpc },
        registry: FacilitatorRegistry.base().withSigners([signer]),
        fromBlock,
        toBlock: head,
        reorgDepth: 4,
      });
      const indexed = await analytics.all<{
        tx_hash: string;
        payer: string;
        amount: bigint;
        log_index: number;
      }>(
        "SELECT tx_hash, payer, amount, log_index FROM payments WHERE pay_to = $m ORDER BY block_number, log_index",
        { m: merchant.toLowerCase() },
      );
      expect(indexed).toHaveLength(18);
      expect(indexed.filter((p) => p.tx_hash === alone.transaction.toLowerCase())).toHaveLength(1);
      const inGroup = indexed.filter((p) => p.tx_hash === group);
      expect(inGroup).toHaveLength(17);
      expect(new Set(inGroup.map((p) => p.log_index)).size).toBe(17);
      const paidBy = (list: PaymentPayload[]) =>
        list
          .map((p) => (p.payload as { authorization: { from: string } }).authorization.from.toLowerCase())
          .sort();
      expect(inGroup.map((p) => p.payer).sort()).toEqual(paidBy(payments.filter((p) => !failing.has(p))));
      expect(inGroup.every((p) => p.amount === PRICE)).toBe(true);
      const candidates = await analytics.all<{ sender: string }>(
        "SELECT sender FROM facilitator_candidates WHERE pay_to = $m",
        { m: merchant.toLowerCase() },
      );
      expect(candidates.map((c) => c.sender)).toEqual([b3.address.toLowerCase(), b3.address.toLowerCase()]);
    } finally {
      analytics.close();
    }
  });

  it("settles once a payment sent three times at once into a group, and of two a wallet can afford only one, sends one", async () => {
    const [b0] = chain.devnet.buyers as [DevnetAccount];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, String(PRICE));
    // Holds the price of one payment; it signs two, each covered on its own, so both verify.
    const thin = await walletHolding(chain.devnet, PRICE, 2);
    const lone = await pay(b0, requirements);
    const repeated = await pay(b0, requirements);
    const affordable = [await pay(thin, requirements), await pay(thin, requirements)];
    for (const p of [lone, repeated, ...affordable])
      expect((await facilitator.verify(p, requirements)).isValid).toBe(true);
    const sent = await usdc.nonceOf(signer);
    const { first, answers } = await behindALoneOne(
      // The three identical requests share one settlement, and the thin wallet's second waits for its first
      // to end (payer-funds.ts): two wait for the group, not five.
      () => facilitator.untilSettlementsWaiting(2),
      (p) => facilitator.settle(p, requirements),
      lone,
      [repeated, repeated, repeated, ...affordable],
    );
    await chain.devnet.mine(1);
    chain.miner.resume();
    expect(await first).toMatchObject({ success: true });
    const answered = await Promise.all(answers);
    const [r1, r2, r3, t1, t2] = answered;
    expect([r1, r2, r3].filter((a) => a?.success)).toHaveLength(1);
    // Of the thin wallet's two, whichever enters first is sent in the group; the other, decided on the balance
    // the group left, is refused unsent, as the single path refuses it.
    const paid = [t1, t2].filter((a) => a?.success);
    expect(paid).toHaveLength(1);
    expect([t1, t2].find((a) => !a?.success)).toMatchObject({
      errorReason: reasons.INSUFFICIENT_FUNDS,
      transaction: "",
    });
    // The lone one, then one group holding the repeated payment once and the thin wallet's paid one.
    expect(await usdc.nonceOf(signer)).toBe(sent + 2);
    const group = await usdc.client.getTransaction({ hash: paid[0]?.transaction as Hex });
    expect(group.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
    expect(await usdc.balanceOf(merchant)).toBe(PRICE * 3n);
    expect(await usdc.balanceOf(thin.address)).toBe(0n);
    expect((await rows(db, affordable)).map((r) => r.state).sort()).toEqual(["settled", "verified"]);
  });

  it("refuses before sending a call its simulation fails, as alone, and sends the others together", async () => {
    const [b0, b1] = chain.devnet.buyers as [DevnetAccount, DevnetAccount];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, String(PRICE));
    const lone = await pay(b0, requirements);
    const payments = [await pay(b0, requirements), await pay(b1, requirements), await pay(b1, requirements)];
    for (const p of [lone, ...payments])
      expect((await facilitator.verify(p, requirements)).isValid).toBe(true);
    const { first, answers } = await behindALoneOne(
      (n) => facilitator.untilSettlementsWaiting(n),
      (p) => facilitator.settle(p, requirements),
      lone,
      payments,
    );
    // Used elsewhere in the lone one's block: the group's simulation finds it spent.
    await sendFirst(
      chain.devnet.buyers[3] as DevnetAccount,
      chain.devnet.usdc,
      transferWithAuthorizationData(payments[0] as PaymentPayload),
    );
    expect(await eventually(async () => (await chain.miner.pending()) === 2)).toBe(true);
    await chain.devnet.mine(1);
    chain.miner.resume();
    expect(await first).toMatchObject({ success: true });
    const [spent, ...rest] = await Promise.all(answers);
    expect(spent).toMatchObject({ success: false, errorReason: reasons.NONCE_ALREADY_USED, transaction: "" });
    expect(rest[0]).toMatchObject({ success: true });
    expect(rest[1]).toMatchObject({ success: true, transaction: rest[0]?.transaction });
    const tx = await usdc.client.getTransaction({ hash: rest[0]?.transaction as Hex });
    expect(tx.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
    expect((await rows(db, payments)).map((r) => r.state)).toEqual(["verified", "settled", "settled"]);
  });

  it("charges each keyed settlement of a group its share of the transaction's cost", async () => {
    const [b0, b1] = chain.devnet.buyers as [DevnetAccount, DevnetAccount];
    const payee = newMerchant();
    const { key, apiKey } = await addKey(db, {
      name: "group",
      payees: [payee.toLowerCase()],
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 1000,
    });
    const requirements = requirementsFor(payee, String(PRICE));
    const post = async (route: string, payment: PaymentPayload) => {
      const response = await facilitator.app.request(route, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements }),
      });
      return (await response.json()) as { success?: boolean; isValid?: boolean; transaction?: Hex };
    };
    const lone = await pay(b0, requirements);
    const payments = [b0, b1, b0, b1].map((b) => pay(b, requirements));
    const group = await Promise.all(payments);
    for (const p of [lone, ...group]) expect(await post("/verify", p)).toMatchObject({ isValid: true });
    const { first, answers } = await behindALoneOne(
      (n) => facilitator.untilSettlementsWaiting(n),
      (p) => post("/settle", p),
      lone,
      group,
    );
    await chain.devnet.mine(1);
    chain.miner.resume();
    const alone = await first;
    const answered = await Promise.all(answers);
    expect(alone).toMatchObject({ success: true });
    const hash = answered[0]?.transaction as Hex;
    expect(answered.every((a) => a.success === true && a.transaction === hash)).toBe(true);

    const cost = async (h: Hex) => {
      const receipt = await usdc.receipt(h);
      return receipt.gasUsed * receipt.effectiveGasPrice;
    };
    const share = ((await cost(hash)) + 3n) / 4n;
    const { rows: charges } = await db.query<{ state: string; charged_wei: string; tx_hash: string }>(
      "SELECT state, charged_wei, tx_hash FROM facilitator_key_charges WHERE key_id = $1 ORDER BY tx_hash",
      [apiKey.id],
    );
    expect(
      charges
        .map((c) => [c.state, BigInt(c.charged_wei), c.tx_hash])
        .sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
    ).toEqual(
      [
        ["charged", await cost(alone.transaction as Hex), alone.transaction],
        ...group.map(() => ["charged", share, hash]),
      ].sort((a, b) => String(a[2]).localeCompare(String(b[2]))),
    );
    const day = (await listKeys(db)).find((k) => k.id === apiKey.id);
    expect(day?.reservedWei).toBe(0n);
  });
});

describe("a facilitator killed between a group's broadcast and its receipt", () => {
  it("settles every payment of the group once after its restart, sending nothing again", async () => {
    const options = await isolatedDatabaseOptions(LEDGER_KIND, "merchants");
    const { key, address: signer } = await newSigner();
    const fixture = path.join(import.meta.dirname, "fixtures", "grouped-facilitator.ts");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        fixture,
        JSON.stringify({
          rpc: chain.devnet.rpc,
          key,
          pgliteDir: options.pgliteDir,
          databaseUrl: options.databaseUrl,
        }),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let facilitator: Facilitator | undefined;
    let db: Database | undefined;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split("\n").find((l) => l.startsWith("{"));
          if (line) resolve((JSON.parse(line) as { url: string }).url);
        });
        exited.then(() => reject(new Error(`the facilitator exited: ${stderr}`)));
      });
      const post = async (route: string, payment: PaymentPayload, requirements: PaymentRequirements) => {
        const response = await fetch(`${url}${route}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            x402Version: 2,
            paymentPayload: payment,
            paymentRequirements: requirements,
          }),
        });
        return (await response.json()) as Record<string, unknown>;
      };
      const [b0, b1] = chain.devnet.buyers as [DevnetAccount, DevnetAccount];
      const merchant = newMerchant();
      const requirements = requirementsFor(merchant, String(PRICE));
      const lone = await pay(b0, requirements);
      const payments: PaymentPayload[] = [];
      for (let i = 0; i < 20; i++) payments.push(await pay(i % 2 === 0 ? b0 : b1, requirements));
      for (const p of [lone, ...payments])
        expect(await post("/verify", p, requirements)).toMatchObject({ isValid: true });

      const { first } = await behindALoneOne(
        (n) => fetch(`${url}/waiting?at_least=${n}`).then((r) => r.json()),
        (p) => post("/settle", p, requirements).catch(() => "killed"),
        lone,
        payments,
      );
      await chain.devnet.mine(1);
      expect(await first).toMatchObject({ success: true });
      // The group broadcast (its hash recorded before), not mined: killed now.
      expect(await eventually(() => stderr.includes('"msg":"settlement group sent"'), 10_000)).toBe(true);
      expect(stderr).toContain('"size":20');
      expect(await chain.miner.pending()).toBe(1);
      child.kill("SIGKILL");
      await exited;
      await chain.devnet.mine(1);
      chain.miner.resume();

      // Restarted on the same ledger: the chain decides every pending row, once.
      db = await openDatabase(options);
      facilitator = await devnetFacilitator(chain.devnet, db, { privateKey: key, groupSettlements: true });
      expect(await facilitator.resolvePending()).toEqual({ checked: 20, resolved: 20 });
      const settled = await rows(db, payments);
      const group = settled[0]?.tx_hash as Hex;
      expect(settled).toEqual(payments.map(() => ({ state: "settled", tx_hash: group })));
      const receipt = await usdc.receipt(group);
      expect(receipt.to).toBe(MULTICALL3_ADDRESS.toLowerCase());
      // The merchants' retries: each gets its success once, from the ledger; nothing is sent again.
      for (const p of payments) {
        expect(await facilitator.settle(p, requirements)).toMatchObject({
          success: true,
          transaction: group,
        });
        expect(await facilitator.settle(p, requirements)).toMatchObject({
          success: false,
          errorReason: reasons.NONCE_ALREADY_USED,
        });
      }
      expect(await usdc.balanceOf(merchant)).toBe(PRICE * 21n);
      expect(await usdc.nonceOf(signer)).toBe(2);
    } finally {
      chain.miner.resume();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await facilitator?.close();
      await db?.close();
      await options.cleanup();
    }
  }, 60_000);
});
