/**
 * The project's facilitator on a devnet, and a merchant's paid Hono routes settled through it: the
 * set-up the facilitator and end-to-end tests share.
 */
import { type FacilitatorClient, HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { SupportedResponse } from "@x402/core/types";
import { ExactEvmScheme as ExactEvmServer } from "@x402/evm/exact/server";
import { bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar";
import { paymentMiddleware } from "@x402/hono";
import { Hono } from "hono";
import { afterAll, beforeAll, onTestFinished } from "vitest";
import { type Devnet, devnetChain } from "../../src/chain/devnet/index.ts";
import type { Database, DatabaseKind } from "../../src/common/db/index.ts";
import { type Listening, listen } from "../../src/common/listen.ts";
import {
  createFacilitator,
  type Facilitator,
  type FacilitatorOptions,
  inProcessClient,
} from "../../src/facilitator/index.ts";
import { httpFacilitator } from "../../src/merchant-kit/payments/facilitators/index.ts";
import { type SharedDevnet, startMiner } from "./chain.ts";
import { DATABASE_KINDS, LEDGER_KIND, openTestDatabase } from "./db.ts";
import { NETWORK } from "./x402.ts";

/** The facilitator signing with the devnet's facilitator account; fast polling, no background checks. */
export function devnetFacilitator(
  devnet: Devnet,
  db: Database,
  options: Partial<FacilitatorOptions> = {},
): Promise<Facilitator> {
  return createFacilitator({
    db,
    rpc: devnet.rpc,
    chain: devnetChain(devnet.rpc),
    privateKey: devnet.facilitatorAccount.privateKey,
    pollingIntervalMs: 20,
    resolveIntervalMs: 0,
    ...options,
  });
}

/**
 * What a test that pays a running server starts with: a miner on `devnet` (a block as soon as a settlement
 * waits) and the project's facilitator on it over HTTP, its ledger on `LEDGER_KIND`. All of it stops with the test.
 */
export async function facilitatorOnDevnet(devnet: Devnet) {
  const miner = startMiner(devnet);
  onTestFinished(() => miner.stop());
  const ledger = await openTestDatabase(LEDGER_KIND);
  onTestFinished(ledger.close);
  const facilitator = await devnetFacilitator(devnet, ledger.db);
  onTestFinished(() => facilitator.close());
  const served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
  onTestFinished(() => served.close());
  return { miner, facilitator, url: served.url };
}

/**
 * `facilitatorOnDevnet` for the tests of a file: the project's facilitator over HTTP on the file's devnet
 * (`useDevnet`, whose miner it relies on), its ledger on `LEDGER_KIND`, started once before the tests and
 * stopped after them. Call it after `useDevnet`, so that it starts after the chain and stops before it.
 * Tests that share it must not read what another moves: each its own buyer and payee. `options` as
 * `devnetFacilitator`'s (test/cli/channels.test.ts: its channel authorizers).
 */
export function useFacilitatorOnDevnet(chain: SharedDevnet, options: Partial<FacilitatorOptions> = {}) {
  let url: string | undefined;
  const closing: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    const ledger = await openTestDatabase(LEDGER_KIND);
    closing.push(ledger.close);
    const facilitator = await devnetFacilitator(chain.devnet, ledger.db, options);
    closing.push(() => facilitator.close());
    const served = await listen(facilitator.app.fetch, "127.0.0.1", 0);
    closing.push(() => served.close());
    url = served.url;
  }, 60_000);
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
  });
  return {
    get url(): string {
      if (url === undefined) throw new Error("the file's facilitator is read before its beforeAll ran");
      return url;
    },
  };
}

/**
 * How a test's merchant reaches its facilitator: in process (`inProcessClient`), or as `serve` reaches it, over
 * HTTP through the kit's own client (`httpFacilitator`) to the facilitator served on 127.0.0.1.
 */
export type FacilitatorWire = "in process" | "over HTTP";

