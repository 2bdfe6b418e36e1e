/**
 * A Solana payer's funds (issue 86) read from a JSON-RPC node on 127.0.0.1 that answers as a validator would:
 * the balance of the payer's own associated USDC account and nothing else, a settled payment counted as landed
 * only when its transaction is confirmed at or before the slot that balance was read at, a node that keeps
 * failing a 503; a payment from another account refused by guarded routes; the settlement the ledger keeps.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Address, generateKeyPairSigner, getBase64Decoder } from "@solana/kit";
import { AccountState, getTokenEncoder } from "@solana-program/token";
import { afterEach, describe, expect, it } from "vitest";
import { usdcAccountOf } from "../../../../src/chain/solana/accounts.ts";
import { SOLANA_USDC_MINT, SPL_TOKEN_PROGRAM } from "../../../../src/chain/solana/constants.ts";
import type { PaymentKey } from "../../../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import {
  foreignSource,
  settlementOf,
  solanaFunds,
} from "../../../../src/merchant-kit/payments/ledger/svm-funds.ts";

type Answer = { result: unknown } | { error: { code: number; message: string } };

/** A node answering each JSON-RPC request with `answer(method, params)`; the requests it was sent. */
async function node(answer: (method: string, params: unknown[]) => Answer) {
  const calls: { method: string; params: unknown[] }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const request = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      calls.push({ method: request.method, params: request.params });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, ...answer(request.method, request.params) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A token account's `getAccountInfo` value (base64), as the Token program's layout writes it. */
function tokenAccount(o: { owner: string; amount: bigint; mint?: string; state?: AccountState }) {
  const data = getTokenEncoder().encode({
    mint: (o.mint ?? SOLANA_USDC_MINT) as Address,
    owner: o.owner as Address,
    amount: o.amount,
    delegate: null,
    state: o.state ?? AccountState.Initialized,
    isNative: null,
    delegatedAmount: 0,
    closeAuthority: null,
  });
  return {
    data: [getBase64Decoder().decode(data), "base64"],
    executable: false,
    lamports: 2_039_280,
    owner: SPL_TOKEN_PROGRAM,
    rentEpoch: 0,
    space: data.length,
  };
}

/** A fresh Solana wallet, typed as the ledger keys its payers (base58 kept as it is). */
const wallet = async () => (await generateKeyPairSigner()).address as string as `0x${string}`;

const context = (slot: number) => ({ apiVersion: "2.2.0", slot });

describe("solanaFunds", () => {
  it("reads the payer's own USDC account, and counts a settled payment landed only if confirmed by the slot read", async () => {
    const payer = await wallet();
    const statuses: Record<string, unknown> = {
      early: {
        slot: 90,
        confirmations: null,
        err: null,
        confirmationStatus: "confirmed",
        status: { Ok: null },
      },
      final: {
        slot: 100,
        confirmations: null,
        err: null,
        confirmationStatus: "finalized",
        status: { Ok: null },
      },
      // Landed after the slot the balance was read at: not in it yet.
      later: {
        slot: 101,
        confirmations: null,
        err: null,
        confirmationStatus: "finalized",
        status: { Ok: null },
      },
      // Only processed: its block may still be dropped.
      processed: {
        slot: 80,
        confirmations: 0,
        err: null,
        confirmationStatus: "processed",
        status: { Ok: null },
      },
      failed: {
        slot: 80,
        confirmations: null,
        err: { InstructionError: [2, { Custom: 1 }] },
        confirmationStatus: "finalized",
        status: { Err: { InstructionError: [2, { Custom: 1 }] } },
      },
    };
    const n = await node((method, params) => {
      if (method === "getAccountInfo")
        return { result: { context: context(100), value: tokenAccount({ owner: payer, amount: 7_000n }) } };
      const asked = params[0] as string[];
      return { result: { context: context(102), value: asked.map((s) => statuses[s] ?? null) } };
    });
    const settled = ["early", "final", "later", "processed", "failed", "unknown"];
    const funds = await solanaFunds(n.url)(
      payer,
      ["svm:a", "svm:b", "svm:c", "svm:d", "svm:e", "svm:f", "svm:running"],
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      new Map(settled.map((s, i) => [`svm:${String.fromCharCode(97 + i)}`, s])),
    );
    expect(funds.balance).toBe(7_000n);
    expect([...funds.used].sort()).toEqual(["svm:a", "svm:b"]);
    const read = n.calls.find((c) => c.method === "getAccountInfo");
    expect(read?.params[0]).toBe(await usdcAccountOf(payer));
    expect(read?.params[1]).toMatchObject({ encoding: "base64", commitment: "confirmed" });
    expect(n.calls.find((c) => c.method === "getSignatureStatuses")?.params[0]).toEqual(settled);
  });

  it("reads nothing but the balance when no payment in flight has a settlement to ask about", async () => {
    const payer = await wallet();
    const n = await node(() => ({
      result: { context: context(5), value: tokenAccount({ owner: payer, amount: 3n }) },
    }));
    const funds = await solanaFunds(n.url)(payer, ["svm:running"]);
    expect(funds).toEqual({ balance: 3n, used: new Set() });
    expect(n.calls.map((c) => c.method)).toEqual(["getAccountInfo"]);
  });

  it("finds nothing to spend in an account that is missing, frozen, of another owner or another mint", async () => {
    const payer = await wallet();
    const other = (await generateKeyPairSigner()).address;
    const accounts = [
      null,
      tokenAccount({ owner: payer, amount: 9n, state: AccountState.Frozen }),
      tokenAccount({ owner: other, amount: 9n }),
      tokenAccount({ owner: payer, amount: 9n, mint: other }),
      { ...tokenAccount({ owner: payer, amount: 9n }), owner: other },
    ];
    for (const value of accounts) {
      const n = await node(() => ({ result: { context: context(5), value } }));
      expect((await solanaFunds(n.url)(payer, [])).balance).toBe(0n);
    }
  });

  it("asks again when the node fails, twice at most, then answers 503", async () => {
    const payer = await wallet();
    let failures = 2;
    const flaky = await node(() =>
      failures-- > 0
        ? { error: { code: -32005, message: "Node is behind by 42 slots" } }
        : { result: { context: context(5), value: tokenAccount({ owner: payer, amount: 5n }) } },
    );
    expect((await solanaFunds(flaky.url)(payer, [])).balance).toBe(5n);
    expect(flaky.calls).toHaveLength(3);

    const broken = await node(() => ({ error: { code: -32005, message: "Node is behind by 42 slots" } }));
    const error = await solanaFunds(broken.url)(payer, []).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: "chain_unavailable" });
    expect(broken.calls).toHaveLength(3);
  });
});

