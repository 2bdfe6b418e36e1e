/**
 * x402 settlements on a devnet without an HTTP facilitator: buyers sign EIP-712
 * TransferWithAuthorization locally, a sender (the facilitator signer, or any other account) submits
 * `transferWithAuthorization`, exactly as the exact scheme's facilitator does on Base. Transactions are
 * signed locally with fixed gas and fees and sent raw in JSON-RPC batches; nothing is mined here.
 */
import crypto from "node:crypto";
import { type Address, encodeFunctionData, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BASE_CHAIN_ID } from "../../src/chain/base.ts";
import { type Devnet, type DevnetAccount, derive } from "../../src/chain/devnet/index.ts";
import { eip3009Types, USDC_EIP712_NAME, USDC_EIP712_VERSION, usdcAbi } from "../../src/chain/usdc.ts";

export interface PaymentOrder {
  buyer: DevnetAccount;
  payTo: Address;
  /** Atomic USDC units. */
  amount: bigint;
}

/** What a settlement paid, as the indexer should store it (lower-case addresses). */
export interface Paid {
  tx: Hex;
  payer: string;
  payTo: string;
  amount: bigint;
  sender: string;
}

const GAS = 150_000n;
const MAX_FEE = 100_000_000_000n;
const PRIORITY_FEE = 1_000_000_000n;
/** Far in the future of the chain's clock (which runs ahead of the wall clock when blocks are mined on demand). */
const VALID_BEFORE = 2n ** 48n;

/** JSON-RPC over fetch, one call or a batch. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function rpcBatch(url: string, calls: { method: string; params: unknown[] }[]): Promise<unknown[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: "2.0", id, ...c }))),
  });
  const answers = (await response.json()) as { id: number; result?: unknown; error?: { message: string } }[];
  return answers
    .sort((a, b) => a.id - b.id)
    .map((a) => {
      if (a.error) throw new Error(`${calls[a.id]?.method}: ${a.error.message}`);
      return a.result;
    });
}

export interface SignedSettlement {
  /** The raw transaction, ready for eth_sendRawTransaction. */
  tx: Hex;
  paid: Omit<Paid, "tx">;
}

const accounts = new Map<string, ReturnType<typeof privateKeyToAccount>>();
/** Deriving an account's public key costs about as much as a signature: once per key. */
function account(key: Hex) {
  let a = accounts.get(key);
  if (!a) {
    a = privateKeyToAccount(key);
    accounts.set(key, a);
  }
  return a;
}

/**
 * Signs settlements (each buyer's authorization, then the sender's transaction with consecutive nonces
 * from `startNonce`) without sending them. About 3 ms each on one core: the benchmark runs it in workers.
 */
export async function signSettlements(
  usdc: Address,
  sender: DevnetAccount,
  startNonce: number,
  orders: readonly PaymentOrder[],
  chainId: number = BASE_CHAIN_ID,
): Promise<SignedSettlement[]> {
  const out: SignedSettlement[] = [];
  let txNonce = startNonce;
  for (const order of orders) {
    const buyer = account(order.buyer.privateKey);
    const nonce = `0x${crypto.randomBytes(32).toString("hex")}` as Hex;
    const message = {
      from: buyer.address,
      to: order.payTo,
      value: order.amount,
      validAfter: 0n,
      validBefore: VALID_BEFORE,
      nonce,
    };
    const signature = await buyer.signTypedData({
      domain: {
        name: USDC_EIP712_NAME,
        version: USDC_EIP712_VERSION,
        chainId,
        verifyingContract: usdc,
      },
      types: eip3009Types,
      primaryType: "TransferWithAuthorization",
      message,
    });
    const data = encodeFunctionData({
      abi: usdcAbi,
      functionName: "transferWithAuthorization",
      args: [
        message.from,
        message.to,
        message.value,
        message.validAfter,
        message.validBefore,
        nonce,
        signature,
      ],
    });
    const tx = await account(sender.privateKey).signTransaction({
      chainId,
      type: "eip1559",
      nonce: txNonce++,
      to: usdc,
      data,
      gas: GAS,
      maxFeePerGas: MAX_FEE,
      maxPriorityFeePerGas: PRIORITY_FEE,
    });
    out.push({
      tx,
      paid: {
        payer: buyer.address.toLowerCase(),
        payTo: order.payTo.toLowerCase(),
        amount: order.amount,
        sender: sender.address.toLowerCase(),
      },
    });
  }
  return out;
}

/** Sends signed transactions in JSON-RPC batches; returns their hashes in order. */
export async function sendRaw(rpcUrl: string, txs: readonly Hex[], batch = 500): Promise<Hex[]> {
  const hashes: Hex[] = [];
  for (let i = 0; i < txs.length; i += batch) {
    const slice = txs.slice(i, i + batch);
    hashes.push(
      ...((await rpcBatch(
        rpcUrl,
        slice.map((tx) => ({ method: "eth_sendRawTransaction", params: [tx] })),
      )) as Hex[]),
    );
  }
  return hashes;
}

/** Sends settlements from one account, keeping its nonce locally (call `resync` after a revert). */
export class Settler {
  private nonce: number | undefined;

  constructor(
    private readonly devnet: Pick<Devnet, "rpc" | "usdc"> & { chainId?: number },
    readonly sender: DevnetAccount,
  ) {}

