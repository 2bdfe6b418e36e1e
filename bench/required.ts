/**
 * The merchant host's CPU per unpaid 402 and per paid exact request, in process (`npx tsx bench/required.ts
 * [--requests N --rounds N]`, issue 66 item 3): the utility host as `serve` runs it (its receipt key, its
 * builder code; PGlite), answering `GET /api/calc` through `merchantApp`'s whole chain, its facilitator a stub
 * that judges every payment valid and settles it at once, so that only the host's own work is counted (no
 * chain, no facilitator, no HTTP). The paid requests' payments are signed beforehand, as a buyer would. Prints
 * one JSON line: µs of the process's CPU (user + system) per request, per round, and the best round.
 *
 * To compare two versions of the code in one run, run this file from each tree in turn (a copy of the tree
 * before a change, with its `node_modules` linked), alternating, on the same quiet machine.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { merchantApp } from "../src/merchant-kit/app.ts";
import type { FundsReader } from "../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { utilityMerchant } from "../src/merchants/utility/catalogue.ts";
import { loadConfig } from "../src/services/config.ts";
import { openTestDatabase } from "../test/helpers/db.ts";

const NETWORK = "eip155:8453";
const PATH = `/api/calc?expr=${encodeURIComponent("2^200 + 1/7")}`;
const LOCAL = "http://127.0.0.1:8403";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

// The SDK logs every settlement's extension outcome to stdout, where only the JSON line belongs.
const print = console.log.bind(console);
console.log = () => undefined;

const requests = flag("requests", 2000);
const rounds = flag("rounds", 3);

const facilitator: FacilitatorClient = {
  getSupported: async () => ({
    kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }],
    extensions: [],
    signers: {},
  }),
  verify: async (payload) => ({
    isValid: true,
    payer: (payload.payload as { authorization: { from: string } }).authorization.from,
  }),
  settle: async (payload) => ({
    success: true,
    transaction: `0x${"ab".repeat(32)}`,
    network: NETWORK,
    payer: (payload.payload as { authorization: { from: string } }).authorization.from,
  }),
};

const config = loadConfig({ env: {} });
const { db, close } = await openTestDatabase("pglite");
const merchant = {
  ...utilityMerchant({ payTo: privateKeyToAccount(generatePrivateKey()).address, publicUrl: LOCAL }),
  receiptSigner: privateKeyToAccount(generatePrivateKey()),
  builderCode: "x402m_utility",
};
const app = await merchantApp(merchant, {
  services: { db, config },
  facilitator,
  payments: config.payments,
  // /api/calc reserves nothing: the payer's balance is never read.
  funds: (async () => {
    throw new Error("not read");
  }) as FundsReader,
});

const unpaid = async () => {
  const answer = await app.fetch(new Request(`${LOCAL}${PATH}`));
  if (answer.status !== 402) throw new Error(`unpaid: ${answer.status}`);
  await answer.arrayBuffer();
  return answer;
};

const challenge = decodePaymentRequiredHeader(
  (await unpaid()).headers.get("payment-required") as string,
) as PaymentRequired;
const buyer = new x402Client().register(
  NETWORK,
  new ExactEvmClient(privateKeyToAccount(generatePrivateKey())),
);
const sign = async () => encodePaymentSignatureHeader(await buyer.createPaymentPayload(challenge));

/** µs of this process's CPU per call of `run`, over `count` calls one after another. */
async function cpuPer(count: number, run: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await run(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

const paidOnce = async (signature: string) => {
  const answer = await app.fetch(
    new Request(`${LOCAL}${PATH}`, { headers: { "PAYMENT-SIGNATURE": signature } }),
  );
  if (answer.status !== 200 || !answer.headers.has("payment-response"))
    throw new Error(`paid: ${answer.status} ${await answer.text()}`);
  await answer.arrayBuffer();
};

// Warm: the code paths compiled, the offers signed and kept (receipts.ts), the ledger's statements prepared.
await cpuPer(200, unpaid);
for (const signature of await Promise.all(Array.from({ length: 50 }, sign))) await paidOnce(signature);

const result: { unpaidUs: number[]; paidUs: number[] } = { unpaidUs: [], paidUs: [] };
for (let round = 0; round < rounds; round++) {
  result.unpaidUs.push(Math.round(await cpuPer(requests, unpaid)));
  const signatures = await Promise.all(Array.from({ length: requests / 4 }, sign));
  result.paidUs.push(Math.round(await cpuPer(signatures.length, (i) => paidOnce(signatures[i] as string))));
}
print(
  JSON.stringify({
    requests,
    ...result,
    bestUnpaidUs: Math.min(...result.unpaidUs),
    bestPaidUs: Math.min(...result.paidUs),
  }),
);
await close();
process.exit(0);
