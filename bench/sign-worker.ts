/**
 * Worker of the indexer benchmark: signs a slice of settlements (about 3 ms each on one core), so the
 * benchmark's chain is built with every core.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Address, Hex } from "viem";
import type { DevnetAccount } from "../src/chain/devnet/index.ts";
import { signSettlements } from "../test/helpers/settle.ts";

interface Job {
  usdc: Address;
  sender: DevnetAccount;
  startNonce: number;
  orders: { buyer: DevnetAccount; payTo: Address; amount: string }[];
}

const job = workerData as Job;
const signed = await signSettlements(
  job.usdc,
  job.sender,
  job.startNonce,
  job.orders.map((o) => ({ ...o, amount: BigInt(o.amount) })),
);
parentPort?.postMessage(
  signed.map((s) => ({
    tx: s.tx as Hex,
    payer: s.paid.payer,
    payTo: s.paid.payTo,
    amount: String(s.paid.amount),
  })),
);
