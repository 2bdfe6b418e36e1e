/**
 * The devnet's JSON-RPC as a reader sees it: errors in JSON-RPC's codes, and a payment's transaction in the
 * shapes an indexer reads (`getSignaturesForAddress`, `getTransaction` in json and jsonParsed: the
 * TransferChecked, the token balances before and after, the fee, the slot's time). The payment is a plain
 * TransferChecked the buyer signs and pays for itself, built with @solana-program/token.
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
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
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
let signature: string;

/** A raw JSON-RPC call: the answer's `result` or `error`, as sent. */
async function call(
  method: string,
  params?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are what the assertions check.
): Promise<{ result?: any; error?: { code: number; message: string; data?: unknown } }> {
  const response = await fetch(devnet.rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return response.json();
}

async function transfer(amount: bigint, to: string): Promise<string> {
  const { result } = await call("getLatestBlockhash");
  const [source] = await findAssociatedTokenPda({
    mint: SOLANA_USDC_MINT as Address,
    owner: buyer.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(buyer, tx),
    (tx) =>
      setTransactionMessageLifetimeUsingBlockhash(
        {
          blockhash: result.value.blockhash,
          lastValidBlockHeight: BigInt(result.value.lastValidBlockHeight),
        },
        tx,
      ),
    (tx) =>
      appendTransactionMessageInstruction(
        getTransferCheckedInstruction({
          source,
          mint: SOLANA_USDC_MINT as Address,
          destination: to as Address,
          authority: buyer,
          amount,
          decimals: 6,
        }),
        tx,
      ),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 2 });
  buyer = await createKeyPairSignerFromBytes(
    new Uint8Array(getBase58Encoder().encode((devnet.buyers[0] as { secretKey: string }).secretKey)),
  );
  payee = (devnet.buyers[1] as { address: string }).address;
  const sent = await call("sendTransaction", [
    await transfer(250_000n, await usdcAccountOf(payee)),
    { encoding: "base64" },
  ]);
  signature = sent.result;
});

afterAll(() => devnet?.stop());