  /** Forgets the local nonce: the next send asks the chain (after `evm_revert`). */
  resync(): void {
    this.nonce = undefined;
  }

  /** Signs and sends one settlement per order; returns what each pays. */
  async settle(orders: readonly PaymentOrder[]): Promise<Paid[]> {
    this.nonce ??= Number(
      await rpc<string>(this.devnet.rpc, "eth_getTransactionCount", [this.sender.address, "pending"]),
    );
    const signed = await signSettlements(
      this.devnet.usdc,
      this.sender,
      this.nonce,
      orders,
      this.devnet.chainId,
    );
    this.nonce += signed.length;
    const hashes = await sendRaw(
      this.devnet.rpc,
      signed.map((s) => s.tx),
    );
    return signed.map((s, i) => ({ ...s.paid, tx: hashes[i] as Hex }));
  }
}

/** A plain USDC `transfer` signed and sent by `from` (who needs ETH for gas). Not mined. */
export async function sendTransfer(
  devnet: Pick<Devnet, "rpc" | "usdc"> & { chainId?: number },
  from: DevnetAccount,
  to: Address,
  amount: bigint,
): Promise<Hex> {
  const account = privateKeyToAccount(from.privateKey);
  const nonce = Number(await rpc<string>(devnet.rpc, "eth_getTransactionCount", [from.address, "pending"]));
  const tx = await account.signTransaction({
    chainId: devnet.chainId ?? BASE_CHAIN_ID,
    type: "eip1559",
    nonce,
    to: devnet.usdc,
    data: encodeFunctionData({ abi: usdcAbi, functionName: "transfer", args: [to, amount] }),
    gas: GAS,
    maxFeePerGas: MAX_FEE,
    maxPriorityFeePerGas: PRIORITY_FEE,
  });
  return rpc<Hex>(devnet.rpc, "eth_sendRawTransaction", [tx]);
}

/** Mines one block at a time until the pool is empty; checks every transaction succeeded. */
export async function mineAll(
  devnet: Pick<Devnet, "rpc" | "mine">,
  txs: readonly Hex[] = [],
): Promise<number> {
  for (let i = 0; i < 1_000; i++) {
    await devnet.mine(1);
    const pool = await rpc<{ pending: string; queued: string }>(devnet.rpc, "txpool_status");
    if (Number(pool.pending) === 0 && Number(pool.queued) === 0) break;
  }
  for (let i = 0; i < txs.length; i += 500) {
    const receipts = (await rpcBatch(
      devnet.rpc,
      txs.slice(i, i + 500).map((tx) => ({ method: "eth_getTransactionReceipt", params: [tx] })),
    )) as ({ status: string } | null)[];
    const failed = receipts.findIndex((r) => r?.status !== "0x1");
    if (failed >= 0) throw new Error(`transaction ${txs[i + failed]} failed or was not mined`);
  }
  return Number(await rpc<string>(devnet.rpc, "eth_blockNumber"));
}

/** A fresh account with ETH for gas (anvil_setBalance), for "unknown" senders and merchants that send. */
export async function fundedAccount(
  devnet: Pick<Devnet, "rpc">,
  account: DevnetAccount,
): Promise<DevnetAccount> {
  await rpc(devnet.rpc, "anvil_setBalance", [account.address, "0x56bc75e2d63100000"]);
  return account;
}

/**
 * Plain ETH transfers between accounts unrelated to any payment: the rest of a Base-like block beside its
 * settlements. anvil mines a block's transactions in the order they were sent: send some of these before
 * the settlements and some after, so that the settlements sit in its middle, as on Base.
 */
export class Traffic {
  private readonly senders: ReturnType<typeof privateKeyToAccount>[];
  private readonly nonces = new Map<string, number>();
  private sent = 0;

  constructor(
    private readonly devnet: Pick<Devnet, "rpc"> & { chainId?: number },
    { firstIndex = 20_000, senders = 100 } = {},
  ) {
    this.senders = Array.from({ length: senders }, (_, i) => account(derive(firstIndex + i).privateKey));
  }

  /** Gives every sender ETH (once, before the first `sign`). */
  async fund(): Promise<void> {
    for (const sender of this.senders)
      await rpc(this.devnet.rpc, "anvil_setBalance", [sender.address, `0x${(10n ** 21n).toString(16)}`]);
  }

  /** `count` transfers, signed, not sent. */
  async sign(count: number): Promise<Hex[]> {
    const out: Hex[] = [];
    for (let i = 0; i < count; i++, this.sent++) {
      const sender = this.senders[this.sent % this.senders.length] as (typeof this.senders)[number];
      const nonce = this.nonces.get(sender.address) ?? 0;
      this.nonces.set(sender.address, nonce + 1);
      out.push(
        await sender.signTransaction({
          chainId: this.devnet.chainId ?? BASE_CHAIN_ID,
          type: "eip1559",
          nonce,
          to: derive(30_000 + (this.sent % 500)).address,
          value: 1_000n + BigInt(this.sent),
          gas: 21_000n,
          maxFeePerGas: MAX_FEE,
          maxPriorityFeePerGas: PRIORITY_FEE,
        }),
      );
    }
    return out;
  }
}
