/**
 * The project's facilitator as a service of this process: on its own (`facilitator`), under the devnet
 * (`devnet`) or inside the demo. Its state is its own database: with PGlite its own directory, so that a
 * merchant's request holding a transaction open until its payment settles (src/merchant-kit/payments)
 * never waits on the facilitator for the one PGlite connection they would otherwise share.
 */
import type { Chain, Hex } from "viem";
import { type Devnet, devnetChain } from "../chain/devnet/index.ts";
import { migrate, openDatabase } from "../common/db/index.ts";
import type { Lifecycle } from "../common/lifecycle.ts";
import { log } from "../common/log.ts";
import { withMetrics } from "../common/metrics-server.ts";
import { limitPaths, type UnpaidLimit } from "../common/rate-limit.ts";
import { ConfigError } from "../config/config-error.ts";
import { dataLayout } from "../config/layout.ts";
import {
  addReadinessChecks,
  chainReadiness,
  countLiveKeys,
  createFacilitator,
  decideOpen,
  FACILITATOR_MIGRATIONS,
  type Facilitator,
  facilitatorOfChains,
  isLoopback,
  type OnNewChain,
  svmReadiness,
} from "../facilitator/index.ts";
import { writeAdminRecord } from "./admin.ts";
import type { Config } from "./config.ts";
import { withKeyAdmin } from "./facilitator-admin.ts";
import { listenOn } from "./listen.ts";

/** One chain a facilitator settles on: its RPC, its settling key, its tokens. */
export interface FacilitatorChainOptions {
  rpc: string;
  /** The settling key: it pays the gas. */
  privateKey: Hex;
  chain?: Chain;
  assets?: readonly string[];
  /** Payees served without a key on this chain alone, besides X402M_FACILITATOR_PAYEES. */
  payees?: readonly string[];
  /** Its name in the readiness checks (`<slug>_chain`, `<slug>_signer`), for a chain after the first. */
  slug?: string;
}

export interface FacilitatorServiceOptions extends Omit<FacilitatorChainOptions, "payees" | "slug"> {
  /**
   * Further chains the same process settles on (issue 67 item 6), each with its own ledger rows, key and gas
   * days, on the same database, behind the same URL: a payment goes to the chain its requirements name.
   */
  more?: readonly FacilitatorChainOptions[];
  /** Payees served without a key on the first chain alone (its X402M_FACILITATOR_PAYEES_<SLUG>). */
  chainPayees?: readonly string[];
  onNewChain?: OnNewChain;
  pollingIntervalMs?: number;
  /** `--open`: serve requests without a key for any payee, wherever it listens (docs/facilitator.md). */
  open?: boolean;
  /** The payTo of the merchants served in this process: on the allow-list without saying so. */
  payees?: readonly string[];
  /**
   * Sign as any payee's receiverAuthorizer for a request without a key from loopback (the devnet's: the
   * merchants `serve` runs beside it take channels with no key to ask for; `AccessPolicy`).
   */
  loopbackAuthority?: boolean;
  /**
   * Solana too (issue 86 item 5): `exact` on Solana settled with this fee payer through this RPC, on the same
   * database and URL (docs/facilitator.md, "Solana"). `only`: Solana alone, the EVM chain's `rpc` and
   * `privateKey` unused (the Solana devnet's facilitator).
   */
  solana?: SolanaFacilitatorOptions;
}

/** The facilitator's Solana: its RPC and its fee payer's key pair (base58 of its 64 bytes). */
export interface SolanaFacilitatorOptions {
  rpc: string;
  feePayerKey: string;
  /** Solana alone: no EVM chain. */
  only?: boolean;
}

/**
 * The facilitator of a devnet: it settles from the devnet's facilitator account, and clears its ledger
 * when the chain is new (anvil makes one on every start, unless it resumes a saved chain, whose genesis
 * and so whose ledger stay). `pollingIntervalMs`: how often receipts are polled.
 */
export function devnetFacilitatorOptions(
  devnet: Devnet,
  pollingIntervalMs: number,
): FacilitatorServiceOptions {
  return {
    ...devnetChainOptions(devnet),
    onNewChain: "reset",
    pollingIntervalMs,
    loopbackAuthority: true,
  };
}

/** A devnet as a chain the facilitator settles on: its RPC, its chain (with its id), its signer's key. */
export function devnetChainOptions(
  devnet: Devnet,
): Pick<FacilitatorChainOptions, "rpc" | "chain" | "privateKey"> {
  return {
    rpc: devnet.rpc,
    chain: devnetChain(devnet.rpc, devnet.chainId),
    privateKey: devnet.facilitatorAccount.privateKey,
  };
}

export interface FacilitatorService {
  url: string;
  facilitator: Facilitator;
  /** How it is reached (for the ready line): open or not, allow-listed payees, live keys. */
  access: { open: boolean; payees: number; keys: number };
}

/**
 * Starts the facilitator on `config.host`:`config.ports.facilitator`, its ledger in its own database.
 * Closing (through `lifecycle`) stops HTTP first, then waits for the settlements under way, then closes
 * the database.
 *
 * Its access is decided here (src/facilitator/access/policy.ts): the allow-list is X402M_FACILITATOR_PAYEES
 * and `options.payees`; an open facilitator beyond loopback that `--open` did not ask for is refused with
 * a ConfigError (exit 2) before it listens.
 */
