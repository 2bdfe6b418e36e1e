/**
 * The Solana indexer's RPC cost (`npm run bench:index -- --chain solana --cost [--payments N]`, issue 86 item 2).
 *
 * The chain: the local Solana (src/chain/solana/devnet, in this process as the tests start it), `--buyers` funded
 * buyers (default 8), `--merchants` merchants (default 10) each opening its USDC account, one USDC transfer from each
 * buyer to the next (so that every payer has a funding move to find), then N x402 `exact` payments (default 300)
 * made as a buyer and a facilitator make them: the SDK's SVM client (`ExactSvmScheme`) builds and signs the buyer's
 * transfer, the SDK's facilitator scheme verifies and settles it with the devnet's fee payer.
 *
 * Two readers read the same fee payers (the bundled registry's and the devnet's) through the same counting proxy
 * (test/helpers/provider.ts: HTTP requests, calls, each call of a batch counted, and the bytes answered):
 * - the project's (`indexSolana`, src/indexer/solana/), without the funding history (the other reads none), and
 *   once more with it, as `index --chain solana` runs;
 * - a straightforward one, as a user would write it with `@solana/kit`: per fee payer one `getSignaturesForAddress`
 *   walk (pages of 1,000), then one `getTransaction` (`jsonParsed`) per landed signature, one after another, each
 *   decoded by the same `usdcMoves` (a `TransferChecked` of USDC whose fee payer is the facilitator).
 * Both must find exactly the settled payments (signature, instruction, payer, merchant, amount). Each reader runs
 * twice, alternating, and its faster run's time counts (counts are the same every run).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  type Address,
  appendTransactionMessageInstruction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
  pipe,
  type Rpc,
  type SolanaRpcApi,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferCheckedInstruction } from "@solana-program/token";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as ExactClient } from "@x402/svm/exact/client";
import { ExactSvmScheme as ExactFacilitator } from "@x402/svm/exact/facilitator";
import { Analytics } from "../src/analytics/duckdb.ts";
import { SOLANA_RECORD } from "../src/chain/chains.ts";
import { FacilitatorRegistry } from "../src/chain/facilitators.ts";
import { SOLANA_NETWORK, SOLANA_USDC_DECIMALS, SOLANA_USDC_MINT } from "../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  USDC_UNIT,
  usdcAccountOf,
} from "../src/chain/solana/devnet/index.ts";
import { solanaRpc } from "../src/chain/solana/rpc.ts";
import { indexSolana } from "../src/indexer/index.ts";
import { type ParsedTransaction, usdcMoves } from "../src/indexer/solana/decode.ts";
import { type Provider, startProvider } from "../test/helpers/provider.ts";
import { openUsdcAccount, signerOf } from "../test/helpers/solana-devnet.ts";

export interface SolanaCostOptions {
  payments: number;
  buyers: number;
  merchants: number;
}

interface Run {
  seconds: number;
  found: Set<string>;
  calls: number;
  httpRequests: number;
  bytes: number;
  methods: Record<string, number>;
}

const ROUNDS = 2;
const log = (message: string) => process.stderr.write(`${message}\n`);
/** A payment as both readers must find it. */
const key = (m: { signature: string; index: number; from: string; to: string; amount: bigint | string }) =>
  `${m.signature}:${m.index}:${m.from}:${m.to}:${m.amount}`;

