/**
 * Merchants on hosted facilitators, for real on a devnet: the project's facilitator (two of them, with
 * their own signers and ledgers) behind stand-ins on 127.0.0.1 that check credentials as a hosted one
 * does (a CDP API key JWT, or a bearer key: test/helpers/cdp-facilitator.ts), and fail on demand. The
 * merchant host is built as `serve` builds it, from the settings (`configuredFacilitators`).
 *
 * Money is counted on the chain: every `Transfer` to the merchant, who sent its transaction, and every
 * buyer's balance. A buyer answered 200 was charged exactly once, one answered otherwise not at all,
 * and a handler ran only for a payment that settled.
 */
import { wrapFetchWithPayment } from "@x402/fetch";
import { parseAbiItem } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, startDevnet } from "../../../../src/chain/devnet/index.ts";
import { type Listening, listen } from "../../../../src/common/listen.ts";
import { sleep } from "../../../../src/common/sleep.ts";
import type { Facilitator } from "../../../../src/facilitator/index.ts";
import { loadConfig } from "../../../../src/services/config.ts";
import { configuredFacilitators } from "../../../../src/services/merchants.ts";
import { type StandIn, startStandIn, type TestCdpKey, testCdpKey } from "../../../helpers/cdp-facilitator.ts";
import { type Miner, startMiner } from "../../../helpers/chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase, storesByKind } from "../../../helpers/db.ts";
import { devnetFacilitator } from "../../../helpers/facilitator.ts";
import { runs, startMerchant, testMerchant } from "../../../helpers/merchant.ts";
import { rpc } from "../../../helpers/settle.ts";
import { newMerchant, usdcReader, x402ClientFor } from "../../../helpers/x402.ts";

/** `/api/echo`'s price, atomic units. */
const PRICE = 2_000n;
const BUYERS_PER_CASE = 6;
const CALLS_PER_BUYER = 3;
/** Settlements the first facilitator makes before its outage. */
const SETTLED_BEFORE_OUTAGE = 3;
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
/** The failover's timings, short: the chain is watched for 300 ms after an unknown outcome. */
const TIMINGS = { settledGraceMs: 300, pollMs: 20, restMs: 60_000 };

let devnet: Devnet;
let miner: Miner;
let usdc: ReturnType<typeof usdcReader>;
/** The project's facilitator twice, each its own signer and ledger, served over HTTP. */
const facilitators: { facilitator: Facilitator; url: string }[] = [];
const closers: (() => Promise<void>)[] = [];
let nextBuyer = 0;

