import type { PendingSettlementStore } from "@x402/core/facilitator";
import { x402Facilitator } from "@x402/core/facilitator";
import type {
  FacilitatorExtension,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from "@x402/core/types";
import type { FacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { UptoEvmScheme } from "@x402/evm/upto/facilitator";
import { BAZAAR, type DiscoveryResourcesResponse } from "@x402/extensions/bazaar";
import type { Hono } from "hono";
import { type Chain, createPublicClient, createWalletClient, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { BASE_USDC } from "../chain/base.ts";
import { rpcTransport } from "../chain/rpc-transport.ts";
import { fastAccount } from "../chain/secp256k1.ts";
import { type Database, migrate } from "../common/db/index.ts";
import { log } from "../common/log.ts";
import { watchSignerBalance } from "../common/metrics.ts";
import { type AccessPolicy, createGasBudgets, createGate, type Gate, type Grant } from "./access/index.ts";
import { bazaarRecorder, DEFAULT_LIMIT, type DiscoveryQuery, listResources } from "./bazaar.ts";
import { CappedBuilderCodeExtension } from "./builder-codes.ts";
import { checkChainIdentity, type OnNewChain } from "./chain-identity.ts";
import { createChainReads } from "./chain-reads.ts";
import { createChannelActions, type Origin } from "./channels/actions.ts";
import {
  type AuthorizerTable,
  type ChannelAuthorizers,
  createChannelAuthorizers,
} from "./channels/authorizers.ts";
import { isChannelAction } from "./channels/payloads.ts";
import { countedSettle, countedVerify } from "./counted.ts";
import { ExactEoaScheme } from "./exact-eoa.ts";
import { facilitatorRoutes } from "./http.ts";
import { FACILITATOR_MIGRATIONS } from "./migrations.ts";
import type { ResolveSummary } from "./resolve-pending.ts";
import { createSettlement } from "./settlement.ts";
import { createSettlementGroups, type SettlementGroups } from "./settlement-groups.ts";
import { createSigner } from "./signer.ts";
import { type ReceiptBlocks, signerHooks } from "./signer-hooks.ts";
import { createSponsoring } from "./sponsoring/index.ts";
import { createSubmitter } from "./submitter.ts";
import { answerIn, versionOf, withV1Kinds } from "./v1.ts";
import { createVerification } from "./verification.ts";
import type { Scope } from "./wire.ts";

export interface FacilitatorOptions {
  /** Where the ledger and the Bazaar live (migrated on start). The caller opens and closes it. */
  db: Database;
  /** JSON-RPC over HTTP of the chain. */
  rpc: string;
  /** The key the facilitator settles with: it pays the gas, so it holds ETH, not USDC. */
  privateKey: Hex;
  /** The chain; default viem's Base (8453). Its id makes the network, e.g. "eip155:8453". */
  chain?: Chain;
  /** Tokens settled (it pays gas for them): default Base USDC. */
  assets?: readonly string[];
  /** How long /settle waits for a receipt before answering "pending". Default 20 s (keep it below the
   * resource server's facilitator timeout, 90 s in the SDK: the SDK retries a pending answer once). */
  confirmationTimeoutMs?: number;
  /** How often receipts are polled. Default 500 ms (Base makes a block every 2 s). */
  pollingIntervalMs?: number;
  /** How often pending settlements are looked at in the background. Default 10 s; 0 = never. */
  resolveIntervalMs?: number;
  /** What to do when the database's ledger belongs to another chain. Default "fail". */
  onNewChain?: OnNewChain;
  /**
   * Who may make it verify and settle over HTTP (docs/facilitator.md, "Access control"): payees served
   * without a key, and whether a request without a key is served for any payee. Default open with no
   * allow-list, what a facilitator on loopback with nothing configured is; the commands decide it at start
   * (src/services/facilitator.ts). Calls in process (`verify`, `settle`, `inProcessClient`) are not gated.
   */
  access?: AccessPolicy;
  /**
   * Whether it offers to be batch-settlement channels' receiverAuthorizer (its settling account's address in
   * /supported's `extra.receiverAuthorizer`), signing claims and refunds a merchant sends without that
   * signature, for callers that may act for the channel's receiver (docs/facilitator.md, "batch-settlement").
   * Default true; false: merchants sign their own.
   */
  receiverAuthorizer?: boolean;
  /**
   * Receivers' own batch-settlement authorizers (receiver address -> authorizer addresses, e.g. a merchant's
   * own authorizer key): deposits into channels naming one are relayed too. Default none: only channels
   * whose receiverAuthorizer is the receiver or this facilitator (docs/facilitator.md, "The
   * receiverAuthorizer (decision)"). More can be added later with `channelAuthorizers.register`.
   */
  channelAuthorizers?: AuthorizerTable;
  /**
   * Its ERC-8021 builder code (`w`), appended with the payment's own app and service codes to the calldata of
   * every transaction it settles, the suffix within 128 bytes (docs/facilitator.md, "Builder codes"). Default
   * none: a suffix is still appended when the payment carries codes of its own.
   */
  builderCode?: string;
  /**
   * Settlements committed in groups (docs/facilitator.md, "Settlements in groups"): exact EIP-3009
   * settlements that become ready while one is in flight go together into the next transaction, through
   * Multicall3 (at its canonical address on the chain). Default false: one transaction per settlement.
   */
  groupSettlements?: boolean;
}

export interface Facilitator {
  /** The HTTP face: POST /verify, POST /settle, GET /supported, GET /discovery/resources, GET /healthz. */
  readonly app: Hono;
  /** CAIP-2 network, e.g. "eip155:8453". */
  readonly network: Network;
  /**
   * The settling account. On Solana (svm/), the fee payer's base58 address under this type: every caller of
   * an EVM chain's reads it as a hex address, and a Solana facilitator is never asked for one.
   */
  readonly address: `0x${string}`;
  readonly scope: Scope;
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  /**
   * With a `grant` (a keyed HTTP request), the settlement's gas is reserved against the key's budget.
   * `origin`: who asks, for the batch-settlement actions this facilitator signs as a receiverAuthorizer
   * (default in-process: the merchants of this process).
   */
  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    grant?: Grant,
    origin?: Origin,
  ): Promise<SettleResponse>;
  supported(): SupportedResponse;
  /** The HTTP face's access control: its allow-list (`gate.allow(payees)` adds to it), keys, openness. */
  readonly gate: Gate;
  /** Whose channels it relays deposits into; `register(receiver, authorizers)` adds a receiver's own. */
  readonly channelAuthorizers: ChannelAuthorizers;
  /** A page of the Bazaar (defaults: the first 20 resources). */
  discoveryResources(query?: Partial<DiscoveryQuery>): Promise<DiscoveryResourcesResponse>;
  /** Looks at every pending settlement once (what the background check does). */
  resolvePending(): Promise<ResolveSummary>;
  /** Settlements waiting for the next group (always 0 without `groupSettlements`). */
  settlementsWaiting(): number;
  /**
   * Settles once at least `n` settlements wait for the next group: what a test (or a probe) awaits instead of
   * polling the count against a clock. Never settles without `groupSettlements` (nothing waits).
   */
  untilSettlementsWaiting(n: number): Promise<void>;
  ping(): Promise<void>;
  /** Stops the background check and waits for settlements under way. Does not close the database. */
  close(): Promise<void>;
}

/**
 * The project's own x402 v2 facilitator: the exact scheme on EVM with EIP-3009 authorizations (USDC) or
 * Permit2 ones through the x402 exact proxy, the upto scheme with Permit2 authorizations through the x402
 * upto proxy, and batch-settlement channels (deposits, vouchers, claims, settles, refunds); x402 v1's exact
 * scheme on a chain v1 names, judged as the v2 payment it is (v1.ts); verified and
 * settled by `@x402/evm`'s `ExactEvmScheme`, `UptoEvmScheme` and `BatchSettlementEvmScheme` under
 * `@x402/core`'s `x402Facilitator`, with a PostgreSQL ledger that makes settlement at-most-once per
 * authorization (and per channel action) and a Bazaar.
 * docs/facilitator.md describes the wire answers.
 *
 * @example
 * const db = await openDatabase({ pgliteDir: dataLayout(dataDir).pglite.facilitator, databaseUrl: null });
 * const facilitator = await createFacilitator({ db, rpc: devnet.rpc, privateKey: devnet.facilitatorAccount.privateKey });
 * serve({ fetch: facilitator.app.fetch, port: 8403 });
 * // merchants: new x402ResourceServer(new HTTPFacilitatorClient({ url: "http://127.0.0.1:8403" }))
 * await facilitator.close();
 */
export async function createFacilitator(options: FacilitatorOptions): Promise<Facilitator> {
  const { db } = options;
  const chain: Chain = options.chain ?? base;
  const confirmationTimeoutMs = options.confirmationTimeoutMs ?? 20_000;
  const pollingIntervalMs = options.pollingIntervalMs ?? 500;
  const resolveIntervalMs = options.resolveIntervalMs ?? 10_000;
  const network = `eip155:${chain.id}` as Network;
  const authorizer =
    options.receiverAuthorizer === false ? undefined : privateKeyToAccount(options.privateKey);
  const channelAuthorizers = createChannelAuthorizers(authorizer?.address, options.channelAuthorizers);
  const scope: Scope = {
    network,
    assets: new Set((options.assets ?? [BASE_USDC]).map((a) => a.toLowerCase())),
    authorizers: channelAuthorizers,
  };

  const transport = rpcTransport(options.rpc);
  // Receipts are polled by hash every `pollingIntervalMs` (outcome.ts); viem's own polling and block-number
  // cache follow the same interval.
  const client = createPublicClient({
    chain,
    transport,
    pollingInterval: pollingIntervalMs,
    cacheTime: pollingIntervalMs,
  });
  // Settlement transactions signed by libsecp256k1 (the same bytes as viem's, a fraction of its CPU).
  const wallet = createWalletClient({ chain, transport, account: fastAccount(options.privateKey) });

  await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
  await checkChainIdentity(db, client, options.onNewChain ?? "fail");

  const receiptBlocks: ReceiptBlocks = new Map();
  const budgets = createGasBudgets(db);
  const submitter = createSubmitter(wallet, client);
  const reads = createChainReads(client, submitter.address);
  const hooks = signerHooks(db, network, budgets, receiptBlocks);
  const timing = { confirmationTimeoutMs, pollingIntervalMs };
  const signer = createSigner({ client, reads, submitter, hooks, ...timing });
  const groups = options.groupSettlements
    ? createSettlementGroups({ client, submitter, hooks, receiptBlocks, ...timing })
    : undefined;
  const sponsoring = createSponsoring({ db, client, network, submitter, signer, budgets, ...timing });
  const sdk = schemes(network, signer, authorizer, options.builderCode, groups, sponsoring.extensions);
  const gate = createGate(db, options.access ?? { open: true }, network);

  const verify = createVerification({ db, sdk, client, reads, scope, sponsoring });
  const bazaar = bazaarRecorder(db);
  const settlement = createSettlement({
    db,
    sdk,
    verify,
    client,
    reads,
    signer: submitter.address,
    scope,
    confirmationTimeoutMs,
    pollingIntervalMs,
    receiptBlocks,
    budgets,
    sponsoring,
    async recordInBazaar(row) {
      try {
        return await bazaar.record(row.payment_payload, row.payment_requirements);
      } catch (error) {
        // The payment is settled whatever happens to the Bazaar.
        log("error", "recording in the Bazaar failed", { error });
        return { status: "rejected", rejectedReason: "the Bazaar is unavailable" };
      }
    },
  });

  const channels = createChannelActions({
    db,
    sdk,
    client,
    signer: submitter.address,
    scope,
    confirmationTimeoutMs,
    pollingIntervalMs,
    receiptBlocks,
    budgets,
    // Over HTTP, the gate admitted it with a key that names the receiver; in this process, it is one of
    // the merchants this process serves.
    mayAuthorize: (receiver, grant, origin) =>
      origin === "loopback" ? true : origin === "http" ? grant?.authority === true : gate.allows(receiver),
  });
  const resolveAll = async (): Promise<ResolveSummary> => {
    const [payments, actions] = [await settlement.resolvePending(), await channels.resolvePending()];
    return { checked: payments.checked + actions.checked, resolved: payments.resolved + actions.resolved };
  };

  // The background check: one pass at a time (a slow RPC must not queue passes up).
  let timer: NodeJS.Timeout | undefined;
  let resolving: Promise<unknown> | undefined;
  if (resolveIntervalMs > 0) {
    timer = setInterval(() => {
      resolving ??= resolveAll()
        .catch((error) => {
          log("warn", "pending check failed", { error });
        })
        .finally(() => {
          resolving = undefined;
        });
    }, resolveIntervalMs);
    timer.unref();
  }

  // The signer's balance (what pays the gas), read when the metrics are scraped.
  const unwatch = watchSignerBalance(submitter.address, () =>
    client.getBalance({ address: submitter.address }),
  );

  const service: Omit<Facilitator, "app"> = {
    network,
    address: submitter.address,
    scope,
    verify: (payload, requirements) =>
      countedVerify(versionOf(payload), () =>
        isChannelAction(payload, requirements)
          ? channels.verify(payload, requirements)
          : verify(payload, requirements),
      ),
    settle: (payload, requirements, grant, origin) =>
      countedSettle(versionOf(payload), async () =>
        isChannelAction(payload, requirements)
          ? channels.settle(payload, requirements, grant, origin)
          : answerIn(payload, await settlement.settle(payload, requirements, grant)),
      ),
    supported: () => withV1Kinds(sdk.getSupported() as SupportedResponse, network),
    discoveryResources: (query = {}) => listResources(db, { limit: DEFAULT_LIMIT, offset: 0, ...query }),
    resolvePending: resolveAll,
    settlementsWaiting: () => groups?.waiting() ?? 0,
    untilSettlementsWaiting: (n) => groups?.untilWaiting(n) ?? new Promise<void>(() => {}),
    gate,
    channelAuthorizers,
    async ping() {
      await db.query("SELECT 1");
    },
    async close() {
      unwatch();
      clearInterval(timer);
      await resolving;
      await settlement.drain();
      await channels.drain();
      await bazaar.drain();
    },
  };
  return { ...service, app: facilitatorRoutes(service) };
}

/**
 * The SDK's schemes over our signer: exact (EIP-3009 through `ExactEoaScheme` first, Permit2), upto,
 * batch-settlement (its receiverAuthorizer, when offered, is the settling account's key); and the gas
 * sponsoring extensions (`sponsoring`: the schemes carry out the permit or approval sponsoring/ allowed).
 */
function schemes(
  network: Network,
  signer: FacilitatorEvmSigner,
  authorizer: ReturnType<typeof privateKeyToAccount> | undefined,
  builderCode: string | undefined,
  groups: SettlementGroups | undefined,
  sponsoring: readonly FacilitatorExtension[],
): x402Facilitator {
  const store = { pendingSettlementStore: NO_PENDING_STORE };
  // The builder-code extension is asked by each scheme for the suffix of the transaction it sends (the
  // signer appends it, signer.ts); without a code of its own it still passes the payment's codes on, as
  // many as fit its cap (builder-codes.ts).
  const sdk = new x402Facilitator()
    .register(network, new ExactEoaScheme(signer, new ExactEvmScheme(signer, store), groups))
    .register(network, new UptoEvmScheme(signer, store))
    .register(network, new BatchSettlementEvmScheme(signer, authorizer, store))
    .registerExtension(BAZAAR)
    .registerExtension(new CappedBuilderCodeExtension(builderCode));
  for (const extension of sponsoring) sdk.registerExtension(extension);
  return sdk;
}

/**
 * The SDK remembers a pending settlement in a store so that its next settle of the same payload waits for
 * that transaction instead of sending another. The ledger already does that, durably, and must stay the
 * only memory: an in-memory copy would outlive a ledger decision (a dropped transaction) and steer the SDK.
 */
const NO_PENDING_STORE: PendingSettlementStore = {
  get: async () => undefined,
  set: async () => undefined,
  delete: async () => undefined,
};
