/**
 * One side of `bench:paid`, in a process of its own so that the server side's CPU is measured apart from
 * the buyers and the chain: a merchant selling `/api/calc` at $0.001 and the facilitator it settles
 * through, built one of two ways.
 *
 * - `project`: the platform's `merchantApp` (payment ledger, replay locks, input validation) and the
 *   project's facilitator (`createFacilitator`: its ledger, submitter and chain reads), reached over HTTP
 *   on 127.0.0.1 as in production, or in process (`hop: "inprocess"`).
 * - `stock`: what the x402 documentation builds: `@x402/hono`'s `paymentMiddleware` on an
 *   `x402ResourceServer` with `@x402/evm`'s exact scheme, and a facilitator made of `@x402/core`'s
 *   `x402Facilitator` with `registerExactEvmScheme` and a viem wallet client as its signer (with viem's
 *   nonce manager, without which concurrent settlements collide), served over HTTP by a small Hono app
 *   with the `/verify`, `/settle` and `/supported` routes of the documentation's example facilitator
 *   (`bench/stock-stack.ts` builds both, for these stacks and for the default mode's stock processes).
 *
 * With `scheme: "batch-settlement"` the paid app also takes payment channels, beside exact, as a merchant
 * offering both would (a buyer with a channel pays through it):
 *
 * - `project`: the same app with calc offering channels as the utility API's catalogue does
 *   (`withChannels`), its channel state in the merchant's store (`ChannelStore`, PGlite or PostgreSQL);
 *   the project's facilitator serves batch-settlement as it is (its settling key is the receiverAuthorizer).
 * - `stock`: the x402 documentation's batch-settlement server (examples/typescript/servers/batch-settlement
 *   in the x402 repository): `@x402/evm/batch-settlement/server`'s `BatchSettlementEvmScheme` for the
 *   merchant's `payTo` with its default, in-memory channel storage and a withdrawal delay of a day (the
 *   example's default, and the project's), the facilitator as receiverAuthorizer; registered on the same
 *   resource server as the exact scheme, the route accepting both. Its facilitator adds `@x402/evm`'s
 *   batch-settlement facilitator scheme, with its own key as the receiverAuthorizer.
 *
 * Neither runs its claim schedule (the project's `ChannelSchedule`, the SDK's `BatchSettlementChannelManager`):
 * claims are chain writes the paid request does not make, on an interval of an hour (the project's default)
 * or a minute (the example's).
 *
 * Both serve three apps on 127.0.0.1: `paid` (settled on chain), `verify` (the real verify; settle
 * answered at once, nothing on chain; exact only) and `plain` (the same handler with no payment layer). The
 * process prints one JSON line with their URLs and runs until its stdin closes.
 *
 * Argument: one JSON object (`StackOptions`).
 */
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import {
  BatchSettlementEvmScheme as BatchServer,
  type ChannelStorage,
} from "@x402/evm/batch-settlement/server";
import { Hono } from "hono";
import { pad } from "viem";
import { devnetChain } from "../src/chain/devnet/index.ts";
import type { Database } from "../src/common/db/index.ts";
import { type Listening, listen, listenWithUrl } from "../src/common/listen.ts";
import { addKey } from "../src/facilitator/access/keys.ts";
import { createFacilitator, inProcessClient } from "../src/facilitator/index.ts";
import { merchantApp } from "../src/merchant-kit/app.ts";
import { ChannelStore } from "../src/merchant-kit/channels/storage.ts";
import { type MerchantServices, withChannels } from "../src/merchant-kit/endpoint.ts";
import type { MerchantEnv } from "../src/merchant-kit/input.ts";
import { calc } from "../src/merchants/utility/calc.ts";
import { countingDatabase, type DatabaseCounts, openTestDatabase } from "../test/helpers/db.ts";
import { testConfig } from "../test/helpers/merchant.ts";
import { benchChannels, calcRoute, stockFacilitatorApp, stockShopApp } from "./stock-stack.ts";

export interface StackOptions {
  stack: "project" | "stock";
  rpc: string;
  /** The facilitator's key: ETH for gas. Each stack has its own, so their nonces never meet. */
  facilitatorKey: `0x${string}`;
  payTo: `0x${string}`;
  verifyPayTo: `0x${string}`;
  /** How often a settlement's receipt is polled for, both stacks alike. */
  pollMs: number;
  /** The project's merchant state and facilitator ledger. */
  db: "pglite" | "postgres";
  /** The project's merchant-to-facilitator hop; the stock stack always goes over HTTP. */
  hop: "http" | "inprocess";
  /** `batch-settlement`: the paid app takes payment channels beside exact (and has no verify-only app). */
  scheme: "exact" | "batch-settlement";
  /** The project's facilitator settles in groups (issue 66: `groupSettlements`). */
  groupSettlements: boolean;
}

export interface StackUrls {
  paid: string;
  verify: string;
  plain: string;
  /** `{ commits, statements }` the stack's databases have run so far (on the plain app). */
  commits: string;
  /** The paid app's channels as its channel storage holds them (`BenchChannel[]`; batch-settlement only). */
  channels?: string;
}

export type { BenchChannel } from "./stock-stack.ts";

const COMMITS_PATH = "/bench/commits";
const CHANNELS_PATH = "/bench/channels";

const options = JSON.parse(process.argv[2] ?? "{}") as StackOptions;
const channels = options.scheme === "batch-settlement";
const closers: (() => Promise<unknown>)[] = [];
// The SDK logs every settlement's extension outcome to stdout, where only the URLs belong.
console.log = () => undefined;

