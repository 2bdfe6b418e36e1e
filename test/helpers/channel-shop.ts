/**
 * A merchant host that takes payment channels, for the kit's channel tests: test endpoints of each kind the
 * kit treats apart (a fixed price, a metered call, a writing call, a streamed answer), each offering
 * `batch-settlement` beside its other scheme, whose handlers can be held at a gate, refuse after their work,
 * and count how many run at once; served by the kit and paid through `facilitator` on a devnet. And what a
 * test reads to check the merchant's side: the channel's row, the escrow's view of it, the signed payloads
 * a buyer would send.
 */
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import {
  type BatchSettlementEvmScheme as BatchClient,
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from "@x402/evm/batch-settlement/client";
import type { Channel } from "@x402/evm/batch-settlement/server";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { X402_BATCH_SETTLEMENT_ADDRESS } from "../../src/chain/base.ts";
import { batchSettlementAbi } from "../../src/chain/batch-settlement.ts";
import { type Devnet, type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { BadInputError, UpstreamError } from "../../src/common/errors.ts";
import type { Listening } from "../../src/common/listen.ts";
import { ChannelStore } from "../../src/merchant-kit/channels/storage.ts";
import { type AnyEndpoint, defineEndpoint } from "../../src/merchant-kit/endpoint.ts";
import { Streamed } from "../../src/merchant-kit/payments/streamed.ts";
import { REFUND_PATH } from "../../src/merchant-kit/routes.ts";
import type { Gates } from "./gates.ts";
import { startMerchant, testMerchant } from "./merchant.ts";
import { NETWORK, newMerchant } from "./x402.ts";

/** The fixed price of `/api/counted` and `/api/note`: $0.001. */
export const PRICE = 1_000n;
/** The most a metered call costs: $0.01. */
export const MAX = 10_000n;
/** What a streamed part costs. */
export const PART = 100n;

/** How many handlers run, in all and at once. */
export interface Tally {
  runs: number;
  running: number;
  mostAtOnce: number;
}

/** A handler's work, counted; it yields a few turns so that two of them at once would overlap. */
async function work<T>(tally: Tally, fn: () => Promise<T>): Promise<T> {
  tally.runs++;
  tally.running++;
  tally.mostAtOnce = Math.max(tally.mostAtOnce, tally.running);
  try {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    return await fn();
  } finally {
    tally.running--;
  }
}

/** A table that refuses at commit a text written twice in one transaction (a deferred unique key). */
const NOTES = {
  module: "test_channel_notes",
  migrations: [
    {
      version: 1,
      name: "notes",
      up: `CREATE TABLE test_channel_notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payer text NOT NULL,
        text text NOT NULL, CONSTRAINT test_channel_notes_text UNIQUE (text) DEFERRABLE INITIALLY DEFERRED)`,
    },
  ],
};

export function channelEndpoints(gates: Gates, tally: Tally): AnyEndpoint[] {
  const counted = defineEndpoint({
    method: "GET",
    path: "/api/counted",
    price: "0.001",
    scheme: ["exact", "batch-settlement"],
    description: "Counts its calls; may be held at a gate, or refuse once it has run.",
    input: z.object({ hold: z.string().optional(), refuse: z.stringbool().default(false) }),
    output: z.object({ ok: z.boolean() }),
    example: { input: {}, output: { ok: true } },
    handler: ({ hold, refuse }) =>
      work(tally, async () => {
        if (hold) await gates.pass(hold);
        if (refuse) throw new BadInputError("refused after its work, as asked", "refused");
        return { ok: true };
      }),
  });
  const metered = defineEndpoint({
    method: "POST",
    path: "/v1/metered",
    price: "0.01",
    scheme: ["upto", "batch-settlement"],
    description:
      "Charges what the caller says the call cost, at most $0.01; `fail`: its upstream fails after the work.",
    input: z.object({
      cost: z.number().int().min(0),
      hold: z.string().optional(),
      fail: z.boolean().default(false),
    }),
    output: z.object({ cost: z.number() }),
    example: { input: { cost: 10 }, output: { cost: 10 } },
    handler: ({ cost, hold, fail }, ctx) =>
      work(tally, async () => {
        if (hold) await gates.pass(hold);
        ctx.meter?.(BigInt(cost));
        if (fail) throw new UpstreamError("the upstream failed after the work, as asked");
        return { cost };
      }),
  });
  const note = defineEndpoint({
    method: "POST",
    path: "/api/note",
    price: "0.001",
    scheme: ["exact", "batch-settlement"],
    effects: ["writes"],
    tables: NOTES,
    description: "Stores a note; `clash` writes it twice, which its table refuses at commit.",
    input: z.object({
      text: z.string().min(1),
      refuse: z.boolean().default(false),
      clash: z.boolean().default(false),
    }),
    output: z.object({ stored: z.boolean() }),
    example: { input: { text: "hi" }, output: { stored: true } },
    handler: ({ text, refuse, clash }, ctx) =>
      work(tally, async () => {
        const insert = "INSERT INTO test_channel_notes (payer, text) VALUES ($1, $2)";
        await ctx.services.db.query(insert, [ctx.payer, text]);
        if (clash) await ctx.services.db.query(insert, [ctx.payer, text]);
        if (refuse) throw new BadInputError("refused after writing, as asked", "refused");
        return { stored: true };
      }),
  });
  const streamed = defineEndpoint({
    method: "POST",
    path: "/v1/stream",
    price: "0.01",
    scheme: ["upto", "batch-settlement"],
    description: "Streams `parts` lines, $0.0001 each; may be held before its first.",
    input: z.object({ parts: z.number().int().min(0).max(50), hold: z.string().optional() }),
    output: z.string(),
    outputMedia: ["text/plain"],
    example: { input: { parts: 1 }, output: "start\npart 0\nend 100\n" },
    streaming: "Charged $0.0001 a line delivered.",
    handler: async ({ parts, hold }) => {
      tally.runs++;
      async function* lines() {
        for (let i = 0; i < parts; i++) {
          if (hold && i === 0) await gates.pass(hold);
          yield `part ${i}\n`;
        }
      }
      return new Streamed({
        headers: { "content-type": "text/plain" },
        head: "start\n",
        parts: lines(),
        meter: (delivered) => BigInt(delivered) * PART,
        end: (ending) => `end ${ending.charged}${ending.error ? ` ${ending.error.code}` : ""}\n`,
      });
    },
  });
  return [counted, metered, note, streamed];
}

export interface ChannelShop {
  host: Listening;
  url: string;
  payTo: `0x${string}`;
  store: ChannelStore;
  close(): Promise<void>;
}

/** The test endpoints served by the kit on `db`, paid through `facilitator`, to a fresh wallet. */
export async function startChannelShop(
  devnet: Devnet,
  db: Database,
  facilitator: FacilitatorClient,
  endpoints: readonly AnyEndpoint[],
  payTo: `0x${string}` = newMerchant(),
): Promise<ChannelShop> {
  const host = await startMerchant((u) => testMerchant(payTo, u, endpoints), db, facilitator, {
    rpcUrl: devnet.rpc,
  });
  return { host, url: host.url, payTo, store: new ChannelStore(db, payTo), close: () => host.close() };
}

/** What the host's refund route asks (the channel terms every route of the host shares). */
export async function channelTerms(
  url: string,
): Promise<{ required: PaymentRequired; accept: PaymentRequirements }> {
  const answer = await fetch(`${url}${REFUND_PATH}`);
  if (answer.status !== 402) throw new Error(`${REFUND_PATH} answered ${answer.status}`);
  const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
  return { required, accept: required.accepts[0] as PaymentRequirements };
}

/** The 402 a call answers unpaid. */
export async function requiredBy(url: string, init?: RequestInit): Promise<PaymentRequired> {
  const answer = await fetch(url, init);
  if (answer.status !== 402) throw new Error(`${url} answered ${answer.status}, not 402`);
  return decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
}

/** The channel `client` pays `shop` through: its id and the merchant's row of it. */
export async function channelOf(
  shop: ChannelShop,
  client: BatchClient,
): Promise<{ id: `0x${string}`; row: Channel | undefined }> {
  const { accept } = await channelTerms(shop.url);
  const id = computeChannelId(client.buildChannelConfig(accept), NETWORK);
  return { id, row: await shop.store.get(id) };
}

/** The escrow's balance and total claimed of a channel, on chain. */
export async function escrowOf(
  devnet: Devnet,
  id: `0x${string}`,
): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const reader = createPublicClient({ chain: devnetChain(devnet.rpc), transport: http(devnet.rpc) });
  const [balance, totalClaimed] = (await reader.readContract({
    address: X402_BATCH_SETTLEMENT_ADDRESS,
    abi: batchSettlementAbi,
    functionName: "channels",
    args: [id],
  })) as readonly [bigint, bigint];
  return { balance, totalClaimed };
}

/** A voucher payload for the call `required` asks about, signed by `buyer` for the cumulative `cap`. */
export async function voucherHeader(
  required: PaymentRequired,
  buyer: DevnetAccount,
  client: BatchClient,
  cap: bigint,
): Promise<string> {
  const accept = channelAccept(required);
  const config = client.buildChannelConfig(accept);
  const voucher = await signVoucher(
    privateKeyToAccount(buyer.privateKey),
    computeChannelId(config, NETWORK),
    cap.toString(),
    NETWORK,
  );
  return headerOf(required, accept, { type: "voucher", channelConfig: config, voucher });
}

/** A deposit of `amount` with its voucher for `cap`, for the call `required` asks about. */
export async function depositHeader(
  required: PaymentRequired,
  buyer: DevnetAccount,
  client: BatchClient,
  amount: bigint,
  cap: bigint,
): Promise<string> {
  const accept = channelAccept(required);
  const signed = await createBatchSettlementEIP3009DepositPayload(
    privateKeyToAccount(buyer.privateKey),
    2,
    accept,
    client.buildChannelConfig(accept),
    amount.toString(),
    cap.toString(),
  );
  return headerOf(required, accept, signed.payload);
}

function channelAccept(required: PaymentRequired): PaymentRequirements {
  const accept = required.accepts.find((a) => a.scheme === "batch-settlement");
  if (!accept) throw new Error("the 402 offers no payment channel");
  return accept;
}

function headerOf(required: PaymentRequired, accepted: PaymentRequirements, payload: unknown): string {
  const payment: PaymentPayload = {
    x402Version: 2,
    accepted,
    payload: payload as PaymentPayload["payload"],
    resource: required.resource,
    ...(required.extensions && { extensions: required.extensions }),
  };
  return encodePaymentSignatureHeader(payment);
}

/** The error a refusal's `PAYMENT-REQUIRED` header names. */
export function refusalOf(answer: Response): string | undefined {
  const header = answer.headers.get("payment-required");
  return header ? decodePaymentRequiredHeader(header).error : undefined;
}
