/**
 * A paid merchant host on a devnet, for endpoint tests that go through the real x402 flow: anvil with
 * funded buyers and a miner, the project's facilitator (in process, its ledger on `LEDGER_KIND`), the merchant's
 * endpoints served by the platform with its state on the database kind asked for, and buyers paying with
 * `@x402/fetch`.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { type Devnet, type DevnetAccount, startDevnet } from "../../src/chain/devnet/index.ts";
import type { Database, DatabaseKind } from "../../src/common/db/index.ts";
import { inProcessClient } from "../../src/facilitator/index.ts";
import type { AnyEndpoint, Merchant } from "../../src/merchant-kit/endpoint.ts";
import { startMiner } from "./chain.ts";
import { LEDGER_KIND, openTestDatabase } from "./db.ts";
import { devnetFacilitator } from "./facilitator.ts";
import { startMerchant } from "./merchant.ts";
import { NETWORK, newMerchant, usdcReader } from "./x402.ts";

export interface PaidShop {
  devnet: Devnet;
  /** The merchant host's base URL. */
  url: string;
  payTo: `0x${string}`;
  /** The merchant's state database. */
  db: Database;
  buyer(index?: number): DevnetAccount;
  /** `fetch` that pays 402 answers with buyer `index`'s key. */
  buyerFetch(index?: number): typeof fetch;
  /** USDC balance, atomic units. */
  balanceOf(address: string): Promise<bigint>;
  /** Transactions waiting in the devnet's pool (0 = no settlement is on its way). */
  pending(): Promise<number>;
  close(): Promise<void>;
}

export interface PaidShopOptions {
  buyers?: number;
  /** Where the merchant's state lives; default PGlite. */
  db?: DatabaseKind;
  /** Set on the merchant: a receipt key and a builder code make its 402s as `serve` makes them. */
  merchant?: Pick<Merchant, "receiptSigner" | "builderCode">;
}

export async function startPaidShop(
  endpoints: readonly AnyEndpoint[],
  options: PaidShopOptions = {},
): Promise<PaidShop> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn();
  };
  try {
    const devnet = await startDevnet({ port: 0, buyers: options.buyers ?? 1, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet);
    closers.push(() => miner.stop());
    const ledger = await openTestDatabase(LEDGER_KIND);
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const state = await openTestDatabase(options.db ?? "pglite");
    closers.push(state.close);
    const payTo = newMerchant();
    const shop = await startMerchant(
      (url) => ({
        name: "test",
        title: "Test merchant",
        payTo,
        publicUrl: url,
        endpoints,
        ...options.merchant,
      }),
      state.db,
      inProcessClient(facilitator),
      { rpcUrl: devnet.rpc },
    );
    closers.push(() => shop.close());
    const usdc = usdcReader(devnet.rpc);
    const buyer = (index = 0) => {
      const account = devnet.buyers[index];
      if (!account) throw new Error(`the devnet has no buyer ${index}`);
      return account;
    };
    return {
      devnet,
      url: shop.url,
      payTo,
      db: state.db,
      buyer,
      buyerFetch: (index = 0) =>
        wrapFetchWithPayment(
          fetch,
          new x402Client().register(
            NETWORK,
            new ExactEvmClient(privateKeyToAccount(buyer(index).privateKey)),
          ),
        ),
      balanceOf: (address) => usdc.balanceOf(address as `0x${string}`),
      pending: () => miner.pending(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
