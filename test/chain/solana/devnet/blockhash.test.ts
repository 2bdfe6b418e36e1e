/**
 * The devnet's blockhash moves as a cluster's does: each block makes a new latest one, and a blockhash stays valid
 * for 150 blocks. A transaction signed on a recent blockhash that is no longer the latest lands; one signed on a
 * blockhash past its `lastValidBlockHeight` is refused with Solana's own error, `BlockhashNotFound`, and moves
 * nothing; a landed transaction sent again is refused as already processed for as long as its blockhash is valid.
 * Blocks are made by airdrops, each a transaction from the devnet's faucet.
 */

import {
  type Address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferCheckedInstruction } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SOLANA_USDC_MINT } from "../../../../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  usdcAccountOf,
} from "../../../../src/chain/solana/devnet/index.ts";

let devnet: SolanaDevnet;
let buyer: KeyPairSigner;
let payee: string;
let buyerUsdc: string;
let payeeUsdc: string;

interface Blockhash {
  blockhash: string;
  lastValidBlockHeight: number;
}

/** A raw JSON-RPC call: the answer's `result` or `error`, as sent. */
async function call(
  method: string,
  params?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are what the assertions check.
): Promise<{ result?: any; error?: { code: number; message: string; data?: any } }> {
  const response = await fetch(devnet.rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return response.json();
}

const latest = async (): Promise<Blockhash> => (await call("getLatestBlockhash")).result.value;
const blockHeight = async (): Promise<number> => (await call("getBlockHeight")).result;
const usdcOf = async (owner: string): Promise<bigint> =>
  BigInt((await call("getTokenAccountBalance", [await usdcAccountOf(owner)])).result.value.amount);
const isValid = async (blockhash: string): Promise<boolean> =>
  (await call("isBlockhashValid", [blockhash])).result.value;
const send = (wire: string, options: Record<string, unknown> = {}) =>
  call("sendTransaction", [wire, { encoding: "base64", ...options }]);

/** The buyer's signed transfer of `amount` USDC to the payee, on `lifetime`'s blockhash. */
async function transfer(amount: bigint, lifetime: Blockhash): Promise<string> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(buyer, tx),
    (tx) =>
      setTransactionMessageLifetimeUsingBlockhash(
        {
          blockhash: lifetime.blockhash as never,
          lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight),
        },
        tx,
      ),
    (tx) =>
      appendTransactionMessageInstruction(
        getTransferCheckedInstruction({
          source: buyerUsdc as Address,
          mint: SOLANA_USDC_MINT as Address,
          destination: payeeUsdc as Address,
          authority: buyer,
          amount,
          decimals: 6,
        }),
        tx,
      ),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

/** Blocks made until the chain's height is `height`: one airdrop each, a transaction like any other. */
function blocksUntil(height: number): void {
  while (devnet.chain.ledger.blockHeight < BigInt(height)) {
    const sent = devnet.chain.airdrop(payee, 1n);
    if (!("landed" in sent)) throw new Error(`airdrop dropped: ${JSON.stringify(sent.dropped.err)}`);
  }
}

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 2 });
  buyer = await createKeyPairSignerFromBytes(
    new Uint8Array(getBase58Encoder().encode((devnet.buyers[0] as { secretKey: string }).secretKey)),
  );
  payee = (devnet.buyers[1] as { address: string }).address;
  buyerUsdc = await usdcAccountOf(buyer.address);
  payeeUsdc = await usdcAccountOf(payee);
});

afterAll(() => devnet?.stop());

describe("the Solana devnet's blockhash", () => {
  it("moves with each block, lands a transaction on a recent blockhash, refuses one on an expired blockhash", async () => {
    const first = await latest();
    const height = await blockHeight();
    expect(first.lastValidBlockHeight).toBe(height + 150);
    // Two transfers alike, the second signed on the next block's blockhash: different transactions.
    const one = await transfer(1n, first);
    const landed = await send(one);
    expect(landed.error).toBeUndefined();
    const second = await latest();
    expect(second.blockhash).not.toBe(first.blockhash);
    expect(second.lastValidBlockHeight).toBe(height + 151);
    expect(await transfer(1n, second)).not.toBe(one);

    // Signed on `first`, now a block old and not the latest: it lands, and again some blocks later.
    expect(await isValid(first.blockhash)).toBe(true);
    const recent = await send(await transfer(2n, first));
    expect(recent.error).toBeUndefined();
    blocksUntil(height + 100);
    const paid = await usdcOf(payee);
    expect((await send(await transfer(3n, first))).error).toBeUndefined();
    expect(await usdcOf(payee)).toBe(paid + 3n);

    // The first transfer sent again, more blocks on than litesvm remembers by default: still already processed.
    const replayed = await send(one, { skipPreflight: true });
    expect(replayed.error?.data?.err).toBe("AlreadyProcessed");

    // Up to its lastValidBlockHeight a blockhash lands a transaction in the block of that height; after, none.
    const late = await transfer(4n, first);
    const expired = await transfer(5n, first);
    blocksUntil(first.lastValidBlockHeight - 1);
    expect(await isValid(first.blockhash)).toBe(true);
    expect((await send(late)).error).toBeUndefined();
    expect(await blockHeight()).toBe(first.lastValidBlockHeight);
    expect(await isValid(first.blockhash)).toBe(false);
    expect(await isValid(second.blockhash)).toBe(true);

    const before = { buyer: await usdcOf(buyer.address), payee: await usdcOf(payee) };
    const refused = await send(expired);
    expect(refused.error?.code).toBe(-32002);
    expect(refused.error?.message).toBe("Transaction simulation failed: Blockhash not found");
    expect(refused.error?.data?.err).toBe("BlockhashNotFound");
    expect((await send(expired, { skipPreflight: true })).error?.data?.err).toBe("BlockhashNotFound");
    const simulated = await call("simulateTransaction", [expired, { encoding: "base64", sigVerify: true }]);
    expect(simulated.result.value.err).toBe("BlockhashNotFound");
    // A landed transaction whose blockhash expired is refused as any other on that blockhash.
    expect((await send(one, { skipPreflight: true })).error?.data?.err).toBe("BlockhashNotFound");
    expect({ buyer: await usdcOf(buyer.address), payee: await usdcOf(payee) }).toEqual(before);
    // Simulating with the blockhash replaced runs it on the latest, as the validator does for a stale one.
    const replaced = await call("simulateTransaction", [
      expired,
      { encoding: "base64", replaceRecentBlockhash: true },
    ]);
    expect(replaced.result.value.err).toBeNull();
    expect(replaced.result.value.replacementBlockhash).toEqual(await latest());
  });
});