/**
 * The cases of a payment guarantee's tests: the merchant's state on each kind of `DATABASE_KINDS` with the
 * facilitator in process, then on `LEDGER_KIND`'s once more over HTTP. What the wire adds (requests at once on
 * its own connections, the facilitator's refusals read back from JSON) is the same on either store.
 */
export const GUARANTEE_CASES: { kind: DatabaseKind; wire: FacilitatorWire }[] = [
  ...DATABASE_KINDS.map((kind) => ({ kind, wire: "in process" as const })),
  { kind: LEDGER_KIND, wire: "over HTTP" },
];

/**
 * The file's facilitator (`get`, once its `beforeAll` made it) as a merchant reaches it over a wire. Over HTTP
 * it is served on 127.0.0.1 at the first call, once for the file, and stops after the file's tests.
 */
export function facilitatorOver(
  get: () => Facilitator,
): (wire: FacilitatorWire) => Promise<FacilitatorClient> {
  let served: Promise<Listening> | undefined;
  afterAll(async () => {
    await (await served)?.close();
  });
  return async (wire) => {
    if (wire === "in process") return inProcessClient(get());
    served ??= listen(get().app.fetch, "127.0.0.1", 0);
    return httpFacilitator((await served).url);
  };
}

export interface PaidRoute {
  /** A dollar price as the SDK takes it, e.g. "$0.001". */
  price: string;
  description: string;
  /** The JSON the route answers once paid. */
  body: (query: Record<string, string>) => unknown;
}

/**
 * A merchant's HTTP server with paid `GET` routes, built the way the x402 docs build one: the
 * `@x402/hono` middleware, the exact EVM scheme, a Bazaar discovery extension per route, and our
 * facilitator over HTTP.
 */
export function startShop(
  facilitatorUrl: string,
  payTo: `0x${string}`,
  routes: Record<`/${string}`, PaidRoute>,
): Promise<Listening> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl }))
    .register(NETWORK, new ExactEvmServer())
    .registerExtension(bazaarResourceServerExtension);
  const app = new Hono();
  const config = Object.fromEntries(
    Object.entries(routes).map(([path, route]) => [
      `GET ${path}`,
      {
        accepts: { scheme: "exact", price: route.price, network: NETWORK, payTo },
        description: route.description,
        mimeType: "application/json",
        extensions: declareDiscoveryExtension({
          input: { city: "Lisbon" },
          inputSchema: { properties: { city: { type: "string" } }, required: ["city"] },
          output: { example: route.body({ city: "Lisbon" }) },
        }),
      },
    ]),
  );
  app.use(paymentMiddleware(config, resourceServer));
  for (const [path, route] of Object.entries(routes)) app.get(path, (c) => c.json(route.body(c.req.query())));
  return listen(app.fetch, "127.0.0.1", 0);
}

/**
 * A facilitator whose `/supported` the test switches: exact always, upto and batch-settlement (with a receiver
 * authorizer) while on; it judges every payment and refuses it (a host's probe's payer has nothing) and settles
 * nothing. For what a host offers as its facilitator's support changes.
 */
export function switchingFacilitator(authorizer: string, on: { upto: boolean; channels: boolean }) {
  const kinds = { ...on };
  const client: FacilitatorClient = {
    getSupported: async (): Promise<SupportedResponse> => ({
      kinds: [
        { x402Version: 2, scheme: "exact", network: NETWORK },
        ...(kinds.upto
          ? [
              {
                x402Version: 2 as const,
                scheme: "upto",
                network: NETWORK,
                extra: { facilitatorAddress: authorizer },
              },
            ]
          : []),
        ...(kinds.channels
          ? [
              {
                x402Version: 2 as const,
                scheme: "batch-settlement",
                network: NETWORK,
                extra: { receiverAuthorizer: authorizer },
              },
            ]
          : []),
      ],
      extensions: [],
      signers: { "eip155:*": [authorizer] },
    }),
    verify: async () => ({ isValid: false, invalidReason: "insufficient_funds" }),
    settle: async () => {
      throw new Error("this test settles nothing");
    },
  };
  return { client, kinds };
}