export async function benchSolanaCost(options: SolanaCostOptions): Promise<void> {
  const started = performance.now();
  const devnet = await startSolanaDevnet({
    buyers: options.buyers,
    buyerUsdc: 10_000n * USDC_UNIT,
  });
  const proxy = await startProvider(devnet.rpc, { hosted: false });
  try {
    const settled = await buildChain(devnet, options);
    log(
      `settled ${settled.size} payments on the local Solana (and ${options.buyers} funding transfers) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const feePayer = devnet.feePayer.address;
    const registry = FacilitatorRegistry.forChain(SOLANA_RECORD).withSigners([feePayer]);
    const runs: Record<"project" | "funding" | "plain", Run[]> = { project: [], funding: [], plain: [] };
    for (let round = 0; round < ROUNDS; round++) {
      runs.project.push(
        await measure(proxy, (start, stop) => indexProject(proxy.url, registry, true, start, stop)),
      );
      runs.plain.push(
        await measure(proxy, (start, stop) => indexStraightforward(proxy.url, registry, start, stop)),
      );
      runs.funding.push(
        await measure(proxy, (start, stop) => indexProject(proxy.url, registry, false, start, stop)),
      );
    }
    const project = fastest(runs.project);
    const plain = fastest(runs.plain);
    const funding = fastest(runs.funding);
    for (const [name, run] of Object.entries({ project, plain, funding })) {
      const missing = [...settled].filter((k) => !run.found.has(k));
      const extra = [...run.found].filter((k) => !settled.has(k));
      if (missing.length > 0 || extra.length > 0)
        throw new Error(
          `${name} found ${run.found.size} payments of ${settled.size}: ${missing.length} missing, ${extra.length} not settled`,
        );
      log(`${name}: ${JSON.stringify(run.methods)}`);
    }
    report(options, settled.size, { project, plain, funding });
  } finally {
    await proxy.close();
    await devnet.stop();
  }
}

/**
 * `work` starts the clock after its own set-up (the project's store: the CLI's start is not counted either) and
 * stops it before reading back what it found.
 */
async function measure(
  proxy: Provider,
  work: (start: () => void, stop: () => void) => Promise<Set<string>>,
): Promise<Run> {
  let t = performance.now();
  let seconds = 0;
  const found = await work(
    () => {
      proxy.reset();
      t = performance.now();
    },
    () => {
      seconds = (performance.now() - t) / 1000;
    },
  );
  const { calls, httpRequests, bytes, methods } = proxy.cost;
  return { seconds, found, calls, httpRequests, bytes, methods: { ...methods } };
}

const fastest = (runs: Run[]) => runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));

/** The project's reader into a fresh store; the payments it stored. */
async function indexProject(
  url: string,
  registry: FacilitatorRegistry,
  skipFunding: boolean,
  start: () => void,
  stop: () => void,
): Promise<Set<string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x402m-bench-solana-"));
  const analytics = await Analytics.open({ dataDir: dir });
  try {
    start();
    await indexSolana({ rpc: url, analytics, registry, skipFunding });
    stop();
    const rows = await analytics.all<{
      tx_hash: string;
      log_index: number;
      payer: string;
      pay_to: string;
      amount: bigint;
    }>("SELECT tx_hash, log_index, payer, pay_to, amount FROM payments WHERE chain = 'solana'");
    return new Set(
      rows.map((r) =>
        key({
          signature: r.tx_hash,
          index: Number(r.log_index),
          from: r.payer,
          to: r.pay_to,
          amount: String(r.amount),
        }),
      ),
    );
  } finally {
    analytics.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What a user would write with `@solana/kit`: each fee payer's signatures, then each transaction, one at a time. */
async function indexStraightforward(
  url: string,
  registry: FacilitatorRegistry,
  start: () => void,
  stop: () => void,
): Promise<Set<string>> {
  start();
  const rpc = solanaRpc(url);
  const found = new Set<string>();
  for (const feePayer of registry.addresses()) {
    const signatures: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await rpc
        .getSignaturesForAddress(feePayer as Address, {
          commitment: "finalized",
          limit: 1_000,
          ...(before ? { before: before as never } : {}),
        })
        .send();
      for (const s of page) if (s.err === null) signatures.push(s.signature);
      if (page.length < 1_000) break;
      before = page.at(-1)?.signature;
    }
    for (const signature of signatures) {
      const tx = await rpc
        .getTransaction(signature as never, {
          commitment: "finalized",
          encoding: "jsonParsed",
          maxSupportedTransactionVersion: 0,
        })
        .send();
      if (!tx) continue;
      // kit reads integers as bigints; the decoder takes the slot and time as numbers.
      const parsed = {
        ...tx,
        slot: Number(tx.slot),
        blockTime: Number(tx.blockTime),
      } as unknown as ParsedTransaction;
      const moves = usdcMoves(parsed, SOLANA_USDC_MINT).filter((m) => m.feePayer === feePayer);
      if (moves.length > 0 && registry.judge(feePayer, moves[0]?.blockTime ?? 0).known)
        for (const m of moves) found.add(key(m));
    }
  }
  stop();
  return found;
}

/** Merchants with USDC accounts, a funding transfer into each buyer, then the payments; the settled payments' keys. */
async function buildChain(devnet: SolanaDevnet, options: SolanaCostOptions): Promise<Set<string>> {
  const rpc = solanaRpc(devnet.rpc) as unknown as Rpc<SolanaRpcApi>;
  const buyers = await Promise.all(devnet.buyers.map((b) => signerOf(b.secretKey)));
  const feePayer = await signerOf(devnet.feePayer.secretKey);
  const merchants: KeyPairSigner[] = [];
  for (let i = 0; i < options.merchants; i++) {
    const merchant = await generateKeyPairSigner();
    await openUsdcAccount(rpc, merchant);
    merchants.push(merchant);
  }
  for (let i = 0; i < buyers.length; i++)
    await transferUsdc(
      rpc,
      buyers[i] as KeyPairSigner,
      buyers[(i + 1) % buyers.length] as KeyPairSigner,
      1_000_000n,
    );
  const facilitator = new ExactFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: devnet.rpc }));
  const clients = buyers.map((b) => new ExactClient(b, { rpcUrl: devnet.rpc }));
  const settled = new Set<string>();
  for (let i = 0; i < options.payments; i++) {
    const b = i % buyers.length;
    // Merchants by a skewed choice, amounts of $0.001 to $0.099, as listed prices go.
    const merchant = merchants[
      Math.floor((((i * 7919) % 1000) ** 2 / 1_000_000) * merchants.length)
    ] as KeyPairSigner;
    const amount = BigInt(1_000 + ((i * 37) % 99) * 1_000);
    const accepted = {
      scheme: "exact",
      network: SOLANA_NETWORK,
      asset: SOLANA_USDC_MINT,
      amount: amount.toString(),
      payTo: merchant.address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address },
    } as PaymentRequirements;
    const created = await (clients[b] as ExactClient).createPaymentPayload(2, accepted);
    const payload = {
      ...created,
      accepted,
      resource: { url: "http://127.0.0.1/api/calc", description: "", mimeType: "" },
    } as PaymentPayload;
    const result = await facilitator.settle(payload, accepted);
    if (!result.success) throw new Error(`payment ${i} not settled: ${result.errorReason}`);
    const tx = devnet.chain.ledger.transaction(result.transaction);
    // The SDK's transaction: compute-unit limit and price, then the TransferChecked (instruction 2), then the memo.
    const index = tx?.tx.instructions.findIndex(
      (ix) => tx.tx.accountKeys[ix.programIdIndex] === SOLANA_RECORD.programs.token,
    );
    if (index === undefined || index < 0)
      throw new Error(`payment ${i}: no TransferChecked in ${result.transaction}`);
    settled.add(
      key({
        signature: result.transaction,
        index,
        from: (buyers[b] as KeyPairSigner).address,
        to: merchant.address,
        amount,
      }),
    );
    if ((i + 1) % 100 === 0) log(`  ${i + 1} payments settled`);
  }
  return settled;
}

/** `from` moves USDC into `to`'s account, paying its own fee: funding, for the payers' histories. */
async function transferUsdc(
  rpc: Rpc<SolanaRpcApi>,
  from: KeyPairSigner,
  to: KeyPairSigner,
  amount: bigint,
): Promise<void> {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const source = (await usdcAccountOf(from.address)) as Address;
  const destination = (await usdcAccountOf(to.address)) as Address;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(from, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
    (tx) =>
      appendTransactionMessageInstruction(
        getTransferCheckedInstruction({
          source,
          mint: SOLANA_USDC_MINT as Address,
          destination,
          authority: from,
          amount,
          decimals: SOLANA_USDC_DECIMALS,
        }),
        tx,
      ),
  );
  const signed = await signTransactionMessageWithSigners(message);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
}

/** The table: per payment, each reader's calls, HTTP requests and bytes, and the wall time; then the ratios. */
function report(
  options: SolanaCostOptions,
  payments: number,
  runs: { project: Run; plain: Run; funding: Run },
): void {
  const per = (n: number) => (n / payments).toFixed(3);
  const kb = (bytes: number) => `${(bytes / payments / 1000).toFixed(2)} kB`;
  const row = (name: string, r: Run) =>
    `| ${name} | ${per(r.calls)} | ${per(r.httpRequests)} | ${kb(r.bytes)} | ${Math.round(r.seconds * 1000)} ms |`;
  const { project, plain, funding } = runs;
  console.log(
    `\nbench:index --chain solana --cost, ${payments} exact payments (${options.buyers} buyers, ${options.merchants} merchants), ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? "cpu"} x ${os.cpus().length}, node ${process.version}`,
  );
  console.log("\n| reader | calls/payment | HTTP/payment | bytes/payment | wall |");
  console.log("|---|---|---|---|---|");
  console.log(row("project (`indexSolana`, no funding)", project));
  console.log(row("straightforward (kit, one `getTransaction` a signature)", plain));
  console.log(row("project with the funding history (as `index` runs)", funding));
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.log(
    `\nproject / straightforward: calls ${ratio(project.calls, plain.calls)}, HTTP ${ratio(project.httpRequests, plain.httpRequests)}, bytes ${ratio(project.bytes, plain.bytes)}, wall ${ratio(project.seconds, plain.seconds)}`,
  );
  console.log(
    `with funding / straightforward: calls ${ratio(funding.calls, plain.calls)}, HTTP ${ratio(funding.httpRequests, plain.httpRequests)}, bytes ${ratio(funding.bytes, plain.bytes)}, wall ${ratio(funding.seconds, plain.seconds)}`,
  );
  console.log(
    JSON.stringify({
      payments,
      runs: Object.fromEntries(
        Object.entries(runs).map(([k, r]) => [
          k,
          {
            calls: r.calls,
            http: r.httpRequests,
            bytes: r.bytes,
            ms: Math.round(r.seconds * 1000),
            methods: r.methods,
          },
        ]),
      ),
    }),
  );
}