describe("a Solana payment's source and settlement", () => {
  const key = (o: Partial<PaymentKey>): PaymentKey => ({
    payer: "0x" as `0x${string}`,
    nonce: "svm:00",
    validBefore: 0,
    amount: 1n,
    ...o,
  });

  it("is reserved only from the payer's own USDC account", async () => {
    const payer = await wallet();
    const elsewhere = (await generateKeyPairSigner()).address;
    expect(await foreignSource(key({ payer, source: await usdcAccountOf(payer) }))).toBeUndefined();
    expect(await foreignSource(key({ payer, source: elsewhere }))).toContain(elsewhere);
    // An EVM payment draws from its payer itself.
    expect(await foreignSource(key({ payer, source: undefined }))).toBeUndefined();
  });

  it("keeps a Solana receipt's transaction, and none for an EVM payment", () => {
    const receipt = Buffer.from(
      JSON.stringify({ success: true, transaction: "5sig", network: "solana:x" }),
    ).toString("base64");
    expect(settlementOf(key({}), receipt)).toBe("5sig");
    expect(settlementOf(key({ nonce: `0x${"11".repeat(32)}` }), receipt)).toBeUndefined();
    expect(settlementOf(key({}), null)).toBeUndefined();
    expect(settlementOf(key({}), "not base64 json")).toBeUndefined();
  });
});