export async function startFacilitatorService(
  config: Config,
  options: FacilitatorServiceOptions,
  lifecycle: Lifecycle,
  limit?: UnpaidLimit,
): Promise<FacilitatorService> {
  const db = await openDatabase({
    pgliteDir: dataLayout(config.dataDir).pglite.facilitator,
    databaseUrl: config.databaseUrl,
  });
  lifecycle.add("facilitator database", () => db.close());
  // Migrated here first (createFacilitator's own pass is then a no-op): the keys decide the access.
  await migrate(db, "facilitator", FACILITATOR_MIGRATIONS);
  const keys = await countLiveKeys(db);
  const inProcessPayees = options.payees ?? [];
  const decided = decideOpen({
    host: config.host,
    // A chain's own payees count as an allow-list too: with them a loopback facilitator is not open.
    configuredPayees: [
      ...config.facilitatorPayees,
      ...(options.chainPayees ?? []),
      ...(options.more ?? []).flatMap((c) => c.payees ?? []),
    ],
    inProcessPayees,
    liveKeys: keys,
    open: options.open ?? false,
    behindProxy: config.unpaidLimit.trustedProxies.length > 0,
  });
  if ("refused" in decided) throw new ConfigError(decided.refused);
  if (decided.open && !isLoopback(config.host)) {
    log("warn", "open facilitator beyond loopback: anyone who reaches it can make it pay gas for any payee", {
      host: config.host,
    });
  }
  const chainOf = (chain: FacilitatorChainOptions) =>
    createFacilitator({
      db,
      rpc: chain.rpc,
      privateKey: chain.privateKey,
      chain: chain.chain,
      assets: chain.assets,
      onNewChain: options.onNewChain,
      // The devnet's and the demo's own interval, else X402M_FACILITATOR_POLL_MS (default 500).
      pollingIntervalMs: options.pollingIntervalMs ?? config.facilitatorPollMs,
      // A merchant of another process with its own authorizer key names that key in its channels: the
      // operator says whose it is here, or its deposits are refused as unclaimable.
      channelAuthorizers: config.facilitatorChannelAuthorizers,
      builderCode: config.facilitatorBuilderCode ?? undefined,
      // X402M_FACILITATOR_GROUP_SETTLEMENTS (default off): exact EIP-3009 settlements that become ready while
      // one of its transactions is in flight go together into the next (docs/facilitator.md).
      groupSettlements: config.facilitatorGroupSettlements,
      access: {
        open: decided.open,
        payees: [
          ...config.facilitatorPayees,
          ...inProcessPayees,
          ...((chain === options ? options.chainPayees : chain.payees) ?? []),
        ],
        loopbackAuthority: options.loopbackAuthority,
      },
    });
  const chains = options.solana?.only ? [] : [options, ...(options.more ?? [])];
  const each: Facilitator[] = [];
  for (const chain of chains) {
    const made = await chainOf(chain);
    each.push(made);
    lifecycle.add("facilitator settlements", () => made.close());
  }
  const readiness = chains.map((chain, i) => chainReadiness(chain.rpc, (each[i] as Facilitator).address));
  if (options.solana) {
    // Loaded only when Solana is configured: its SDK and kit are for this facilitator alone.
    const { createSvmFacilitator } = await import("../facilitator/svm/facilitator.ts");
    const made = await createSvmFacilitator({
      db,
      rpc: options.solana.rpc,
      feePayerKey: options.solana.feePayerKey,
      pollingIntervalMs: options.pollingIntervalMs,
      access: {
        open: decided.open,
        payees: [...config.facilitatorPayees, ...inProcessPayees],
      },
    });
    each.push(made);
    readiness.push(svmReadiness(options.solana.rpc, made.address));
    lifecycle.add("facilitator settlements", () => made.close());
  }
  const facilitator = facilitatorOfChains(each);
  // Its /readyz asks each chain too: the node answers, the signer has gas money (the first's routes answer it).
  readiness.forEach((checks, i) => {
    const slug =
      i === 0
        ? undefined
        : i >= chains.length
          ? "solana"
          : ((chains[i] as FacilitatorChainOptions).slug ?? `chain${i}`);
    addReadinessChecks(
      (each[0] as Facilitator).app,
      slug
        ? Object.fromEntries(Object.entries(checks).map(([name, check]) => [`${slug}_${name}`, check]))
        : checks,
    );
  });
  // The free routes under the unpaid limit; /verify and /settle answer to their keys instead.
  // `/metrics` too, with the operator's token when one is set.
  const limited = limitPaths(facilitator.app.fetch, limit, ["/supported", "/discovery/resources"]);
  // On PGlite, `facilitator keys` cannot open the database while this process holds it: it asks here.
  const admin = config.databaseUrl ? undefined : withKeyAdmin(limited, db);
  const fetch = withMetrics(admin?.fetch ?? limited, config.metrics.token);
  const server = await listenOn("facilitator", fetch, config.host, config.ports.facilitator);
  if (admin) {
    const local = isLoopback(config.host) || ["0.0.0.0", "::", "[::]"].includes(config.host);
    const remove = writeAdminRecord(config.dataDir, {
      pid: process.pid,
      url: local ? `http://127.0.0.1:${server.port}` : server.url,
      token: admin.token,
    });
    lifecycle.add("facilitator admin record", () => remove());
  }
  // Not `addServer`: merchant hosts of this process settle through it until their last request is
  // answered, so it takes connections until its turn to close, after theirs.
  lifecycle.add("facilitator http", () => server.close());
  return {
    url: server.url,
    facilitator,
    access: { open: decided.open, payees: facilitator.gate.payees, keys },
  };
}
