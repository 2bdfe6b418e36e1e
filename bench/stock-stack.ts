/**
 * The stock x402 stack of `bench:paid`, as the x402 documentation builds it, and the merchant's own routes every
 * stack serves behind its payment layer. Shared by the stacks of one process (`bench/paid-stack.ts`, the
 * in-process modes) and by the stock merchant and facilitator in processes of their own (`bench/paid-stock.ts`,
 * the default mode, beside `serve` and `facilitator` as a user starts them).
 *
 * - The facilitator: `@x402/core`'s `x402Facilitator` with `registerExactEvmScheme` (and, when asked,
 *   `@x402/evm`'s upto and batch-settlement facilitator schemes) and a viem wallet client as its signer (with
 *   viem's nonce manager, without which concurrent settlements collide), served by a small Hono app with the
 *   `/verify`, `/settle` and `/supported` routes of the documentation's example facilitator.
 * - The merchant: `@x402/hono`'s `paymentMiddleware` on an `x402ResourceServer` with `@x402/evm`'s exact
 *   scheme (and the batch-settlement and upto server schemes when asked), in front of the project's own
 *   handlers: calc's, and for upto the inference API's metered chat on its offline engine, each behind its
 *   input validation, as the project's merchant runs them.
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as BatchFacilitator } from "@x402/evm/batch-settlement/facilitator";
import type {
  BatchSettlementEvmScheme as BatchServer,
  ChannelStorage,
} from "@x402/evm/batch-settlement/server";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme as ExactEvmServer } from "@x402/evm/exact/server";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import { UptoEvmScheme as UptoEvmServer } from "@x402/evm/upto/server";
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from "@x402/hono";
import { Hono, type MiddlewareHandler } from "hono";
import { type Abi, createWalletClient, http, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { devnetChain } from "../src/chain/devnet/index.ts";
import type { AnyEndpoint, MerchantServices } from "../src/merchant-kit/endpoint.ts";
import { type MerchantEnv, validateInput } from "../src/merchant-kit/input.ts";
import { chatEndpoints } from "../src/merchants/inference/catalogue.ts";
import { chatPath } from "../src/merchants/inference/chat.ts";
import { TIERS } from "../src/merchants/inference/tiers.ts";
import { calc } from "../src/merchants/utility/calc.ts";
import { NETWORK } from "../test/helpers/x402.ts";

/** The metered route `bench:paid` pays with upto: the inference API's tier 3 (`/v1/chat/completions/_t/t3/upto`). */
export const UPTO_TIER = TIERS[2] as (typeof TIERS)[number];
export const UPTO_PATH = chatPath(UPTO_TIER, true);

const NO_PAYER = "0x0000000000000000000000000000000000000000";

/** `endpoint`'s handler behind its input validation, as the merchant's own code: the same in every stack. */
function handlerRoute(
  app: Hono<MerchantEnv>,
  endpoint: AnyEndpoint,
  services: MerchantServices,
  meter?: (c: Parameters<MiddlewareHandler<MerchantEnv>>[0], atomic: bigint) => void,
): Hono<MerchantEnv> {
  const handler: MiddlewareHandler<MerchantEnv> = async (c) =>
    c.json(
      await endpoint.handler(c.var.input, {
        payer: NO_PAYER,
        signal: c.req.raw.signal,
        services,
        request: c.req.raw,
        ...(meter && { meter: (atomic: bigint) => meter(c, atomic) }),
      }),
    );
  return app.on(
    endpoint.method,
    endpoint.path,
    ...([...validateInput(endpoint, services), handler] as [MiddlewareHandler<MerchantEnv>]),
  );
}

/** Calc's handler behind its input validation, as the merchant's own code: the same in every app here. */
export function calcRoute(app: Hono<MerchantEnv>, services: MerchantServices): Hono<MerchantEnv> {
  return handlerRoute(app, calc, services);
}

export interface StockFacilitatorOptions {
  rpc: string;
  /** Its key: ETH for gas, and the channels' receiverAuthorizer. */
  facilitatorKey: `0x${string}`;
  /** How often viem polls for a settlement's receipt. */
  pollMs: number;
  /** With `@x402/evm`'s batch-settlement facilitator scheme. */
  channels: boolean;
  /** With `@x402/evm`'s upto facilitator scheme. */
  upto?: boolean;
}

