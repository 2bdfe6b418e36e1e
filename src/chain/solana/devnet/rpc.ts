import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from "../constants.ts";
import type { SolanaChain } from "./chain.ts";
import { transactionErrorMessage } from "./errors.ts";
import { base58 } from "./keys.ts";
import { decodeMint, decodeTokenAccount, uiTokenAmount } from "./layouts.ts";
import { feeOf, type Landed } from "./ledger.ts";
import {
  type AccountEncoding,
  renderAccount,
  renderInner,
  renderLanded,
  type TransactionEncoding,
} from "./render.ts";
import { COMMITMENTS, type Config, invalidParams, Params, RpcError } from "./rpc-params.ts";
import { decodeMessage, fromBase58, WireError } from "./wire.ts";

/** The genesis hash of mainnet-beta: the devnet plays mainnet, whose CAIP-2 id is this hash's first 32 characters. */
export const MAINNET_GENESIS_HASH = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";

const ACCOUNT_ENCODINGS = ["base64", "base58", "jsonParsed"] as const;
const TRANSACTION_ENCODINGS = ["json", "jsonParsed", "base64", "base58"] as const;
const WIRE_ENCODINGS = ["base58", "base64"] as const;
const MAX_ACCOUNTS = 100;
const MAX_SIGNATURES = 256;
const MAX_SIGNATURE_PAGE = 1000;
/** Mainnet's epoch length; the devnet never leaves epoch 0. */
const SLOTS_PER_EPOCH = 432_000n;

type Method = (params: Params, chain: SolanaChain) => unknown;

/**
 * The JSON-RPC methods the devnet answers, each in the validator's shapes (https://solana.com/docs/rpc): the ones
 * the SDK's `exact` client and facilitator call, and the ones our facilitator and indexer read. A commitment is
 * accepted and checked but changes nothing: one node, no forks, every landed transaction final at once.
 */