/** The real verify; settle answers success at once and moves nothing. */
function verifyOnly(client: FacilitatorClient): FacilitatorClient {
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: async (payload, requirements) => ({
      success: true,
      transaction: pad("0x00"),
      network: requirements.network,
      payer: (payload.payload as { authorization?: { from?: string } }).authorization?.from,
    }),
    getSupported: () => client.getSupported(),
  };
}

async function served(fetch: (request: Request) => Response | Promise<Response>): Promise<Listening> {
  const server = await listen(fetch, "127.0.0.1", 0);
  closers.push(() => server.close());
  return server;
}

/** What this process's databases commit and run: the ledgers' share of a request. */
const committed: DatabaseCounts = { commits: 0, statements: [] };
const counted = (db: Database) => countingDatabase(db, committed).db;

/** The merchant's state (calc keeps none; the platform's ledger and replay locks do). */
async function merchantServices(): Promise<MerchantServices> {
  const state = await openTestDatabase(options.db);
  closers.push(state.close);
  return { db: counted(state.db), config: testConfig() };
}

/**
 * The plain app, which also tells the bench what the ledgers have committed so far and, with channels, what
 * the paid app's channel storage holds.
 */
async function plainUrls(
  services: MerchantServices,
  storage?: ChannelStorage,
): Promise<Pick<StackUrls, "plain" | "commits" | "channels">> {
  const app = calcRoute(new Hono<MerchantEnv>(), services)
    .get(COMMITS_PATH, (c) => c.json({ commits: committed.commits, statements: committed.statements.length }))
    .get(CHANNELS_PATH, async (c) => c.json(await benchChannels(storage)));
  const { url } = await served(app.fetch);
  return {
    plain: url,
    commits: `${url}${COMMITS_PATH}`,
    ...(storage && { channels: `${url}${CHANNELS_PATH}` }),
  };
}

/** An API key for the merchant `payTo` with room for the whole run, as its Authorization header. */
async function channelKey(db: Database, payTo: `0x${string}`): Promise<Record<string, string>> {
  const { key } = await addKey(db, {
    name: "bench",
    payees: [payTo.toLowerCase()],
    gasBudgetWei: 10n ** 20n,
    ratePerMinute: 1_000_000,
  });
  return { Authorization: `Bearer ${key}` };
}

async function project(): Promise<StackUrls> {
  const ledger = await openTestDatabase(options.db);
  closers.push(ledger.close);
  const facilitator = await createFacilitator({
    db: counted(ledger.db),
    rpc: options.rpc,
    chain: devnetChain(options.rpc),
    privateKey: options.facilitatorKey,
    pollingIntervalMs: options.pollMs,
    resolveIntervalMs: 0,
    groupSettlements: options.groupSettlements,
  });
  closers.push(() => facilitator.close());
  // The merchants of its own process, as the composition root allows them (src/services/start.ts).
  facilitator.gate.allow([options.payTo]);
  // Over HTTP, channels need a key naming the merchant: the facilitator relays deposits and signs claims as
  // the channels' receiverAuthorizer only for such a caller (docs/facilitator.md).
  const auth = channels && options.hop === "http" ? await channelKey(ledger.db, options.payTo) : undefined;
  const client =
    options.hop === "http"
      ? new HTTPFacilitatorClient({
          url: (await served(facilitator.app.fetch)).url,
          ...(auth && { createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }) }),
        })
      : inProcessClient(facilitator);
  const services = await merchantServices();
  const config = services.config;
  const shop = async (payTo: `0x${string}`, facilitatorClient: FacilitatorClient) => {
    const server = await listenWithUrl(
      async (publicUrl) =>
        (
          await merchantApp(
            {
              name: "bench",
              title: "Bench merchant",
              payTo,
              publicUrl,
              // As the utility API's catalogue offers calc (src/merchants/utility/catalogue.ts).
              endpoints: channels ? withChannels([calc]) : [calc],
            },
            { services, facilitator: facilitatorClient, payments: config.payments },
          )
        ).fetch,
      "127.0.0.1",
      0,
    );
    closers.push(() => server.close());
    return server.url;
  };
  return {
    paid: await shop(options.payTo, client),
    verify: channels ? "" : await shop(options.verifyPayTo, verifyOnly(client)),
    ...(await plainUrls(services, channels ? new ChannelStore(services.db, options.payTo) : undefined)),
  };
}

async function stock(): Promise<StackUrls> {
  const routes = stockFacilitatorApp({
    rpc: options.rpc,
    facilitatorKey: options.facilitatorKey,
    pollMs: options.pollMs,
    channels,
  });
  const client = new HTTPFacilitatorClient({ url: (await served(routes.fetch)).url });

  const services = await merchantServices();
  // The documentation's batch-settlement server: the SDK's scheme with its in-memory channel storage.
  const channelScheme = channels ? new BatchServer(options.payTo, { withdrawDelay: 86_400 }) : undefined;
  const shop = async (
    payTo: `0x${string}`,
    facilitatorClient: FacilitatorClient,
    channelServer?: BatchServer,
  ) => (await served(stockShopApp(services, facilitatorClient, { payTo, channelServer }).fetch)).url;
  return {
    paid: await shop(options.payTo, client, channelScheme),
    verify: channels ? "" : await shop(options.verifyPayTo, verifyOnly(client)),
    ...(await plainUrls(services, channelScheme?.getStorage())),
  };
}

const urls = options.stack === "project" ? await project() : await stock();
process.stdout.write(`${JSON.stringify(urls)}\n`);
process.stdin.resume();
process.stdin.on("end", async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  process.exit(0);
});
