/**
 * The demo's Solana week (issue 86 item 7): the local Solana in process (litesvm behind its JSON-RPC server,
 * src/chain/solana/devnet/), the Solana population of solana-plan.ts paying the same merchants through the same
 * facilitator with real x402 SVM payments (the SDK's `ExactSvmScheme`: the buyer signs, the facilitator pays the
 * fee and settles), its ground truth under `demo/solana/`, and one pass of the Solana indexer
 * (`index --chain solana`'s) into the analytics database once the week is played.
 *
 * Time: each slot is dated by a stamped clock the player sets to each action's planned time before it plays it,
 * so the week's payments fall over its days as Base's do, though it is played in seconds.
 *
 * A restart: litesvm keeps its state in memory, so the local Solana cannot resume. A week that was indexed
 * (its truth-complete.json written after the pass) stays as the analytics database and `demo/solana/` hold it, and
 * a later start does not start Solana again (the hosts then sell on the EVM chains only); one that was not is
 * played again from its start on a fresh chain, its partial truth dropped (nothing of it was in the store; a start
 * stopped between the pass and its mark left the week in the store, which is then kept and marked).
 */
import fs from "node:fs";
import {
  type Address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferCheckedInstruction } from "@solana-program/token";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { parseUnits } from "viem";
import type { Analytics } from "../analytics/duckdb.ts";
import { SOLANA_RECORD } from "../chain/chains.ts";
import { FacilitatorRegistry } from "../chain/facilitators.ts";
import {
  SOLANA_NETWORK,
  SOLANA_SLUG,
  SOLANA_USDC_DECIMALS,
  SOLANA_USDC_MINT,
} from "../chain/solana/constants.ts";
import {
  type SolanaDevnet,
  type SolanaKeyPair,
  startSolanaDevnet,
  usdcAccountOf,
} from "../chain/solana/devnet/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import type { DemoChainFiles } from "../config/layout.ts";
import { portSetting } from "../config/ports.ts";
import { indexSolana } from "../indexer/index.ts";
import { request } from "./request.ts";
import { DemoError, type World } from "./resume.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { type SolanaAction, solanaGenesis, solanaMerchantKey, solanaPlan } from "./solana-plan.ts";
import { appendTruth, readTruth, readTruthComplete, type TruthRecord, writeTruthComplete } from "./truth.ts";

/** The demo's local Solana, once started, and the clock its slots are dated by. */
export interface SolanaRun {
  devnet: SolanaDevnet;
  files: DemoChainFiles;
  /** Sets the time the next slot is dated (unix seconds); it never goes back. */
  stamp(seconds: number): void;
}

/** Whether the Solana week in `files` was played and indexed (a start before this one wrote its mark). */
export const solanaWeekDone = (files: DemoChainFiles): boolean =>
  readTruthComplete(files.truthComplete) !== undefined;

/** Starts the local Solana on `port` with the wallets the week needs, its first slot dated at the world's genesis. */
export async function startDemoSolana(
  port: number,
  world: World,
  files: DemoChainFiles,
  lifecycle: Lifecycle,
): Promise<SolanaRun> {
  let ms = world.genesisTime * 1000;
  const devnet = await startSolanaDevnet({
    port,
    buyers: 0,
    accounts: solanaGenesis(),
    now: () => ms,
  }).catch((error) => {
    if (/address already in use|EADDRINUSE/i.test(String(error))) {
      throw new DemoError(
        `the local Solana's port ${port} is in use: stop the other one or set ${portSetting("devnetSolana")} (0 picks a free one)`,
      );
    }
    throw error;
  });
  lifecycle.add("local Solana", () => devnet.stop());
  fs.mkdirSync(files.dir, { recursive: true });
  return {
    devnet,
    files,
    stamp: (seconds) => {
      ms = Math.max(ms, seconds * 1000);
    },
  };
}

export interface SolanaWeekStats {
  payments: number;
  failures: number;
  /** The slot the indexer read to. */
  slot: number;
  /** The store held the week already (a start stopped between the pass and its mark): kept, not played again. */
  kept?: true;
}

/**
 * Plays the week over `[start, end)` (unix seconds) from its start, its truth written afresh as each payment
 * settles, then indexes it into `analytics` and marks its truth complete to the slot read. `onFailure` hears of
 * each payment that did not settle (the week goes on, as Base's does).
 */