export const METHODS: Record<string, Method> = {
  getHealth: () => "ok",
  getVersion: () => ({ "feature-set": 0, "solana-core": "litesvm-1.5.0" }),
  getGenesisHash: () => MAINNET_GENESIS_HASH,
  getSlot: (params, chain) => checked(params, 0, () => chain.ledger.slot),
  getBlockHeight: (params, chain) => checked(params, 0, () => chain.ledger.blockHeight),
  getLatestBlockhash: (params, chain) =>
    checked(params, 0, () => withContext(chain, chain.ledger.latestBlockhash())),
  isBlockhashValid: (params, chain) =>
    checked(params, 1, () =>
      withContext(chain, chain.ledger.isBlockhashValid(params.string(0, "blockhash"))),
    ),
  getBalance: (params, chain) =>
    checked(params, 1, () =>
      withContext(chain, chain.ledger.account(params.address(0, "address"))?.lamports() ?? 0n),
    ),
  getMinimumBalanceForRentExemption: (params, chain) =>
    chain.ledger.svm.minimumBalanceForRentExemption(params.integer(0, "data length")),
  getAccountInfo: (params, chain) => {
    const address = params.address(0, "address");
    const encoding = accountEncoding(params.config(1));
    return withContext(chain, accountOrNull(chain, address, encoding));
  },
  getMultipleAccounts: (params, chain) => {
    const list = params.stringList(0, "addresses", MAX_ACCOUNTS);
    const addresses = new Params(list);
    const encoding = accountEncoding(params.config(1));
    const value = list.map((_, index) => accountOrNull(chain, addresses.address(index, "address"), encoding));
    return withContext(chain, value);
  },
  getProgramAccounts: (params, chain) => {
    const program = params.address(0, "program id");
    const config = params.config(1);
    const encoding = accountEncoding(config);
    const filters = programFilters(config);
    const found = chain.ledger.svm
      .getProgramAccounts(fromBase58(program))
      // account() is a native method: called on its object, never destructured.
      .filter((item) => filters.every((keep) => keep(item.account().data())))
      .map((item) => ({
        account: renderAccount(item.account(), encoding, mintOf(chain)),
        pubkey: base58(item.address),
      }));
    return config.flag("withContext", false) ? withContext(chain, found) : found;
  },
  getTokenAccountsByOwner: (params, chain) => {
    const owner = params.address(0, "owner");
    const filter = params.object(1, "filter");
    const encoding = accountEncoding(params.config(2));
    const byMint = typeof filter.mint === "string" ? new Params([filter.mint]).address(0, "mint") : undefined;
    const byProgram =
      typeof filter.programId === "string"
        ? new Params([filter.programId]).address(0, "programId")
        : undefined;
    if (!byMint === !byProgram) throw invalidParams("the filter must give a mint or a programId");
    const programs = byProgram ? [byProgram] : [SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM];
    const value = programs.flatMap((program) =>
      chain.ledger.svm.getProgramAccounts(fromBase58(program)).flatMap((item) => {
        const account = item.account();
        const state = decodeTokenAccount(account.data());
        if (!state || state.owner !== owner || (byMint && state.mint !== byMint)) return [];
        return [{ account: renderAccount(account, encoding, mintOf(chain)), pubkey: base58(item.address) }];
      }),
    );
    return withContext(chain, value);
  },
  getTokenAccountBalance: (params, chain) => {
    const account = chain.ledger.account(params.address(0, "token account"));
    const state = account ? decodeTokenAccount(account.data()) : null;
    if (!account || !state) throw invalidParams("not a Token account");
    const mintData = chain.ledger.account(state.mint)?.data();
    return withContext(
      chain,
      uiTokenAmount(state.amount, mintData ? (decodeMint(mintData)?.decimals ?? 0) : 0),
    );
  },
  getSignatureStatuses: (params, chain) => {
    const signatures = params.stringList(0, "signatures", MAX_SIGNATURES);
    return withContext(
      chain,
      signatures.map((signature) => {
        const landed = chain.ledger.transaction(signature);
        if (!landed) return null;
        const { err } = landed.meta;
        return {
          confirmationStatus: "finalized",
          confirmations: null,
          err,
          slot: landed.slot,
          status: err === null ? { Ok: null } : { Err: err },
        };
      }),
    );
  },
  getSignaturesForAddress: (params, chain) => signaturesForAddress(params, chain),
  getTransaction: (params, chain) => {
    const signature = params.string(0, "signature");
    const config = params.config(1);
    const encoding = config.oneOf<TransactionEncoding>("encoding", TRANSACTION_ENCODINGS, "json");
    const maxVersion = config.optionalInteger("maxSupportedTransactionVersion");
    if (config.oneOf("commitment", COMMITMENTS, "finalized") === "processed") {
      throw invalidParams("Method does not support commitment below `confirmed`");
    }
    const landed = chain.ledger.transaction(signature);
    if (!landed) return null;
    if (landed.tx.version === 0 && maxVersion === undefined) {
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    return renderLanded(landed, encoding);
  },
  getBlockTime: (params, chain) => {
    const slot = params.integer(0, "slot");
    const time = chain.ledger.blockTime(slot);
    if (time !== undefined) return time;
    if (slot > chain.ledger.slot) throw new RpcError(-32004, `Block not available for slot ${slot}`);
    throw new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  },
  getEpochInfo: (params, chain) =>
    checked(params, 0, () => ({
      absoluteSlot: chain.ledger.slot,
      blockHeight: chain.ledger.blockHeight,
      epoch: 0,
      slotIndex: chain.ledger.slot,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: chain.ledger.transactionCount,
    })),
  getFeeForMessage: (params, chain) => {
    const message = new Uint8Array(Buffer.from(params.string(0, "message"), "base64"));
    commitment(params.config(1));
    return guardWire(() => withContext(chain, feeOf(decodeMessage(message))));
  },
  sendTransaction: (params, chain) => sendTransaction(params, chain),
  simulateTransaction: (params, chain) => simulateTransaction(params, chain),
  requestAirdrop: (params, chain) => {
    const address = params.address(0, "address");
    const lamports = params.integer(1, "lamports");
    const sent = chain.airdrop(address, lamports);
    if ("dropped" in sent)
      throw new RpcError(
        -32002,
        `Transaction simulation failed: ${transactionErrorMessage(sent.dropped.err)}`,
      );
    return sent.landed.signature;
  },
};

function withContext<T>(chain: SolanaChain, value: T) {
  return { context: { apiVersion: "2.2.0", slot: chain.ledger.slot }, value };
}

/** `value()` once the configuration at `index` (its commitment) is found valid. */
function checked<T>(params: Params, index: number, value: () => T): T {
  commitment(params.config(index));
  return value();
}

function commitment(config: Config): void {
  config.oneOf("commitment", COMMITMENTS, "finalized");
}

function accountEncoding(config: Config): AccountEncoding {
  commitment(config);
  return config.oneOf<AccountEncoding>("encoding", ACCOUNT_ENCODINGS, "base58");
}

const mintOf = (chain: SolanaChain) => (mint: string) => chain.ledger.account(mint);

function accountOrNull(chain: SolanaChain, address: string, encoding: AccountEncoding) {
  const account = chain.ledger.account(address);
  // An account with no lamports does not exist, whatever litesvm keeps for it.
  if (!account || account.lamports() === 0n) return null;
  return renderAccount(account, encoding, mintOf(chain));
}

function programFilters(config: Config): ((data: Uint8Array) => boolean)[] {
  const filters = config.values.filters;
  if (filters === undefined || filters === null) return [];
  if (!Array.isArray(filters)) throw invalidParams("filters must be a list");
  return filters.map((filter) => {
    if (typeof filter?.dataSize === "number") return (data: Uint8Array) => data.length === filter.dataSize;
    const memcmp = filter?.memcmp;
    if (typeof memcmp?.offset !== "number" || typeof memcmp?.bytes !== "string") {
      throw invalidParams("a filter is {dataSize} or {memcmp: {offset, bytes}}");
    }
    const bytes =
      memcmp.encoding === "base64"
        ? new Uint8Array(Buffer.from(memcmp.bytes, "base64"))
        : fromBase58(memcmp.bytes);
    return (data: Uint8Array) => bytes.every((byte, i) => data[memcmp.offset + i] === byte);
  });
}

function signaturesForAddress(params: Params, chain: SolanaChain) {
  const address = params.address(0, "address");
  const config = params.config(1);
  commitment(config);
  const limit = config.optionalInteger("limit") ?? MAX_SIGNATURE_PAGE;
  if (limit < 1 || limit > MAX_SIGNATURE_PAGE)
    throw invalidParams(`limit must be from 1 to ${MAX_SIGNATURE_PAGE}`);
  const before = config.optionalString("before");
  const until = config.optionalString("until");
  // Newest first, as the validator pages: start below `before`, stop at `until` (neither included).
  const signatures = [...chain.ledger.signaturesOf(address)].reverse();
  let start = 0;
  if (before !== undefined) {
    const at = signatures.indexOf(before);
    if (at < 0) throw invalidParams("before: not a signature of this address");
    start = at + 1;
  }
  const page: ReturnType<typeof signatureInfo>[] = [];
  for (const signature of signatures.slice(start)) {
    if (signature === until || page.length === limit) break;
    page.push(signatureInfo(chain.ledger.transaction(signature) as Landed));
  }
  return page;
}

function signatureInfo(landed: Landed) {
  return {
    blockTime: landed.blockTime,
    confirmationStatus: "finalized",
    err: landed.meta.err,
    memo: memoOf(landed),
    signature: landed.signature,
    slot: landed.slot,
  };
}

/** The memos of a transaction as the validator sums them up: "[length] text", several joined by "; ". */
function memoOf(landed: Landed): string | null {
  const memos = landed.tx.instructions
    .filter((instruction) => (landed.tx.accountKeys[instruction.programIdIndex] ?? "").startsWith("Memo"))
    .map((instruction) => `[${instruction.data.length}] ${new TextDecoder().decode(instruction.data)}`);
  return memos.length > 0 ? memos.join("; ") : null;
}

function wireBytes(params: Params, config: Config): Uint8Array {
  const text = params.string(0, "transaction");
  const encoding = config.oneOf("encoding", WIRE_ENCODINGS, "base58");
  if (encoding === "base58") return fromBase58(text);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw invalidParams("transaction: not base64");
  return new Uint8Array(Buffer.from(text, "base64"));
}

/**
 * `sendTransaction`: with preflight (the default) a transaction that would fail is refused with the
 * simulation's error and never sent, as the validator does. With `skipPreflight` a transaction that runs and
 * fails lands as a failure, its fee paid; one no block would take (bad signature, unknown blockhash, already
 * processed) is refused at once here, where a validator would accept it and let it never confirm.
 */
function sendTransaction(params: Params, chain: SolanaChain): string {
  const config = params.config(1);
  const bytes = wireBytes(params, config);
  config.oneOf("preflightCommitment", COMMITMENTS, "finalized");
  return guardWire(() => {
    if (!config.flag("skipPreflight", false)) {
      const preflight = chain.ledger.simulate(bytes, { sigVerify: true, replaceRecentBlockhash: false });
      if (preflight.err !== null) {
        throw new RpcError(
          -32002,
          `Transaction simulation failed: ${transactionErrorMessage(preflight.err)}`,
          {
            accounts: null,
            err: preflight.err,
            innerInstructions: null,
            logs: preflight.logs,
            returnData: null,
            unitsConsumed: preflight.unitsConsumed,
          },
        );
      }
    }
    const sent = chain.ledger.send(bytes);
    if ("landed" in sent) return sent.landed.signature;
    const { err, logs } = sent.dropped;
    throw new RpcError(-32002, `Transaction simulation failed: ${transactionErrorMessage(err)}`, {
      accounts: null,
      err,
      innerInstructions: null,
      logs,
      returnData: null,
      unitsConsumed: 0,
    });
  });
}

function simulateTransaction(params: Params, chain: SolanaChain) {
  const config = params.config(1);
  const bytes = wireBytes(params, config);
  commitment(config);
  const sigVerify = config.flag("sigVerify", false);
  const replaceRecentBlockhash = config.flag("replaceRecentBlockhash", false);
  if (sigVerify && replaceRecentBlockhash)
    throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
  const wantInner = config.flag("innerInstructions", false);
  if (config.values.accounts !== undefined && config.values.accounts !== null) {
    throw invalidParams("accounts: returning accounts after simulation is not supported by this devnet");
  }
  return guardWire(() => {
    const result = chain.ledger.simulate(bytes, { sigVerify, replaceRecentBlockhash });
    const tx = chain.decode(bytes);
    return withContext(chain, {
      accounts: null,
      err: result.err,
      innerInstructions: wantInner ? renderInner(tx, result.innerInstructions, true) : null,
      logs: result.logs,
      ...(result.replacementBlockhash ? { replacementBlockhash: result.replacementBlockhash } : {}),
      returnData: result.returnData
        ? {
            data: [Buffer.from(result.returnData.data).toString("base64"), "base64"],
            programId: result.returnData.programId,
          }
        : null,
      unitsConsumed: result.unitsConsumed,
    });
  });
}

/** Bytes that are no transaction are the caller's bad parameter, as the validator says of them. */
function guardWire<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof WireError)
      throw invalidParams(`failed to deserialize the transaction: ${error.message}`);
    throw error;
  }
}