beforeAll(async () => {
  devnet = await startDevnet({
    port: 0,
    buyers: 2 + 2 * BUYERS_PER_CASE * DATABASE_KINDS.length + 4,
    blockTime: 0,
  });
  closers.push(() => devnet.stop());
  miner = startMiner(devnet);
  closers.push(() => miner.stop());
  usdc = usdcReader(devnet.rpc);
  const second = generatePrivateKey();
  await rpc(devnet.rpc, "anvil_setBalance", [privateKeyToAccount(second).address, "0xde0b6b3a7640000"]);
  for (const privateKey of [devnet.facilitatorAccount.privateKey, second]) {
    const ledger = await openTestDatabase(LEDGER_KIND);
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db, { privateKey });
    closers.push(() => facilitator.close());
    const served: Listening = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closers.push(() => served.close());
    facilitators.push({ facilitator, url: served.url });
  }
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

async function standIn(upstream: string, auth: Parameters<typeof startStandIn>[1]): Promise<StandIn> {
  const started = await startStandIn(upstream, auth);
  closers.push(() => started.close());
  return started;
}

/**
 * One merchant store per kind for the file: each test's host is a merchant of its own (its own payee) on it,
 * as `serve` runs several merchants on one database. What the tests count is on the chain and at the
 * stand-ins, never in the store; a PGlite copy and its migrations per host cost 0.4-0.5 CPU-s each.
 */
const storeOf = storesByKind(closers);

/** A merchant host paid through the facilitators these settings name, its state on `kind`. */
async function merchantOn(env: Record<string, string>, kind: (typeof DATABASE_KINDS)[number] = "pglite") {
  const payTo = newMerchant();
  const db = await storeOf(kind);
  const payments = loadConfig({ env: { X402M_RPC_URL: devnet.rpc, ...env } }).payments;
  const host = await startMerchant(
    (url) => testMerchant(payTo, url),
    db,
    configuredFacilitators(payments, TIMINGS),
    { rpcUrl: devnet.rpc },
  );
  closers.push(() => host.close());
  // Asked once unpaid, as a buyer's client first asks: the answer waits for the host's look at what its
  // facilitators settle for it (`/supported` and a probe's `/verify`), so a test counts a payment's calls
  // alone. (A facilitator that refuses the merchant's credentials makes it a 503.)
  await fetch(`${host.url}/api/echo?text=hi`);
  return { payTo, url: host.url };
}

function buyers(count: number) {
  const taken = devnet.buyers.slice(nextBuyer, nextBuyer + count);
  nextBuyer += count;
  if (taken.length < count) throw new Error("the devnet has too few buyers");
  return taken;
}

const payingFetch = (buyer: Devnet["buyers"][number]) =>
  wrapFetchWithPayment(fetch, x402ClientFor(buyer, "exact"));

/** Every transfer to `payTo` on the chain, with the account that sent its transaction. */
async function transfersTo(payTo: `0x${string}`) {
  const logs = await usdc.client.getLogs({
    address: devnet.usdc,
    event: TRANSFER,
    args: { to: payTo },
    fromBlock: 0n,
  });
  return Promise.all(
    logs.map(async (log) => ({
      from: log.args.from?.toLowerCase(),
      value: log.args.value,
      hash: log.transactionHash,
      sender: (await usdc.client.getTransaction({ hash: log.transactionHash })).from.toLowerCase(),
    })),
  );
}

/**
 * The calls a facilitator received since `before`: a merchant asks each of its facilitators at start what
 * they settle for it (`/supported`, and a probe's `/verify`), before any buyer pays.
 */
function callsSince(before: Record<string, number>, now: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(now)
      .map(([path, n]) => [path, n - (before[path] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
}

const cdpEnv = (front: StandIn, key: TestCdpKey) => ({
  X402M_FACILITATOR_URL: front.url,
  X402M_FACILITATOR_AUTH: "cdp",
  CDP_API_KEY_ID: key.apiKeyId,
  CDP_API_KEY_SECRET: key.apiKeySecret,
});

describe("a merchant on a facilitator that checks CDP JWTs", () => {
  it.each(["ec", "ed25519"] as const)("is paid through it with the operator's CDP key (%s)", async (kind) => {
    const key = testCdpKey(kind);
    const front = await standIn(facilitators[0]?.url as string, {
      cdp: { apiKeyId: key.apiKeyId, publicKey: key.publicKey },
    });
    const shop = await merchantOn(cdpEnv(front, key));
    const atStart = { ...front.calls };
    const [buyer] = buyers(1) as [Devnet["buyers"][number]];
    const before = await usdc.balanceOf(buyer.address);

    const response = await payingFetch(buyer)(`${shop.url}/api/echo?text=hi`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ text: "hi", payer: buyer.address.toLowerCase() });
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
    expect((await transfersTo(shop.payTo)).map((t) => t.value)).toEqual([PRICE]);
    expect(callsSince(atStart, front.calls)).toMatchObject({ verify: 1, settle: 1 });
    expect(front.refusals).toEqual([]);
  });

  it("with the wrong key, answers 503 naming the settings to check, and charges nothing", async () => {
    const key = testCdpKey("ec");
    const front = await standIn(facilitators[0]?.url as string, {
      cdp: { apiKeyId: key.apiKeyId, publicKey: key.publicKey },
    });
    const shop = await merchantOn(cdpEnv(front, testCdpKey("ec", key.apiKeyId)));
    const [buyer] = buyers(1) as [Devnet["buyers"][number]];
    const before = await usdc.balanceOf(buyer.address);
    const ran = runs.get("/api/echo") ?? 0;

    const response = await payingFetch(buyer)(`${shop.url}/api/echo?text=hi`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("facilitator_unavailable");
    expect(body.error.message).toMatch(
      /refused the merchant's credentials, check CDP_API_KEY_ID and CDP_API_KEY_SECRET \(401/,
    );
    const health = await fetch(`${shop.url}/healthz`);
    expect(health.status).toBe(503);
    expect(JSON.stringify(await health.json())).toMatch(/check CDP_API_KEY_ID and CDP_API_KEY_SECRET \(401/);

    expect(runs.get("/api/echo") ?? 0).toBe(ran);
    expect(await usdc.balanceOf(buyer.address)).toBe(before);
    expect(await transfersTo(shop.payTo)).toEqual([]);
    expect(front.calls.settle ?? 0).toBe(0);
  });
});

describe.each(DATABASE_KINDS)("two facilitators, merchant state on %s", (kind) => {
  /** A, with a bearer key, in front of the first facilitator; B, with a CDP key, in front of the second. */
  async function pair() {
    const key = testCdpKey("ed25519");
    const [first, second] = facilitators as [(typeof facilitators)[0], (typeof facilitators)[0]];
    const a = await standIn(first.url, { bearer: "key-a" });
    const b = await standIn(second.url, { cdp: { apiKeyId: key.apiKeyId, publicKey: key.publicKey } });
    const shop = await merchantOn(
      {
        X402M_FACILITATOR_URL: a.url,
        X402M_FACILITATOR_HEADERS: "Authorization: Bearer key-a",
        X402M_FACILITATOR_2_URL: b.url,
        X402M_FACILITATOR_2_AUTH: "cdp",
        CDP_API_KEY_ID: key.apiKeyId,
        CDP_API_KEY_SECRET: key.apiKeySecret,
      },
      kind,
    );
    return {
      a,
      b,
      shop,
      signers: [first.facilitator.address.toLowerCase(), second.facilitator.address.toLowerCase()],
    };
  }

  it.each(["unavailable", "stopped"] as const)(
    "the first %s mid-run: every buyer's payments settle once each, through one or the other",
    async (outage) => {
      const { a, b, shop, signers } = await pair();
      const group = buyers(BUYERS_PER_CASE);
      const before = await Promise.all(group.map((buyer) => usdc.balanceOf(buyer.address)));
      const ran = runs.get("/api/echo") ?? 0;

      // The outage starts at the settlement after the first few, one the first facilitator verified:
      // answering 503 from then on, or stopped, cutting what it was answering (verifications and
      // settlements of other buyers) and refusing connections. Those payments go on to the second.
      a.outage = { afterSettles: SETTLED_BEFORE_OUTAGE, as: outage };
      const statuses = await Promise.all(
        group.map(async (buyer, i) => {
          const pay = payingFetch(buyer);
          const answered: number[] = [];
          for (let call = 0; call < CALLS_PER_BUYER; call++) {
            const response = await pay(`${shop.url}/api/echo?text=b${i}c${call}`);
            await response.arrayBuffer();
            answered.push(response.status);
          }
          return answered;
        }),
      );

      expect(statuses.flat()).toEqual(Array(BUYERS_PER_CASE * CALLS_PER_BUYER).fill(200));
      const transfers = await transfersTo(shop.payTo);
      expect(transfers).toHaveLength(BUYERS_PER_CASE * CALLS_PER_BUYER);
      expect(new Set(transfers.map((t) => t.hash)).size).toBe(transfers.length);
      for (const [i, buyer] of group.entries()) {
        expect(transfers.filter((t) => t.from === buyer.address.toLowerCase())).toHaveLength(CALLS_PER_BUYER);
        expect(await usdc.balanceOf(buyer.address)).toBe(
          (before[i] as bigint) - PRICE * BigInt(CALLS_PER_BUYER),
        );
      }
      expect(runs.get("/api/echo") ?? 0).toBe(ran + BUYERS_PER_CASE * CALLS_PER_BUYER);
      // Both settled some: the first before its outage, the second after.
      const bySigner = signers.map((signer) => transfers.filter((t) => t.sender === signer).length);
      expect(bySigner[0]).toBeGreaterThanOrEqual(SETTLED_BEFORE_OUTAGE);
      expect(bySigner[1]).toBeGreaterThan(0);
      expect((bySigner[0] ?? 0) + (bySigner[1] ?? 0)).toBe(transfers.length);
      expect(b.refusals).toEqual([]);
      // Payments the first verified and then could not settle were settled by the second.
      expect(a.calls.settle).toBe(SETTLED_BEFORE_OUTAGE);
      expect(a.calls.verify).toBeGreaterThan(SETTLED_BEFORE_OUTAGE);
    },
  );
});

describe("a settlement whose outcome the first facilitator left unknown", () => {
  async function pairWith(mode: StandIn["mode"]) {
    const [first, second] = facilitators as [(typeof facilitators)[0], (typeof facilitators)[0]];
    const a = await standIn(first.url, null);
    const b = await standIn(second.url, null);
    a.mode = mode;
    const shop = await merchantOn({ X402M_FACILITATOR_URL: a.url, X402M_FACILITATOR_2_URL: b.url });
    return {
      a,
      b,
      bAtStart: { ...b.calls },
      shop,
      signers: [first.facilitator.address.toLowerCase(), second.facilitator.address.toLowerCase()],
    };
  }

  it("submitted, then its connection dropped: the chain shows it settled, and it is never submitted again", async () => {
    const { a, b, bAtStart, shop, signers } = await pairWith("drop-after-settle");
    const [buyer] = buyers(1) as [Devnet["buyers"][number]];
    const before = await usdc.balanceOf(buyer.address);

    const response = await payingFetch(buyer)(`${shop.url}/api/echo?text=hi`);
    expect(response.status).toBe(200);
    const transfers = await transfersTo(shop.payTo);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]?.sender).toBe(signers[0]);
    const receipt = JSON.parse(
      Buffer.from(response.headers.get("payment-response") ?? "", "base64").toString(),
    ) as { success: boolean; transaction: string };
    expect(receipt).toMatchObject({ success: true, transaction: transfers[0]?.hash });
    expect(a.settlesForwarded).toBe(1);
    // Nothing of this payment went to the second: what it was asked at start was the merchant's look at
    // what each facilitator settles (docs/platform.md, "What is offered").
    expect(callsSince(bAtStart, b.calls)).toEqual({});
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
  });

  it("cut while its transaction waits for a block: the chain's pending state says so, and it is never handed on", async () => {
    // The first facilitator has sent the transaction and waits for its block when its connection is cut; the
    // block comes only after the merchant's grace (300 ms) has passed several times over. Read at the last block
    // alone, the authorization looks unused: the payment would go to the second, which refuses it (the node's
    // estimate sees the pending transfer), and the buyer would be answered 402 and charged a moment later.
    const { a, b, bAtStart, shop, signers } = await pairWith("cut-when-told");
    const [buyer] = buyers(1) as [Devnet["buyers"][number]];
    const before = await usdc.balanceOf(buyer.address);
    miner.pause();
    const answer = payingFetch(buyer)(`${shop.url}/api/echo?text=hi`);
    try {
      for (let looks = 0; (await miner.pending()) === 0; looks++) {
        if (looks > 1_000) throw new Error("the first facilitator sent no transaction");
        await sleep(10);
      }
      expect(a.cutSettlements()).toBe(1);
      await sleep(4 * TIMINGS.settledGraceMs);
    } finally {
      miner.resume();
    }
    const response = await answer;
    expect(response.status).toBe(200);
    const transfers = await transfersTo(shop.payTo);
    expect(transfers.map((t) => t.sender)).toEqual([signers[0]]);
    expect(callsSince(bAtStart, b.calls)).toEqual({});
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
  });

  it("dropped before it was sent on: once the chain shows the authorization unused, the second settles it, once", async () => {
    const { a, b, bAtStart, shop, signers } = await pairWith("drop-before-settle");
    const [buyer] = buyers(1) as [Devnet["buyers"][number]];
    const before = await usdc.balanceOf(buyer.address);

    const response = await payingFetch(buyer)(`${shop.url}/api/echo?text=hi`);
    expect(response.status).toBe(200);
    const transfers = await transfersTo(shop.payTo);
    expect(transfers.map((t) => t.sender)).toEqual([signers[1]]);
    expect(a.settlesForwarded).toBe(0);
    expect(callsSince(bAtStart, b.calls)).toMatchObject({ verify: 1, settle: 1 });
    expect(await usdc.balanceOf(buyer.address)).toBe(before - PRICE);
  });
});
