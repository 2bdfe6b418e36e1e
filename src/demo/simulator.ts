/**
 * The buyer simulator: plays the plan's actions on the devnet with real x402 payments (`@x402/fetch`:
 * 402, an EIP-3009 signature for `exact` or a Permit2 one for metered `upto` endpoints, the merchant's
 * facilitator settles on chain; half the agents pay through the hosts' MCP face instead, `viaMcp`) and
 * real USDC transfers. A wallet approves Permit2 once, before its first
 * metered call, as a buyer of upto endpoints must.
 *
 * Time: the chain starts a week in the past. While the plan is behind the wall clock the simulator
 * compresses it: before each action it mines empty blocks (2 s apart, `anvil_mine`) up to the action's
 * time, and a miner puts waiting transactions in a block every few milliseconds. Authorizations stay
 * valid because x402 v2 signs `validAfter = 0` and `validBefore = now + timeout` by the wall clock, which
 * is ahead of the chain's. Once the plan reaches the present, the devnet mines a block every 2 s and the
 * simulator plays each action at its time.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoEvmClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import {
  type Account,
  BaseError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  http,
  maxUint256,
  parseUnits,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BLOCK_SECONDS, PERMIT2_ADDRESS } from "../chain/base.ts";
import { type DevnetAccount, devnetChain } from "../chain/devnet/index.ts";
import { pollReceipt } from "../chain/receipt.ts";
import { usdcAbi } from "../chain/usdc.ts";
import { MCP_PATH } from "../common/mcp/http.ts";
import { sleep } from "../common/sleep.ts";
import { pathParams } from "../merchant-kit/endpoint.ts";
import { callPaidTool, connectMcp } from "../merchant-kit/mcp/client.ts";
import { paymentRequiredOf } from "../merchant-kit/mcp/meta.ts";
import { toolNameOf } from "../merchant-kit/mcp/tools.ts";
import { type Action, type PlanContext, type PlanEndpoint, planSlot, type WalletId } from "./plan.ts";
import { appendTruth, type TruthRecord, writeTruthComplete } from "./truth.ts";

export interface SimMerchant {
  id: string;
  /** Base URL the endpoints' paths are appended to. */
  url: string;
  payTo: string;
  endpoints: readonly PlanEndpoint[];
}

export interface SimulatorOptions {
  rpc: string;
  usdc: `0x${string}`;
  /** The token owner, who mints. */
  owner: DevnetAccount;
  plan: PlanContext;
  merchants: readonly SimMerchant[];
  wallets: ReadonlyMap<WalletId, DevnetAccount>;
  /** Chain time of the chain's first block (each block is 2 s after its parent). */
  genesisTime: number;
  /** Number of the chain's first block (default 0). */
  genesisNumber?: number;
  /** First slot to play (a resumed demo starts after the last one played). */
  startSlot: number;
  truthFile: string;
  /** Where the block up to which `truthFile` is complete is recorded after each batch (truth.ts). */
  truthCompleteFile?: string;
  /** Payments in flight at once while catching up. Default 16. */
  concurrency?: number;
  /** Wall clock, unix ms; tests move it. */
  now?: () => number;
  signal: AbortSignal;
  onEvent?: (event: SimulatorEvent) => void;
}

export type SimulatorEvent =
  | { type: "slot"; slot: number; chainTime: number; payments: number; failures: number; live: boolean }
  | { type: "caught_up"; slot: number; block: number; payments: number; failures: number }
  | { type: "payment_failed"; merchant: string; path: string; status: number; reason: string };

export interface SimulatorStats {
  payments: number;
  failures: number;
  slot: number;
}

const MINE_TICK_MS = 15;
/** One try at a payment: its settlement, or the status and reason it failed and whether to try again. */
interface Attempt {
  status: number;
  settlement?: SettleResponse;
  reason?: string;
  again?: boolean;
}

/** A merchant host's MCP face: a connected client, and the tool each endpoint is (if the host lists it). */
interface McpFace {
  client: Client;
  toolFor(endpoint: PlanEndpoint): string | undefined;
}