describe("the Solana devnet's JSON-RPC", () => {
  it("answers an unknown method with -32601 and bad parameters with -32602", async () => {
    expect((await call("eth_blockNumber")).error?.code).toBe(-32601);
    expect((await call("getBalance", ["not an address"])).error?.code).toBe(-32602);
    expect((await call("getBalance", [payee, { commitment: "soon" }])).error?.code).toBe(-32602);
    expect((await call("getTransaction", [signature, { encoding: "xml" }])).error?.code).toBe(-32602);
    expect((await call("sendTransaction", ["!!", { encoding: "base64" }])).error?.code).toBe(-32602);
    expect((await call("getSignaturesForAddress", [payee, { limit: 0 }])).error?.code).toBe(-32602);
    const raw = await fetch(devnet.rpc, { method: "POST", body: "{" });
    expect((await raw.json()).error.code).toBe(-32700);
  });

  it("refuses a failing transaction at preflight with the simulation's error, and lands it as a failure without", async () => {
    const tooMuch = await transfer(10n ** 15n, await usdcAccountOf(payee));
    const refused = await call("sendTransaction", [tooMuch, { encoding: "base64" }]);
    expect(refused.error?.code).toBe(-32002);
    expect(refused.error?.message).toBe(
      "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
    );
    expect(refused.error?.data).toMatchObject({ err: { InstructionError: [0, { Custom: 1 }] } });
    const landed = await call("sendTransaction", [tooMuch, { encoding: "base64", skipPreflight: true }]);
    const { result } = await call("getSignatureStatuses", [[landed.result]]);
    expect(result.value[0]).toMatchObject({
      err: { InstructionError: [0, { Custom: 1 }] },
      confirmationStatus: "finalized",
    });
  });

  it("lists the payment among its accounts' signatures, newest first, with its slot and time", async () => {
    const { result } = await call("getSignaturesForAddress", [await usdcAccountOf(payee)]);
    const entry = result.find((item: { signature: string }) => item.signature === signature);
    expect(entry).toMatchObject({ err: null, memo: null, confirmationStatus: "finalized" });
    expect((await call("getBlockTime", [entry.slot])).result).toBe(entry.blockTime);
    const slots = result.map((item: { slot: number }) => item.slot);
    expect(slots).toEqual([...slots].sort((a: number, b: number) => b - a));
    const paged = await call("getSignaturesForAddress", [buyer.address, { limit: 1 }]);
    expect(paged.result).toHaveLength(1);
    const older = await call("getSignaturesForAddress", [
      buyer.address,
      { before: paged.result[0].signature },
    ]);
    expect(older.result.map((item: { signature: string }) => item.signature)).not.toContain(
      paged.result[0].signature,
    );
  });

  it("gives the payment's transaction in json and jsonParsed, as an indexer reads a TransferChecked", async () => {
    expect((await call("getTransaction", [signature])).error?.code).toBe(-32015); // v0 without maxSupportedTransactionVersion
    const json = (
      await call("getTransaction", [signature, { encoding: "json", maxSupportedTransactionVersion: 0 }])
    ).result;
    expect(json).toMatchObject({ version: 0, meta: { err: null, fee: 5000, status: { Ok: null } } });
    expect(json.transaction.signatures).toEqual([signature]);
    expect(json.transaction.message.header).toEqual({
      numRequiredSignatures: 1,
      numReadonlySignedAccounts: 0,
      numReadonlyUnsignedAccounts: 2,
    });
    const balances = (list: { owner: string; uiTokenAmount: { amount: string } }[]) =>
      Object.fromEntries(list.map((b) => [b.owner, b.uiTokenAmount.amount]));
    expect(balances(json.meta.preTokenBalances)).toEqual({
      [buyer.address]: "1000000000",
      [payee]: "1000000000",
    });
    expect(balances(json.meta.postTokenBalances)).toEqual({
      [buyer.address]: "999750000",
      [payee]: "1000250000",
    });
    expect(json.meta.postTokenBalances[0]).toMatchObject({
      mint: SOLANA_USDC_MINT,
      programId: TOKEN_PROGRAM_ADDRESS,
    });
    expect(json.meta.preBalances[0] - json.meta.postBalances[0]).toBe(5000);
    expect(json.meta.logMessages).toContain(`Program ${TOKEN_PROGRAM_ADDRESS} success`);

    const parsed = (
      await call("getTransaction", [signature, { encoding: "jsonParsed", maxSupportedTransactionVersion: 0 }])
    ).result;
    expect(parsed.transaction.message.accountKeys[0]).toEqual({
      pubkey: buyer.address,
      signer: true,
      writable: true,
      source: "transaction",
    });
    expect(parsed.transaction.message.instructions[0]).toEqual({
      program: "spl-token",
      programId: TOKEN_PROGRAM_ADDRESS,
      stackHeight: null,
      parsed: {
        type: "transferChecked",
        info: {
          source: await usdcAccountOf(buyer.address),
          mint: SOLANA_USDC_MINT,
          destination: await usdcAccountOf(payee),
          authority: buyer.address,
          tokenAmount: { amount: "250000", decimals: 6, uiAmount: 0.25, uiAmountString: "0.25" },
        },
      },
    });
    const base64 = (
      await call("getTransaction", [signature, { encoding: "base64", maxSupportedTransactionVersion: 0 }])
    ).result;
    expect(base64.transaction[1]).toBe("base64");
    expect(
      (await call("getTransaction", ["1111111111111111111111111111111111111111111111111111111111111111", {}]))
        .result,
    ).toBeNull();
  });

  it("reads token accounts by owner and mint, parsed", async () => {
    const { result, error } = await call("getTokenAccountsByOwner", [
      payee,
      { mint: SOLANA_USDC_MINT },
      { encoding: "jsonParsed" },
    ]);
    expect(error).toBeUndefined();
    expect(result.value).toHaveLength(1);
    expect(result.value[0].pubkey).toBe(await usdcAccountOf(payee));
    expect(result.value[0].account.data.parsed.info).toMatchObject({
      owner: payee,
      mint: SOLANA_USDC_MINT,
      state: "initialized",
    });
  });

  it("simulates without keeping anything: unsigned with sigVerify off, a stale blockhash replaced, and gives the fee of a message", async () => {
    const wire = await transfer(1n, await usdcAccountOf(payee));
    const signedOn = (await call("getLatestBlockhash")).result.value.blockhash;
    devnet.chain.airdrop(payee, 1n); // a block: the blockhash `wire` names is no longer the latest
    const before = (await call("getTokenAccountBalance", [await usdcAccountOf(payee)])).result.value.amount;
    const simulated = (
      await call("simulateTransaction", [
        wire,
        { encoding: "base64", replaceRecentBlockhash: true, innerInstructions: true },
      ])
    ).result.value;
    expect(simulated).toMatchObject({ err: null, innerInstructions: [], accounts: null });
    expect(simulated.replacementBlockhash.blockhash).toBe(
      (await call("getLatestBlockhash")).result.value.blockhash,
    );
    expect(simulated.replacementBlockhash.blockhash).not.toBe(signedOn);
    expect(simulated.unitsConsumed).toBeGreaterThan(0);
    expect((await call("getTokenAccountBalance", [await usdcAccountOf(payee)])).result.value.amount).toBe(
      before,
    );
    // The signature zeroed: refused with sigVerify, run without it (as the facilitator simulates before signing).
    const bytes = Buffer.from(wire, "base64");
    bytes.fill(0, 1, 65);
    const unsigned = bytes.toString("base64");
    expect(
      (await call("simulateTransaction", [unsigned, { encoding: "base64", sigVerify: true }])).result.value
        .err,
    ).toBe("SignatureFailure");
    expect(
      (await call("simulateTransaction", [unsigned, { encoding: "base64" }])).result.value.err,
    ).toBeNull();
    const both = await call("simulateTransaction", [
      wire,
      { encoding: "base64", sigVerify: true, replaceRecentBlockhash: true },
    ]);
    expect(both.error?.code).toBe(-32602);
    const message = bytes.subarray(65).toString("base64");
    expect((await call("getFeeForMessage", [message])).result.value).toBe(5000);
    const epoch = (await call("getEpochInfo")).result;
    expect(epoch).toMatchObject({ epoch: 0, absoluteSlot: (await call("getSlot")).result });
    expect(
      (
        await call("getTransaction", [
          signature,
          { commitment: "processed", maxSupportedTransactionVersion: 0 },
        ])
      ).error?.code,
    ).toBe(-32602);
  });
});
