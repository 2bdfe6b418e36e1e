/**
 * One batch-settlement deposit sent 20 times at once to a project merchant pays for one request (issue 68,
 * item 3): the utility API's `GET /api/store`, paid through the project's facilitator (in process, as
 * `serve` and the demo run them) on a devnet. A buyer signs one deposit opening its channel with the SDK's
 * client and sends that same payment 20 times at once. Exactly one call is served (200, charged the price);
 * the other 19 are refused with a 402 naming why (the channel is busy with the first, or its voucher is
 * spent), and the facilitator mines one deposit: its nonce moves by one, the buyer's USDC by the deposit.
 */
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import { inProcessClient, reasons } from "../../src/facilitator/index.ts";
import { ChannelStore } from "../../src/merchant-kit/channels/storage.ts";
import { utilityMerchant } from "../../src/merchants/utility/catalogue.ts";
import { useDevnet } from "../helpers/chain.ts";
import {
  type ChannelShop,
  channelOf,
  depositHeader,
  escrowOf,
  refusalOf,
  requiredBy,
} from "../helpers/channel-shop.ts";
import { openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import { startMerchant } from "../helpers/merchant.ts";
import { channelClient } from "../helpers/stock-facilitator.ts";
import { newMerchant, usdcReader } from "../helpers/x402.ts";

/** `/api/store`'s price: $0.001. */
const PRICE = 1_000n;
const DEPOSIT = 100_000n;
const COPIES = 20;
/**
 * Why a copy is refused, whichever moment it arrives at: the first copy holds the channel (busy), its deposit
 * is being relayed or was (the facilitator's ledger: the authorization is used), or its voucher was charged
 * (the channel's total moved past it).
 */
const REFUSALS = [
  "invalid_batch_settlement_evm_channel_busy",
  reasons.NONCE_ALREADY_USED,
  "invalid_batch_settlement_evm_cumulative_amount_mismatch",
];

const chain = useDevnet({ buyers: 1 });
let usdc: ReturnType<typeof usdcReader>;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("one deposit sent 20 times at once to the utility API", () => {
  let shop: ChannelShop;

  beforeAll(async () => {
    const payTo = newMerchant();
    const ledger = await openTestDatabase("pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(chain.devnet, ledger.db);
    closers.push(() => facilitator.close());
    facilitator.gate.allow([payTo]);
    const state = await openTestDatabase("pglite");
    closers.push(state.close);
    const host = await startMerchant(
      (url) => utilityMerchant({ payTo, publicUrl: url }),
      state.db,
      inProcessClient(facilitator),
      { rpcUrl: chain.devnet.rpc },
    );
    closers.push(() => host.close());
    shop = {
      host,
      url: host.url,
      payTo,
      store: new ChannelStore(state.db, payTo),
      close: () => host.close(),
    };
  });

  it("serves one call, mines one deposit and refuses the 19 others with a reason", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const client = channelClient(chain.devnet, buyer, { salt: 68n, deposit: DEPOSIT });
    const url = `${shop.url}/api/store`;
    const header = await depositHeader(await requiredBy(url), buyer, client, DEPOSIT, PRICE);
    const before = {
      nonce: await usdc.nonceOf(chain.devnet.facilitatorAccount.address),
      wallet: await usdc.balanceOf(buyer.address),
    };

    const answers = await Promise.all(
      Array.from({ length: COPIES }, () => fetch(url, { headers: { "PAYMENT-SIGNATURE": header } })),
    );
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(COPIES - 1).fill(402)]);
    expect(await served[0]?.json()).toMatchObject({ collections: [], total_rows: 0 });
    expect(decodePaymentResponseHeader(served[0]?.headers.get("payment-response") as string)).toMatchObject({
      success: true,
      amount: DEPOSIT.toString(),
      extra: { chargedAmount: PRICE.toString() },
    });
    for (const answer of refused) {
      // x402's refusal (src/merchant-kit/refusals.ts): the code in PAYMENT-REQUIRED's `error`, a JSON body.
      expect(REFUSALS).toContain(refusalOf(answer));
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await answer.json()).toEqual({});
    }

    // One deposit on chain, from one transaction of the facilitator; one call charged to the channel.
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(before.nonce + 1);
    expect(await usdc.balanceOf(buyer.address)).toBe(before.wallet - DEPOSIT);
    const { id, row } = await channelOf(shop, client);
    expect(await escrowOf(chain.devnet, id)).toEqual({ balance: DEPOSIT, totalClaimed: 0n });
    expect(row).toMatchObject({ balance: DEPOSIT.toString(), chargedCumulativeAmount: PRICE.toString() });
    expect(row?.pendingRequest).toBeUndefined();
  });
});