/** The SDK's facilitator on the devnet behind the documentation's example routes (on Hono instead of express). */
export function stockFacilitatorApp(options: StockFacilitatorOptions): Hono {
  const account = privateKeyToAccount(options.facilitatorKey, { nonceManager });
  const wallet = createWalletClient({
    account,
    chain: devnetChain(options.rpc),
    transport: http(options.rpc),
    pollingInterval: options.pollMs,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract({ ...args, abi: args.abi as Abi, args: args.args ?? [] }),
    verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0]),
    writeContract: (args) =>
      wallet.writeContract({ ...args, abi: args.abi as Abi } as Parameters<typeof wallet.writeContract>[0]),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: NETWORK });
  if (options.upto) facilitator.register(NETWORK, new UptoFacilitator(signer));
  // The SDK's batch-settlement facilitator, signing claims and refunds as the channels' receiverAuthorizer.
  if (options.channels)
    facilitator.register(NETWORK, new BatchFacilitator(signer, privateKeyToAccount(options.facilitatorKey)));
  const routes = new Hono();
  const body = async (c: { req: { json(): Promise<unknown> } }) =>
    (await c.req.json()) as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
  routes.post("/verify", async (c) => {
    const { paymentPayload, paymentRequirements } = await body(c);
    return c.json(await facilitator.verify(paymentPayload, paymentRequirements));
  });
  routes.post("/settle", async (c) => {
    const { paymentPayload, paymentRequirements } = await body(c);
    return c.json(await facilitator.settle(paymentPayload, paymentRequirements));
  });
  routes.get("/supported", (c) => c.json(facilitator.getSupported()));
  return routes;
}

export interface StockShopOptions {
  payTo: `0x${string}`;
  /** The SDK's batch-settlement server for `payTo`: calc takes channels beside exact. */
  channelServer?: BatchServer;
  /** The metered chat route (`UPTO_PATH`) paid with upto to this wallet, on the offline engine. */
  uptoPayTo?: `0x${string}`;
}

/** The stock merchant: `@x402/hono`'s middleware on the SDK's resource server, in front of the project's handlers. */
export function stockShopApp(
  services: MerchantServices,
  facilitatorClient: FacilitatorClient,
  options: StockShopOptions,
): Hono<MerchantEnv> {
  const server = new x402ResourceServer(facilitatorClient).register(NETWORK, new ExactEvmServer());
  if (options.channelServer) server.register(NETWORK, options.channelServer);
  if (options.uptoPayTo) server.register(NETWORK, new UptoEvmServer());
  const exact = { scheme: "exact", price: "$0.001", network: NETWORK, payTo: options.payTo };
  const chat = options.uptoPayTo
    ? (chatEndpoints().find((e) => e.path === UPTO_PATH) as AnyEndpoint)
    : undefined;
  const app = new Hono<MerchantEnv>();
  app.use(
    paymentMiddleware(
      {
        [`GET ${calc.path}`]: {
          accepts: options.channelServer ? [exact, { ...exact, scheme: "batch-settlement" }] : exact,
          description: calc.description,
          mimeType: "application/json",
        },
        ...(chat && {
          [`POST ${UPTO_PATH}`]: {
            accepts: {
              scheme: "upto",
              price: `$${UPTO_TIER.uptoPrice}`,
              network: NETWORK,
              payTo: options.uptoPayTo as `0x${string}`,
            },
            description: chat.description,
            mimeType: "application/json",
          },
        }),
      },
      server,
    ),
  );
  calcRoute(app, services);
  // The handler meters what the call cost; the middleware settles that (the SDK's partial settlement).
  if (chat)
    handlerRoute(app, chat, services, (c, atomic) =>
      setSettlementOverrides(c, { amount: atomic.toString() }),
    );
  return app;
}

/** A channel as the server's storage holds it, for the bench's check after the voucher phase. */
export interface BenchChannel {
  channelId: string;
  payer: string;
  /** What the server has charged on it so far (atomic units). */
  charged: string;
  balance: string;
  totalClaimed: string;
  /** A request's reservation still held. */
  pending: boolean;
}

/** The channels `storage` holds, as the bench checks them after a voucher phase. */
export async function benchChannels(storage?: ChannelStorage): Promise<BenchChannel[]> {
  return ((await storage?.list()) ?? []).map((ch) => ({
    channelId: ch.channelId.toLowerCase(),
    payer: ch.channelConfig.payer.toLowerCase(),
    charged: ch.chargedCumulativeAmount,
    balance: ch.balance,
    totalClaimed: ch.totalClaimed,
    pending: ch.pendingRequest !== undefined,
  }));
}
