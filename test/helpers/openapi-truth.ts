/**
 * Holds a merchant's OpenAPI document to the truth: for every (method, path, status) it documents, a real
 * request over HTTP that gets that status from the served app, and an answer that is what the document
 * says of it (its media type, its schema, its required headers and what they carry).
 *
 * A merchant's table (`CaseTable`) gives, per operation, the call that succeeds (`ok`, with the state it
 * needs) and the calls that meet the endpoint's own refusals. The statuses the kit answers for every paid
 * route are produced here from the `ok` call (`KIT_RECIPES`): without a payment (402), with a malformed
 * one (400), a body one byte over the limit (413), a wallet that left five calls mid-work (429), and the
 * same catalogue served with its facilitator gone (503) and with its handlers held past their time budget
 * (504; and 409: one payment sent three times at once while its first run is held). `coverageGaps` says what the table misses or
 * invents against the document.
 */

import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { type FacilitatorClient, HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { Agent, fetch as undiciFetch } from "undici";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { type Devnet, type DevnetAccount, startDevnet } from "../../src/chain/devnet/index.ts";
import { type Database, openDatabase } from "../../src/common/db/index.ts";
import { listenWithUrl } from "../../src/common/listen.ts";
import { type Facilitator, inProcessClient } from "../../src/facilitator/index.ts";
import type { AnyEndpoint, Merchant } from "../../src/merchant-kit/endpoint.ts";
import { DEFAULT_MAX_BODY_BYTES } from "../../src/merchant-kit/input.ts";
import type { OpenApiDocument, OpenApiResponse } from "../../src/merchant-kit/openapi.ts";
import { PaymentLedger, UNPAID_LIMIT } from "../../src/merchant-kit/payments/ledger/payment-ledger.ts";
import { isGuarded } from "../../src/merchant-kit/payments/paid-handler.ts";
import { startMiner } from "./chain.ts";
import { openTestDatabase, SERVER_URL } from "./db.ts";
import { devnetFacilitator } from "./facilitator.ts";
import { startMerchant } from "./merchant.ts";
import { NETWORK, pay } from "./x402.ts";

/** A request to a host: its path with the query, and the rest. */
export interface Call {
  path: string;
  init?: RequestInit;
}

/** One way to get a status: the state it needs for the paying wallet, then the call. */
export interface Case {
  /** What this call is, in the test's name. */
  why: string;
  /** A wallet of its own: the call reads or writes per-wallet state no other case may touch. */
  ownWallet?: boolean;
  setup?: (hosts: TruthHosts, wallet: DevnetAccount) => Promise<void>;
  call: (hosts: TruthHosts) => Call;
}

/** An operation's cases: the call that succeeds, and one or more per refusal of the endpoint's own. */
export interface OperationCases {
  ok: Omit<Case, "why">;
  errors?: Partial<Record<number, Case | Case[]>>;
}

/** Per operation, "GET /api/calc" as the document writes its path. */
export type CaseTable = Record<string, OperationCases>;

/** The merchant's hosts on one devnet: as served, with its facilitator gone, with its handlers held. */
export interface TruthHosts {
  devnet: Devnet;
  db: Database;
  merchant: Merchant;
  doc: OpenApiDocument;
  url: string;
  /** The same catalogue (its `operations`), its facilitator an address where nothing answers. */
  cutOffUrl: string;
  /** The same catalogue (its `operations`), every handler held until its `HELD_BUDGET_MS` budget runs out. */
  heldUrl: string;
  /** A devnet buyer no other case pays with. */
  freshWallet(): DevnetAccount;
  /** The buyer cases share when they need no state of their own. */
  shared: DevnetAccount;
  /** A buyer that left `UNPAID_LIMIT` guarded calls in the last hour. */
  abandoner: DevnetAccount;
  close(): Promise<void>;
}

/**
 * The time budget of the held host's handlers, which never answer before it runs out: long enough that
 * copies of one payment sent at once are verified while the first holds the payment's ledger row (a 409),
 * as the facilitator refuses to verify a payment it is settling.
 */
export const HELD_BUDGET_MS = 1500;

/** The same catalogue with every handler held past a short budget: the kit's 504 for each route. */
function held(merchant: Merchant): Merchant {
  return {
    ...merchant,
    endpoints: merchant.endpoints.map(
      (endpoint): AnyEndpoint => ({
        ...endpoint,
        timeoutMs: HELD_BUDGET_MS,
        handler: (_input, ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
      }),
    ),
  };
}

/** An endpoint's operation as the document writes it: "GET /api/calc", "{name}" for ":name". */
function operationOf(endpoint: AnyEndpoint): string {
  return `${endpoint.method} ${endpoint.path.replace(/:([A-Za-z_]\w*)/g, "{$1}")}`;
}

/** The catalogue with only `operations`' endpoints. */
function only(merchant: Merchant, operations: readonly string[] | undefined): Merchant {
  if (!operations) return merchant;
  return { ...merchant, endpoints: merchant.endpoints.filter((e) => operations.includes(operationOf(e))) };
}

/**
 * The facilitator to the hosts, the miner running only while a settlement waits for its block: polling the
 * pool every 20 ms for the whole file cost a tenth of a core, and nothing else sends a transaction.
 */
function minedWhileSettling(
  facilitator: Facilitator,
  miner: ReturnType<typeof startMiner>,
): FacilitatorClient {
  const client = inProcessClient(facilitator);
  let settling = 0;
  miner.pause();
  return {
    ...client,
    settle: async (payload, requirements) => {
      if (settling++ === 0) miner.resume();
      try {
        return await client.settle(payload, requirements);
      } finally {
        if (--settling === 0) miner.pause();
      }
    },
  };
}

/**
 * Serves `build(url)` three ways on one devnet (its facilitator in process) and one merchant database:
 * PostgreSQL when the tests have a server (writes of several cases then run side by side), else PGlite.
 * The held and cut-off hosts serve only `operations` when given, the ones the cases will call: each
 * route a host serves costs the process's first start of it a schema compiled (its Bazaar entry checked:
 * src/merchant-kit/payments/bazaar-checked.ts).
 */
export async function startTruthHosts(
  build: (url: string) => Merchant,
  options: { buyers: number; operations?: readonly string[] },
): Promise<TruthHosts> {
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const fn of closers.reverse()) await fn();
  };
  try {
    const devnet = await startDevnet({ port: 0, buyers: options.buyers + 2, blockTime: 0 });
    closers.push(() => devnet.stop());
    const miner = startMiner(devnet);
    closers.push(() => miner.stop());
    const state = await openTestDatabase(SERVER_URL ? "postgres" : "pglite");
    closers.push(state.close);
    // The facilitator's connections of its own, as its service has: a write unit holds one until the
    // payment settles. On a server the same database, as the services share it; on PGlite, whose one
    // connection a unit holds, a cluster of its own.
    const ledger = SERVER_URL
      ? await openDatabase(state.options).then((db) => ({ db, close: () => db.close() }))
      : await openTestDatabase("pglite");
    closers.push(ledger.close);
    const facilitator = await devnetFacilitator(devnet, ledger.db);
    closers.push(() => facilitator.close());
    const paying = minedWhileSettling(facilitator, miner);
    const chain = { rpcUrl: devnet.rpc };
    let merchant: Merchant | undefined;
    const main = await startMerchant(
      (url) => {
        merchant = build(url);
        return merchant;
      },
      state.db,
      paying,
      chain,
    );
    closers.push(() => main.close());
    const holding = await startMerchant(
      (url) => held(only(build(url), options.operations)),
      state.db,
      paying,
      chain,
    );
    closers.push(() => holding.close());
    // A port that was free a moment ago: nothing answers there.
    const gone = await listenWithUrl(async () => () => new Response(), "127.0.0.1", 0);
    await gone.close();
    const cutOff = await startMerchant(
      (url) => only(build(url), options.operations),
      state.db,
      new HTTPFacilitatorClient({ url: gone.url }),
    );
    closers.push(() => cutOff.close());

    const [shared, abandoner, ...rest] = devnet.buyers as [DevnetAccount, DevnetAccount, ...DevnetAccount[]];
    await abandonCalls(state.db, abandoner.address);
    const doc = (await (await fetch(`${main.url}/openapi.json`)).json()) as OpenApiDocument;
    return {
      devnet,
      db: state.db,
      merchant: merchant as Merchant,
      doc,
      url: main.url,
      cutOffUrl: cutOff.url,
      heldUrl: holding.url,
      freshWallet: () => {
        const wallet = rest.shift();
        if (!wallet) throw new Error(`more than ${options.buyers} cases asked for a wallet of their own`);
        return wallet;
      },
      shared,
      abandoner,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `UNPAID_LIMIT` guarded calls the payer left mid-work just now, as the ledger records them. */
async function abandonCalls(db: Database, payer: `0x${string}`): Promise<void> {
  const ledger = new PaymentLedger(db);
  for (let i = 0; i < UNPAID_LIMIT; i++) {
    const key = {
      payer: payer.toLowerCase() as `0x${string}`,
      nonce: generatePrivateKey(),
      validBefore: Math.floor(Date.now() / 1000) + 3600,
      amount: 1000n,
    };
    await ledger.take(key, "left mid-work");
    await ledger.finish(key, "abandoned");
  }
}

/**
 * A connection per request. On a busy machine the host's timer closing an idle keep-alive connection and
 * the client's reusing it can cross, and the request meets a reset: no answer of the route's. Nor is the
 * connection a host closes after answering 413 before reading the body.
 */
const oneShot = new Agent({ pipelining: 0 });

/** `fetch` on connections of their own; a request object (the paying fetch's, of either fetch) read into undici's. */
const fresh = (async (input: string | URL | Request, init?: RequestInit) => {
  if (typeof input === "string" || input instanceof URL) {
    return undiciFetch(String(input), { ...(init as object), dispatcher: oneShot });
  }
  const body = input.method === "GET" || input.method === "HEAD" ? undefined : await input.arrayBuffer();
  return undiciFetch(input.url, {
    method: input.method,
    headers: [...new Headers(input.headers)],
    body,
    dispatcher: oneShot,
  });
}) as unknown as typeof fetch;

/** `fetch` that pays a 402 with `wallet`'s key (the exact scheme). */
export function payingFetch(wallet: DevnetAccount): typeof fetch {
  return wrapFetchWithPayment(
    fresh,
    new x402Client().register(NETWORK, new ExactEvmClient(privateKeyToAccount(wallet.privateKey))),
  );
}

/** Where a call goes on a host. */
function send(base: string, call: Call, via: typeof fetch = fresh): Promise<Response> {
  return via(`${base}${call.path}`, call.init);
}

/** The endpoint an operation is served from. */
function endpointOf(hosts: TruthHosts, method: string, path: string): AnyEndpoint {
  const endpoint = hosts.merchant.endpoints.find((e) => operationOf(e) === `${method} ${path}`);
  if (!endpoint) throw new Error(`no endpoint serves ${method} ${path}`);
  return endpoint;
}

type Recipe = (
  hosts: TruthHosts,
  op: { method: string; path: string },
  ok: OperationCases["ok"],
) => Promise<Response>;

/** The ok call's state, for `wallet`. */
async function ready(hosts: TruthHosts, ok: OperationCases["ok"], wallet: DevnetAccount): Promise<Call> {
  await ok.setup?.(hosts, wallet);
  return ok.call(hosts);
}

/**
 * The statuses the kit answers for every paid route (refusals.ts), each made from the route's ok call.
 * `held`: the call goes to the held host, whose handlers never run, so what the providers' fakes answer
 * does not reach it past its setup; it waits out `HELD_BUDGET_MS` there.
 */
export const KIT_RECIPES: Record<number, { why: string; make: Recipe; held?: true }> = {
  400: {
    why: "a PAYMENT-SIGNATURE that is not a payment",
    make: async (hosts, _op, ok) => {
      const call = ok.call(hosts);
      const headers = new Headers(call.init?.headers);
      headers.set("PAYMENT-SIGNATURE", "not-base64-json!");
      return send(hosts.url, { ...call, init: { ...call.init, headers } });
    },
  },
  402: { why: "no payment", make: async (hosts, _op, ok) => send(hosts.url, ok.call(hosts)) },
  409: {
    why: "one payment sent three times at once, its first run held",
    held: true,
    make: async (hosts, op, ok) => {
      // The copy that runs is held to its 504: on a guarded route, work left unpaid, counted against its payer.
      const wallet = walletFor(hosts, ok, unpaidWork(hosts, op, 504));
      const call = await ready(hosts, ok, wallet);
      const unpaid = await send(hosts.heldUrl, call);
      const required = decodePaymentRequiredHeader(unpaid.headers.get("PAYMENT-REQUIRED") ?? "");
      const [requirements] = required.accepts;
      if (!requirements) throw new Error("the 402 offers no way to pay");
      const header = encodePaymentSignatureHeader(
        await pay(wallet, requirements, required.resource, required.extensions),
      );
      const copies = await Promise.all(
        [0, 1, 2].map(() => {
          const headers = new Headers(call.init?.headers);
          headers.set("PAYMENT-SIGNATURE", header);
          return send(hosts.heldUrl, { ...call, init: { ...call.init, headers } });
        }),
      );
      // The copy that took the payment's row answers 504 when its budget runs out; the others found it in use.
      return copies.find((r) => r.status === 409) ?? (copies.at(-1) as Response);
    },
  },
  413: {
    why: "a body one byte over the limit",
    make: async (hosts, op, ok) => {
      const limit = endpointOf(hosts, op.method, op.path).maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
      const call = ok.call(hosts);
      return send(hosts.url, { ...call, init: { ...call.init, body: "x".repeat(limit + 1) } });
    },
  },
  429: {
    why: "a wallet that left five calls mid-work",
    make: async (hosts, _op, ok) =>
      send(hosts.url, await ready(hosts, ok, hosts.abandoner), payingFetch(hosts.abandoner)),
  },
  503: { why: "the facilitator gone", make: async (hosts, _op, ok) => send(hosts.cutOffUrl, ok.call(hosts)) },
  504: {
    why: "a handler held past its budget",
    held: true,
    make: async (hosts, op, ok) => {
      const wallet = walletFor(hosts, ok, unpaidWork(hosts, op, 504));
      return send(hosts.heldUrl, await ready(hosts, ok, wallet), payingFetch(wallet));
    },
  },
};

/**
 * Whether a paid answer of `status` leaves work the payer did not pay for: a failure of a guarded route,
 * which the ledger counts against its payer (five an hour and it is refused with 429).
 */
function unpaidWork(hosts: TruthHosts, op: { method: string; path: string }, status: number): boolean {
  return status >= 500 && isGuarded(endpointOf(hosts, op.method, op.path));
}

/**
 * The wallet a case pays with: its own when it needs state of its own, or when its answer counts against
 * its payer, so that the shared wallet is never refused for what other cases left unpaid.
 */
function walletFor(hosts: TruthHosts, c: { ownWallet?: boolean }, unpaid: boolean): DevnetAccount {
  return c.ownWallet || unpaid ? hosts.freshWallet() : hosts.shared;
}

/** Runs one of an operation's own cases; `unpaid`: its answer counts against its payer (`unpaidWork`). */
export async function runCase(
  hosts: TruthHosts,
  c: Case | OperationCases["ok"],
  unpaid = false,
): Promise<Response> {
  const wallet = walletFor(hosts, c, unpaid);
  const call = await ready(hosts, c, wallet);
  // Paying: a refusal before any payment comes back as it is, one after the 402 once paid.
  return send(hosts.url, call, payingFetch(wallet));
}

/** "GET /api/calc" into its method and path. */
export function splitKey(key: string): { method: string; path: string } {
  const [method, path] = key.split(" ");
  return { method: method as string, path: path as string };
}

/** An operation's cases by status: its ok call, its own refusals, and the kit's for each status documented. */
export function casesOf(
  doc: OpenApiDocument,
  key: string,
  cases: OperationCases,
): { status: number; why: string; held?: true; run: (hosts: TruthHosts) => Promise<Response> }[] {
  const op = splitKey(key);
  const documented = Object.keys(doc.paths[op.path]?.[op.method.toLowerCase()]?.responses ?? {}).map(Number);
  const own = Object.entries(cases.errors ?? {}).flatMap(([status, c]) =>
    [c ?? []].flat().map((one) => ({
      status: Number(status),
      why: one.why,
      run: (h: TruthHosts) => runCase(h, one, unpaidWork(h, op, Number(status))),
    })),
  );
  const kit = documented
    .filter((status) => KIT_RECIPES[status] !== undefined)
    .map((status) => {
      const recipe = KIT_RECIPES[status] as (typeof KIT_RECIPES)[number];
      return {
        status,
        why: recipe.why,
        held: recipe.held,
        run: (h: TruthHosts) => recipe.make(h, op, cases.ok),
      };
    });
  return [{ status: 200, why: "the ok call", run: (h) => runCase(h, cases.ok) }, ...kit, ...own];
}

/**
 * What the table and the document disagree on: a documented (operation, status) the table has no case for
 * (the kit's statuses have theirs), a case whose status the document does not list, an operation either
 * has and the other does not.
 */
export function coverageGaps(doc: OpenApiDocument, table: CaseTable): string[] {
  const gaps: string[] = [];
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
  );
  for (const { key, op } of documented) {
    const cases = table[key];
    if (!cases) {
      gaps.push(`${key}: no cases`);
      continue;
    }
    for (const status of Object.keys(op.responses).map(Number)) {
      const covered =
        status === 200 || cases.errors?.[status] !== undefined || KIT_RECIPES[status] !== undefined;
      if (!covered) gaps.push(`${key} ${status}: documented, no case`);
    }
    for (const status of Object.keys(cases.errors ?? {})) {
      if (op.responses[status] === undefined) gaps.push(`${key} ${status}: a case, not documented`);
    }
  }
  for (const key of Object.keys(table)) {
    if (!documented.some((d) => d.key === key)) gaps.push(`${key}: cases, not in the document`);
  }
  return gaps;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
/** Per document: the id its components are known to ajv by, and the validators made of its schemas. */
const compiled = new WeakMap<OpenApiDocument, { id: string; validators: Map<string, ValidateFunction> }>();

/** A validator of `schema`, its references read against the document's components. */
function validatorOf(doc: OpenApiDocument, schema: object): ValidateFunction {
  let known = compiled.get(doc);
  if (!known) {
    known = { id: `openapi-${generatePrivateKey().slice(2, 10)}`, validators: new Map() };
    ajv.addSchema({ $id: known.id, components: doc.components });
    compiled.set(doc, known);
  }
  const text = JSON.stringify(schema);
  let validate = known.validators.get(text);
  if (!validate) {
    validate = ajv.compile(JSON.parse(text.replaceAll('"#/components/', `"${known.id}#/components/`)));
    known.validators.set(text, validate);
  }
  return validate;
}

function expectValid(doc: OpenApiDocument, schema: object, value: unknown, where: string): void {
  const validate = validatorOf(doc, schema);
  expect(validate(value) ? [] : validate.errors, where).toEqual([]);
}

/**
 * Checks an answer against what the document says of `status` for the operation: the status, a media
 * type it lists, a JSON body that fits that type's schema, and each header it requires, decoded and
 * checked against its schema. Returns the JSON body, if any.
 */
export async function expectDocumented(
  doc: OpenApiDocument,
  key: string,
  status: number,
  response: Response,
): Promise<unknown> {
  const { method, path } = splitKey(key);
  const text = await response.text();
  expect(response.status, `${key}: ${text.slice(0, 300)}`).toBe(status);
  const documented = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)] as
    | OpenApiResponse
    | undefined;
  expect(documented, `${key} ${status} is documented`).toBeDefined();
  if (!documented) return undefined;
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = response.headers.get(name);
    if (header.required) expect(value, `${key} ${status} header ${name}`).not.toBeNull();
    const inner = header.schema.contentSchema as object | undefined;
    if (value !== null && inner) {
      expectValid(
        doc,
        inner,
        JSON.parse(Buffer.from(value, "base64").toString("utf8")),
        `${key} ${status} ${name}`,
      );
    } else if (value !== null) {
      expectValid(doc, header.schema, value, `${key} ${status} ${name}`);
    }
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  const media = documented.content?.[type];
  expect(
    media,
    `${key} ${status} answered ${type}, documented ${Object.keys(documented.content ?? {})}`,
  ).toBeDefined();
  if (type !== "application/json" || !media) return undefined;
  const body = JSON.parse(text) as unknown;
  expectValid(doc, media.schema, body, `${key} ${status} body`);
  return body;
}

/** The last turn at the fakes (`inTurn`). */
let fakesTurn: Promise<unknown> = Promise.resolve();

/** Runs `work` once every turn queued before it has ended: the fakes set one way at a time, across tests. */
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const done = fakesTurn.then(work);
  fakesTurn = done.catch(() => undefined);
  return done;
}