async function connectFace(merchant: SimMerchant): Promise<McpFace> {
  const client = await connectMcp(`${merchant.url}${MCP_PATH}`, { name: "x402-merchants-demo-agent" });
  const names = new Set((await client.listTools()).tools.map((t) => t.name));
  return {
    client,
    // A path two routes share is named with the method first (merchant-kit/mcp/tools.ts); an unlisted
    // endpoint is no tool and is paid over HTTP.
    toolFor: (endpoint) =>
      [toolNameOf(endpoint.path), `${endpoint.method.toLowerCase()}_${toolNameOf(endpoint.path)}`].find((n) =>
        names.has(n),
      ),
  };
}

/**
 * Whether this payment goes through the merchant's MCP face: an agent's, for every other agent wallet
 * (fixed by its id, so a wallet keeps its face across the week): agents reach paid services through MCP
 * more and more, and the week then holds payments from both faces for the screens and the check.
 */
export function viaMcp(action: Extract<Action, { type: "pay" }>): boolean {
  if (action.behaviour !== "agent") return false;
  let hash = 0;
  for (const char of action.from) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % 2 === 0;
}

/** A payment refused without a charge, or whose own chain read lost its block, is tried this often in all. */
const PAY_ATTEMPTS = 3;

/**
 * A read at "latest" that the devnet answered "block height is N but requested was M": anvil keeping no
 * state but the head's (`--prune-history`) had mined past the block the read resolved. Asked again, it reads
 * the new head.
 */
function lostItsBlock(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    error.walk((e) =>
      /BlockOutOfRange|block height is \d+ but requested was/.test(
        String((e as BaseError).details ?? (e as Error).message),
      ),
    ) !== null
  );
}
/** A transaction waits one tick while catching up and a block (2 s) when live: a minute is a failure. */
const RECEIPT_TIMEOUT_MS = 60_000;