export async function playSolanaWeek(
  run: SolanaRun,
  merchants: readonly SimMerchant[],
  window: { start: number; end: number },
  analytics: Analytics,
  options: { signal: AbortSignal; onFailure?: (message: string) => void },
): Promise<SolanaWeekStats> {
  // The pass's checkpoint is in the store only once its payments are: then the truth was whole before it began.
  const [indexed] = await analytics.all<{ slot: number | null }>(
    "SELECT max(block_number)::DOUBLE AS slot FROM checkpoints WHERE chain = $chain",
    { chain: SOLANA_SLUG },
  );
  if (indexed?.slot != null) {
    writeTruthComplete(run.files.truthComplete, indexed.slot);
    return { payments: readTruth(run.files.truth).length, failures: 0, slot: indexed.slot, kept: true };
  }
  fs.rmSync(run.files.truth, { force: true });
  const stats = { payments: 0, failures: 0, slot: 0 };
  const signers = new Map<string, Promise<KeyPairSigner>>();
  const signerOf = (key: SolanaKeyPair) => {
    let made = signers.get(key.address);
    if (!made) {
      made = createKeyPairSignerFromBytes(key.secretKey);
      signers.set(key.address, made);
    }
    return made;
  };
  for (const action of solanaPlan(merchants, window.start, window.end)) {
    if (options.signal.aborted) return stats;
    run.stamp(action.at);
    try {
      if (action.type === "transfer") await transfer(run.devnet.rpc, await signerOf(action.from), action);
      else {
        appendTruth(run.files.truth, [await pay(run, await signerOf(action.payer), action)]);
        stats.payments++;
      }
    } catch (error) {
      stats.failures++;
      options.onFailure?.(`solana ${action.type}: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  stats.slot = await indexSolanaWeek(run, analytics);
  writeTruthComplete(run.files.truthComplete, stats.slot);
  return stats;
}

/** One payment as a buyer makes it: the 402, the SDK's SVM client signing, the merchant settling. */
async function pay(
  run: SolanaRun,
  payer: KeyPairSigner,
  action: Extract<SolanaAction, { type: "pay" }>,
): Promise<TruthRecord> {
  const { merchant, endpoint } = action;
  const client = new x402Client().register(
    SOLANA_NETWORK,
    new ExactSvmScheme(payer, { rpcUrl: run.devnet.rpc }),
  );
  const response = await wrapFetchWithPayment(
    fetch,
    client,
  )(...request(merchant.url, endpoint, endpoint.input));
  const header = response.headers.get("PAYMENT-RESPONSE");
  const body = await response.text();
  if (!response.ok || !header)
    throw new Error(`${merchant.id} ${endpoint.path} answered ${response.status}: ${body.slice(0, 200)}`);
  const settlement = decodePaymentResponseHeader(header);
  const landed = settlement.transaction
    ? run.devnet.chain.ledger.transaction(settlement.transaction)
    : undefined;
  if (!settlement.success || !landed)
    throw new Error(`${merchant.id} ${endpoint.path}: no settlement on the local Solana`);
  return {
    tx_hash: landed.signature,
    block_number: Number(landed.slot),
    payer: payer.address,
    pay_to: solanaMerchantKey(merchant.id).address,
    amount: parseUnits(String(endpoint.price), SOLANA_USDC_DECIMALS).toString(),
    behaviour: action.behaviour,
    merchant: merchant.id,
    endpoint: `${endpoint.method} ${endpoint.path}`,
    scheme: "exact",
  };
}

/** A plain USDC transfer between two wallets' accounts, which the sender signs and pays the fee of. */
async function transfer(
  url: string,
  from: KeyPairSigner,
  action: Extract<SolanaAction, { type: "transfer" }>,
): Promise<void> {
  const rpc = createSolanaRpc(url);
  const instruction = getTransferCheckedInstruction({
    source: (await usdcAccountOf(from.address)) as Address,
    mint: SOLANA_USDC_MINT as Address,
    destination: (await usdcAccountOf(action.to.address)) as Address,
    authority: from,
    amount: action.amount,
    decimals: SOLANA_USDC_DECIMALS,
  });
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(from, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
    (tx) => appendTransactionMessageInstruction(instruction, tx),
  );
  const signed = await signTransactionMessageWithSigners(message);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
}

/**
 * One pass of the Solana indexer over the local Solana into the analytics database, on a connection of its own
 * and in the store's turn (the EVM chains' indexers write beside it); the slot it read to.
 */
async function indexSolanaWeek(run: SolanaRun, analytics: Analytics): Promise<number> {
  const connection = await analytics.fork();
  try {
    const summary = await connection.storeTurn(() =>
      indexSolana({
        rpc: run.devnet.rpc,
        analytics: connection,
        registry: FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners(
          [run.devnet.feePayer.address],
          "the demo's facilitator",
        ),
      }),
    );
    return summary.slot;
  } finally {
    connection.close();
  }
}