/**
 * Runs every case of an operation, side by side or one after the other, each answer checked against the
 * document; resolves to what failed, one line a case ("409 (one payment sent three times at once): ...").
 * One after the other (`sequential`: each case sets how the fakes answer), in one turn at the fakes that
 * no other operation's sequential cases or setups share, so such operations' tests may run side by side.
 * The held host's cases come after them and together: each sets the fakes as the ok call has them (its
 * setup, a turn of its own) and neither reads them, so they wait out their budget once, not once each, and
 * while the next operation's cases run.
 */
export async function checkOperation(
  hosts: TruthHosts,
  key: string,
  cases: OperationCases,
  options: { sequential?: boolean } = {},
): Promise<string[]> {
  const check = async (c: ReturnType<typeof casesOf>[number]) => {
    try {
      await expectDocumented(hosts.doc, key, c.status, await c.run(hosts));
      return undefined;
    } catch (error) {
      const cause = (error as Error).cause ? ` (${String((error as Error).cause)})` : "";
      return `${c.status} (${c.why}): ${(error as Error).message.split("\n").slice(0, 6).join(" ")}${cause}`;
    }
  };
  const all = casesOf(hosts.doc, key, cases);
  const failures: (string | undefined)[] = [];
  if (options.sequential) {
    const { setup } = cases.ok;
    const held = casesOf(hosts.doc, key, {
      ...cases,
      ok: { ...cases.ok, setup: setup && ((h, wallet) => inTurn(() => setup(h, wallet))) },
    }).filter((c) => c.held);
    const ordered = await inTurn(async () => {
      const out: (string | undefined)[] = [];
      for (const c of all.filter((c) => !c.held)) out.push(await check(c));
      return out;
    });
    failures.push(...ordered, ...(await Promise.all(held.map(check))));
  } else failures.push(...(await Promise.all(all.map(check))));
  return failures.filter((f): f is string => f !== undefined);
}
