/**
 * Issue 86's new user on Solana, as docs/cli.md ("Selling on Solana") tells it, every program a process of its own:
 * `devnet --chain solana`, `facilitator` with the devnet's fee payer, `serve --only utility` paid on Solana, the
 * SDK's SVM client paying `GET /api/calc` once (the price moves from buyer to merchant, the fee payer pays the fee,
 * the same payment again is refused and moves nothing), then `index --rpc URL --chain solana` and
 * `report OWNER --chain solana` counting exactly that payment from that buyer.
 */
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SOLANA_NETWORK, SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";
import { PRICES } from "../../src/merchants/utility/prices.ts";
import { isolatedDatabaseOptions, LEDGER_KIND } from "../helpers/db.ts";
import { runCli, spawnCli } from "../helpers/process.ts";

/** `/api/calc`'s price, in USDC's 6 decimals. */
const PRICE = BigInt(Math.round(Number(PRICES["/api/calc"]) * 1e6));

interface Account {
  address: string;
  secretKey: string;
}
interface DevnetLine {
  rpc: string;
  facilitator: Account;
  network: string;
  usdc: string;
  buyers: Account[];
}

let devnet: DevnetLine;
let facilitatorUrl: string;
let host: string;
/** The buyer who pays, and the merchant's owner (a devnet buyer: its USDC account exists). */
let buyer: Account;
let owner: Account;
const stops: (() => Promise<void>)[] = [];
const cleanups: (() => Promise<void>)[] = [];

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const answer = await fetch(devnet.rpc, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await answer.json()) as { result: T }).result;
}
const usdcOf = async (who: string) => {
  const owned = await rpc<{
    value: { account: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } }[];
  }>("getTokenAccountsByOwner", [who, { mint: SOLANA_USDC_MINT }, { encoding: "jsonParsed" }]);
  return owned.value.reduce((sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount), 0n);
};
const solOf = async (who: string) => BigInt((await rpc<{ value: number }>("getBalance", [who])).value);
const balances = async () => ({
  buyer: await usdcOf(buyer.address),
  owner: await usdcOf(owner.address),
  buyerSol: await solOf(buyer.address),
  feePayerSol: await solOf(devnet.facilitator.address),
});

/**
 * A command of docs/cli.md's in a process of its own, stopped after the file's tests (test/helpers/process.ts's
 * `startCli` stops its own at the end of a test, and a hook is none); its first line, its ready line.
 */
function start(args: string[], env: Record<string, string> = {}): Promise<string> {
  const run = spawnCli(args, env);
  stops.push(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill("SIGTERM");
    await run.exited;
  });
  return run.line.catch((error: Error) => {
    throw new Error(`${args[0]} ${error.message}`);
  });
}
/**
 * A data directory of its own, and a ledger where the tests keep one (a server's schema in CI, tens of
 * milliseconds; else the directory's PGlite): the facilitator's and the host's databases are not what this tests.
 */
async function state(): Promise<{ dataDir: string; env: { DATABASE_URL: string } }> {
  const options = await isolatedDatabaseOptions(LEDGER_KIND);
  cleanups.push(options.cleanup);
  return { dataDir: options.dataDir, env: { DATABASE_URL: options.databaseUrl ?? "" } };
}

beforeAll(async () => {
  // The three terminals: devnet, the facilitator with its fee payer, the utility host paid on Solana.
  devnet = JSON.parse(await start(["devnet", "--chain", "solana", "--port", "0", "--buyers", "2"]));
  [buyer, owner] = devnet.buyers as [Account, Account];
  const [facilitatorState, serveState] = await Promise.all([state(), state()]);
  const facilitator = await start(["facilitator", "--port", "0", "--data", facilitatorState.dataDir], {
    ...facilitatorState.env,
    X402M_FACILITATOR_SOLANA_KEY: devnet.facilitator.secretKey,
    X402M_SOLANA_RPC_URL: devnet.rpc,
  });
  facilitatorUrl = (JSON.parse(facilitator) as { facilitator: string }).facilitator;
  const serve = await start(["serve", "--only", "utility", "--data", serveState.dataDir], {
    ...serveState.env,
    X402M_UTILITY_PAY_TO: "0x0000000000000000000000000000000000000001",
    X402M_UTILITY_SOLANA_PAY_TO: owner.address,
    X402M_SOLANA_RPC_URL: devnet.rpc,
    X402M_FACILITATOR_URL: facilitatorUrl,
    X402M_UTILITY_PORT: "0",
    PORT: "0",
  });
  host = (JSON.parse(serve) as { utility: string }).utility;
}, 120_000);