/** Plays slots from `startSlot` until the signal aborts; resolves when stopped. */
export async function runSimulator(options: SimulatorOptions): Promise<SimulatorStats> {
  const chain = devnetChain(options.rpc);
  const transport = http(options.rpc, { batch: { batchSize: 200, wait: 5 } });
  const client = createPublicClient({ chain, transport });
  const test = createTestClient({ chain, mode: "anvil", transport });
  const walletClient = createWalletClient({ chain, transport });
  const now = options.now ?? Date.now;
  const concurrency = options.concurrency ?? 16;
  const merchants = new Map(options.merchants.map((m) => [m.id, m]));
  const stats: SimulatorStats = { payments: 0, failures: 0, slot: options.startSlot };
  const accounts = new Map<WalletId, Account>();
  const account = (id: WalletId): Account => {
    const known = accounts.get(id);
    if (known) return known;
    const key = options.wallets.get(id);
    if (!key) throw new Error(`no key for simulated wallet ${id}`);
    const made = privateKeyToAccount(key.privateKey);
    accounts.set(id, made);
    return made;
  };
  const x402Clients = new Map<WalletId, x402Client>();
  const x402ClientOf = (id: WalletId) => {
    let payer = x402Clients.get(id);
    if (!payer) {
      const signer = privateKeyToAccount(keyOf(id));
      payer = new x402Client()
        .register("eip155:8453", new ExactEvmClient(signer))
        .register("eip155:8453", new UptoEvmClient(signer));
      x402Clients.set(id, payer);
    }
    return payer;
  };
  const payers = new Map<WalletId, typeof fetch>();
  const payingFetch = (id: WalletId) => {
    let f = payers.get(id);
    if (!f) {
      f = wrapFetchWithPayment(fetch, x402ClientOf(id));
      payers.set(id, f);
    }
    return f;
  };
  // One MCP client a merchant, connected on first use, and the tools its host lists.
  const faces = new Map<string, Promise<McpFace>>();
  const mcpFace = (merchant: SimMerchant): Promise<McpFace> => {
    let face = faces.get(merchant.id);
    if (!face) {
      face = connectFace(merchant);
      face.catch(() => faces.delete(merchant.id));
      faces.set(merchant.id, face);
    }
    return face;
  };
  const keyOf = (id: WalletId) => {
    const key = options.wallets.get(id);
    if (!key) throw new Error(`no key for simulated wallet ${id}`);
    return key.privateKey;
  };

  // Senders of transactions need gas; x402 payers do not (the facilitator pays it). Given on first use:
  // on a chain with state roots (one an earlier version saved) every account is one more leaf anvil
  // rehashes for every block.
  const gassed = new Set<string>();
  const gas = async (address: `0x${string}`) => {
    if (gassed.has(address)) return;
    await test.setBalance({ address, value: 10n ** 18n });
    gassed.add(address);
  };

  // While catching up, a transaction waits at most one tick for its block.
  let live = false;
  let mining: Promise<void> = Promise.resolve();
  const miner = setInterval(() => {
    if (live) return;
    mining = mining.then(async () => {
      try {
        const pool = await test.getTxpoolStatus();
        if (pool.pending > 0) await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
      } catch {
        // anvil is stopping.
      }
    });
  }, MINE_TICK_MS);

  const first = options.genesisNumber ?? 0;
  const blockOf = (time: number) => first + Math.ceil((time - options.genesisTime) / BLOCK_SECONDS);
  /** Mines empty blocks until the head's time is at least `time` (never past the wall clock). */
  const mineTo = async (time: number) => {
    const target = Math.min(
      blockOf(time),
      first + Math.floor((now() / 1000 - options.genesisTime) / BLOCK_SECONDS),
    );
    await mining;
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    if (target > head) await test.mine({ blocks: target - head, interval: BLOCK_SECONDS });
  };

  // Permit2 may move a wallet's USDC once the wallet approved it: checked on chain, so a resumed demo does
  // not approve again, and once per wallet however many of its calls run at once.
  const approvals = new Map<WalletId, Promise<void>>();
  const approvePermit2 = (id: WalletId): Promise<void> => {
    let approval = approvals.get(id);
    if (!approval) {
      approval = (async () => {
        const owner = account(id);
        const common = { address: options.usdc, abi: usdcAbi } as const;
        const allowance = await client.readContract({
          ...common,
          functionName: "allowance",
          args: [owner.address, PERMIT2_ADDRESS],
        });
        if (allowance >= maxUint256 / 2n) return;
        await gas(owner.address);
        const hash = await walletClient.writeContract({
          ...common,
          chain,
          account: owner,
          functionName: "approve",
          args: [PERMIT2_ADDRESS, maxUint256],
          gas: 80_000n,
        });
        const receipt = await pollReceipt(client, hash, RECEIPT_TIMEOUT_MS, 20);
        if (receipt?.status !== "success") throw new Error(`approving Permit2 failed (${hash})`);
      })();
      approval.catch(() => approvals.delete(id));
      approvals.set(id, approval);
    }
    return approval;
  };

  /** Waits for a transaction the simulator sent; one not mined in time stops the simulator. */
  const confirmed = async (hash: Hash) => {
    if (!(await pollReceipt(client, hash, RECEIPT_TIMEOUT_MS, 20))) {
      throw new Error(`transaction ${hash} was not mined within ${RECEIPT_TIMEOUT_MS / 1000} s`);
    }
  };

  const inFlight = new Set<Promise<void>>();
  const settled: { record: Omit<TruthRecord, "block_number">; hash: Hash }[] = [];
  /**
   * Appends the settled payments to the truth, then records the block up to which it is complete. That
   * block is the head once no payment is in flight: a payment under way may settle in any block up to
   * the head before its answer arrives, and one started later lands after it.
   */
  const flushTruth = async () => {
    await Promise.all(inFlight);
    const head = Number(await client.getBlockNumber({ cacheTime: 0 }));
    const batch = settled.splice(0);
    if (batch.length > 0) {
      const receipts = await Promise.all(batch.map((s) => client.getTransactionReceipt({ hash: s.hash })));
      appendTruth(
        options.truthFile,
        batch.map((s, i) => ({ ...s.record, block_number: Number(receipts[i]?.blockNumber) })),
      );
    }
    if (options.truthCompleteFile) writeTruthComplete(options.truthCompleteFile, head);
  };

  const pay = async (action: Extract<Action, { type: "pay" }>) => {
    const merchant = merchants.get(action.merchant);
    const endpoint = merchant?.endpoints[action.endpoint];
    if (!merchant || !endpoint) throw new Error(`unknown endpoint ${action.merchant}#${action.endpoint}`);
    const fail = (status: number, reason: string) => {
      stats.failures++;
      options.onEvent?.({
        type: "payment_failed",
        merchant: merchant.id,
        path: endpoint.path,
        status,
        reason,
      });
    };
    const input = action.input ?? endpoint.input;
    /** One try over HTTP (`@x402/fetch`): the settlement, or why not and whether another try may do. */
    const overHttp = async (): Promise<Attempt> => {
      const response = await payingFetch(action.from)(...request(merchant.url, endpoint, input));
      const header = response.headers.get("PAYMENT-RESPONSE");
      if (!response.ok || !header) {
        const reason =
          refusal(response.headers.get("PAYMENT-REQUIRED")) ?? (await response.text()).slice(0, 200);
        return { status: response.status, reason, again: response.status === 402 || response.status === 503 };
      }
      await response.arrayBuffer().catch(() => undefined);
      return { status: response.status, settlement: decodePaymentResponseHeader(header) };
    };
    /** One try over MCP (x402's MCP transport): a PaymentRequired after paying is a refusal, as a 402. */
    const overMcp = async (face: McpFace, tool: string): Promise<Attempt> => {
      const call = await callPaidTool(face.client, x402ClientOf(action.from), tool, input);
      if (call.settlement?.success) return { status: 200, settlement: call.settlement };
      const required = paymentRequiredOf(call.result);
      const text = call.result.content?.[0]?.type === "text" ? call.result.content[0].text : "";
      return {
        status: required ? 402 : 0,
        reason: `over MCP: ${required?.error ?? call.settlement?.errorReason ?? text.slice(0, 200)}`,
        again: required !== undefined,
      };
    };
    try {
      const face = viaMcp(action) ? await mcpFace(merchant) : undefined;
      const tool = face?.toolFor(endpoint);
      let outcome: Attempt;
      // Refused after paying, or "try again", and charged nothing, or a read of our own that lost its block:
      // try again, as an agent would. The devnet keeps no state but the head's, so a read (ours, a
      // verification, a balance) that a burst of mined blocks overtakes finds none (devnet docs).
      for (let attempt = 1; ; attempt++) {
        const retry = attempt < PAY_ATTEMPTS;
        try {
          if (endpoint.scheme === "upto") await approvePermit2(action.from);
          outcome = face && tool ? await overMcp(face, tool) : await overHttp();
        } catch (error) {
          if (!(retry && lostItsBlock(error))) throw error;
          await sleep(50 * attempt);
          continue;
        }
        if (!(retry && outcome.again)) break;
        await sleep(outcome.status === 503 ? 200 : 50 * attempt);
      }
      const { settlement } = outcome;
      if (!settlement) {
        fail(outcome.status, outcome.reason ?? "no settlement");
        return;
      }
      if (!settlement.success) {
        fail(outcome.status, settlement.errorReason ?? "settlement failed");
        return;
      }
      // A metered call charges what it used (the settlement says how much); one that used nothing
      // settles nothing and leaves nothing on chain.
      const amount =
        endpoint.scheme === "upto" ? BigInt(settlement.amount ?? 0) : parseUnits(String(endpoint.price), 6);
      if (amount === 0n || !settlement.transaction) return;
      stats.payments++;
      settled.push({
        hash: settlement.transaction as Hash,
        record: {
          tx_hash: settlement.transaction.toLowerCase(),
          payer: account(action.from).address.toLowerCase(),
          pay_to: merchant.payTo.toLowerCase(),
          amount: amount.toString(),
          behaviour: action.behaviour,
          merchant: merchant.id,
          endpoint: `${endpoint.method} ${endpoint.path}`,
          ...(face && tool ? { face: "mcp" as const } : {}),
        },
      });
    } catch (error) {
      fail(0, (error as Error).message.split("\n")[0] ?? "error");
    }
  };

  const transfer = async (action: Exclude<Action, { type: "pay" }>): Promise<Hash> => {
    const amount = parseUnits(String(action.usd), 6);
    const common = { chain, address: options.usdc, abi: usdcAbi, gas: 120_000n } as const;
    await gas(action.type === "mint" ? options.owner.address : account(action.from).address);
    return action.type === "mint"
      ? walletClient.writeContract({
          ...common,
          account: privateKeyToAccount(options.owner.privateKey),
          functionName: "mint",
          args: [account(action.to).address, amount],
        })
      : walletClient.writeContract({
          ...common,
          account: account(action.from),
          functionName: "transfer",
          args: [account(action.to).address, amount],
        });
  };

  try {
    for (let slot = options.startSlot; !options.signal.aborted; slot++) {
      stats.slot = slot;
      const actions = planSlot(options.plan, slot);
      const slotEnd = options.plan.epoch + (slot + 1) * options.plan.slotSeconds;
      if (!live && slotEnd > now() / 1000) {
        // The plan reached the present: from here the chain follows the wall clock.
        await flushTruth();
        await mineTo(now() / 1000);
        live = true;
        await mining;
        await test.setIntervalMining({ interval: BLOCK_SECONDS });
        options.onEvent?.({
          type: "caught_up",
          slot,
          block: Number(await client.getBlockNumber({ cacheTime: 0 })),
          payments: stats.payments,
          failures: stats.failures,
        });
      }
      const transfers: Hash[] = [];
      // What each wallet was sent in this slot and is not yet known to be in a block: a wallet passes money
      // on (a deposit, a chain of private wallets) only once what it was sent is there to spend.
      const incoming = new Map<WalletId, Hash[]>();
      for (const action of actions) {
        if (options.signal.aborted) break;
        if (live) await sleepUntil(action.at * 1000, now, options.signal);
        else await mineTo(action.at);
        if (action.type !== "pay") {
          if (action.type === "transfer" && incoming.has(action.from)) {
            await Promise.all((incoming.get(action.from) as Hash[]).map(confirmed));
            incoming.delete(action.from);
          }
          const hash = await transfer(action);
          transfers.push(hash);
          incoming.set(action.to, [...(incoming.get(action.to) ?? []), hash]);
          continue;
        }
        // Payments by a wallet funded in this slot wait for the funding to be in a block.
        if (transfers.length > 0) {
          await Promise.all(transfers.splice(0).map(confirmed));
        }
        while (inFlight.size >= (live ? 64 : concurrency)) await Promise.race(inFlight);
        const p = pay(action).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      if (transfers.length > 0) {
        await Promise.all(transfers.map(confirmed));
      }
      if (settled.length >= 200 || live) await flushTruth();
      options.onEvent?.({
        type: "slot",
        slot,
        chainTime: Math.min(slotEnd, Math.floor(now() / 1000)),
        payments: stats.payments,
        failures: stats.failures,
        live,
      });
    }
  } finally {
    clearInterval(miner);
    await Promise.all(
      [...faces.values()].map((face) => face.then((f) => f.client.close()).catch(() => undefined)),
    );
    await flushTruth().catch(() => undefined);
    await mining;
  }
  return stats;
}

/**
 * The fetch arguments of one call: its path's parameters (`/pay/:agent_id`) from the input, the rest of
 * the input as query (GET) or JSON body (POST).
 */
function request(
  base: string,
  endpoint: PlanEndpoint,
  fullInput: Record<string, unknown>,
): [string, RequestInit] {
  const input = { ...fullInput };
  let path = endpoint.path;
  for (const name of pathParams(endpoint.path)) {
    path = path.replace(`:${name}`, encodeURIComponent(String(input[name])));
    delete input[name];
  }
  if (endpoint.method === "POST") {
    return [
      `${base}${path}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input),
      },
    ];
  }
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) {
    for (const v of Array.isArray(value) ? value : [value]) query.append(key, String(v));
  }
  const qs = query.toString();
  return [`${base}${path}${qs ? `?${qs}` : ""}`, { method: "GET" }];
}

/** Why a paid call was refused with 402: the reason its `PAYMENT-REQUIRED` header gives (its body may be empty). */
function refusal(header: string | null): string | undefined {
  if (!header) return undefined;
  try {
    return decodePaymentRequiredHeader(header).error;
  } catch {
    return undefined;
  }
}

function sleepUntil(ms: number, now: () => number, signal: AbortSignal): Promise<void> {
  const wait = ms - now();
  if (wait <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, wait);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