afterAll(async () => {
  // The host before the facilitator before the chain, as a user would stop them.
  for (const stop of stops.reverse()) await stop();
  for (const cleanup of cleanups) await cleanup();
});

describe("a new user selling on Solana: devnet, facilitator, serve, then index and report, as processes", () => {
  it("is paid once by the SDK's SVM client, refuses the same payment again, and reports exactly it", async () => {
    expect(devnet.network).toBe(SOLANA_NETWORK);
    const before = await balances();

    // docs/cli.md's buyer, as written: the SDK's SVM client from the devnet's base58 key.
    const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(buyer.secretKey));
    const client = new x402Client().register(
      SOLANA_NETWORK,
      new ExactSvmScheme(signer, { rpcUrl: devnet.rpc }),
    );
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const header = new Request(input, init).headers.get("payment-signature");
      if (header) sent.push(header);
      return fetch(input, init);
    };
    const url = `${host}/api/calc?expr=2%2B2`;
    const answer = await wrapFetchWithPayment(recording, client)(url);
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await answer.json()).toEqual({ expression: "2+2", result: "4", type: "integer" });
    const receipt = decodePaymentResponseHeader(answer.headers.get("payment-response") as string);
    expect(receipt).toMatchObject({ success: true, network: SOLANA_NETWORK, payer: buyer.address });
    expect(sent).toHaveLength(1);

    // The price moved from buyer to owner; the fee payer paid the transaction's fee and nothing else.
    const landed = await rpc<{ meta: { fee: number; err: unknown } }>("getTransaction", [
      receipt.transaction,
      { encoding: "json", maxSupportedTransactionVersion: 0 },
    ]);
    expect(landed.meta.err).toBeNull();
    const after = await balances();
    expect(after).toEqual({
      buyer: before.buyer - PRICE,
      owner: before.owner + PRICE,
      buyerSol: before.buyerSol,
      feePayerSol: before.feePayerSol - BigInt(landed.meta.fee),
    });

    // The same PAYMENT-SIGNATURE again: refused, and nothing moves.
    const again = await fetch(url, { headers: { "payment-signature": sent[0] as string } });
    expect(again.status).toBe(402);
    expect(await balances()).toEqual(after);

    // docs/cli.md's next commands: index the local Solana, then the owner's report on Solana.
    // The analytics store is DuckDB in the data directory, whatever DATABASE_URL says.
    const { dataDir: analyticsDir } = await state();
    const indexed = await runCli(["index", "--rpc", devnet.rpc, "--chain", "solana", "--data", analyticsDir]);
    expect(indexed.code, indexed.stderr).toBe(0);
    expect(JSON.parse(indexed.stdout)).toMatchObject({ chain: "solana", payments: 1 });
    const report = await runCli(["report", owner.address, "--chain", "solana", "--data", analyticsDir]);
    expect(report.code, report.stderr).toBe(0);
    // One payment of the price, from one buyer wallet (the receipt named it), on Solana. `usd` is in cents, so
    // a tenth of a cent shows in `paid`, at USDC's precision.
    expect(JSON.parse(report.stdout)).toMatchObject({
      chain: "solana",
      address: owner.address,
      tx: 1,
      real_tx: 1,
      buyers: 1,
      real_buyers: 1,
      top_buyer_share: 1,
      paid: { median: Number(PRICE) / 1e6 },
      schemes: { exact: { tx: 1 } },
    });
  }, 120_000);
});
