import type { Account } from "litesvm/dist/internal.js";
import { ASSOCIATED_TOKEN_PROGRAM, SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from "../constants.ts";
import { base58 } from "./keys.ts";
import { decodeMint, decodeTokenAccount, uiTokenAmount } from "./layouts.ts";
import type { ExecutionMeta, InnerInstructions, Landed, TokenBalance } from "./ledger.ts";
import { isSigner, isWritable, type WireTransaction } from "./wire.ts";

/**
 * The devnet's state in Solana's JSON-RPC shapes (https://solana.com/docs/rpc): accounts in `base64`, `base58`
 * or `jsonParsed`, transactions in `json`, `jsonParsed`, `base64` or `base58`. u64 values stay bigints here;
 * the server prints them as JSON numbers, as the validator does (`rentEpoch` is 2^64-1).
 */

export type AccountEncoding = "base64" | "base58" | "base64+zstd" | "jsonParsed";
export type TransactionEncoding = "json" | "jsonParsed" | "base64" | "base58";

const RENT_EXEMPT_EPOCH = 18_446_744_073_709_551_615n;
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const MEMO_PROGRAMS = new Set([
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
]);

/** An account as `getAccountInfo` gives it; `mintOf` reads a token account's mint for its decimals. */
export function renderAccount(
  account: Account,
  encoding: AccountEncoding,
  mintOf: (mint: string) => Account | null,
) {
  const data = account.data();
  const owner = base58(account.owner());
  return {
    data: renderData(data, owner, encoding, mintOf),
    executable: account.executable(),
    lamports: account.lamports(),
    owner,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: data.length,
  };
}

function renderData(
  data: Uint8Array,
  owner: string,
  encoding: AccountEncoding,
  mintOf: (mint: string) => Account | null,
) {
  if (encoding === "base58") return [base58(data), "base58"];
  if (encoding === "jsonParsed") {
    const parsed = parseTokenData(data, owner, mintOf);
    if (parsed)
      return {
        parsed,
        program: owner === TOKEN_2022_PROGRAM ? "spl-token-2022" : "spl-token",
        space: data.length,
      };
  }
  // jsonParsed falls back to base64 for data it cannot parse, as the validator does.
  return [Buffer.from(data).toString("base64"), "base64"];
}

function parseTokenData(data: Uint8Array, owner: string, mintOf: (mint: string) => Account | null) {
  if (owner !== SPL_TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) return null;
  const token = decodeTokenAccount(data);
  if (token) {
    const mintData = mintOf(token.mint)?.data();
    const decimals = mintData ? (decodeMint(mintData)?.decimals ?? 0) : 0;
    const info: Record<string, unknown> = {
      isNative: token.isNative !== null,
      mint: token.mint,
      owner: token.owner,
      state: token.state === 2 ? "frozen" : "initialized",
      tokenAmount: uiTokenAmount(token.amount, decimals),
    };
    if (token.delegate) {
      info.delegate = token.delegate;
      info.delegatedAmount = uiTokenAmount(token.delegatedAmount, decimals);
    }
    if (token.closeAuthority) info.closeAuthority = token.closeAuthority;
    return { info, type: "account" };
  }
  const mint = decodeMint(data);
  if (mint) {
    return {
      info: {
        decimals: mint.decimals,
        freezeAuthority: mint.freezeAuthority,
        isInitialized: true,
        mintAuthority: mint.mintAuthority,
        supply: mint.supply.toString(),
      },
      type: "mint",
    };
  }
  return null;
}

/** `getTransaction`'s answer for a landed transaction. */
export function renderLanded(landed: Landed, encoding: TransactionEncoding) {
  const { tx } = landed;
  return {
    blockTime: landed.blockTime,
    meta: renderMeta(tx, landed.meta, encoding === "jsonParsed"),
    slot: landed.slot,
    transaction: renderTransaction(tx, encoding),
    version: tx.version,
  };
}

function renderTransaction(tx: WireTransaction, encoding: TransactionEncoding) {
  if (encoding === "base64") return [Buffer.from(tx.bytes).toString("base64"), "base64"];
  if (encoding === "base58") return [base58(tx.bytes), "base58"];
  const parsed = encoding === "jsonParsed";
  const message: Record<string, unknown> = {
    accountKeys: parsed
      ? tx.accountKeys.map((pubkey, index) => ({
          pubkey,
          signer: isSigner(tx, index),
          source: "transaction",
          writable: isWritable(tx, index),
        }))
      : tx.accountKeys,
    ...(parsed ? {} : { header: tx.header }),
    instructions: tx.instructions.map((instruction) =>
      parsed ? parsedInstruction(tx, instruction, null) : compiledInstruction(instruction, null),
    ),
    recentBlockhash: tx.recentBlockhash,
  };
  if (tx.version === 0) message.addressTableLookups = [];
  return { message, signatures: tx.signatures };
}

function renderMeta(tx: WireTransaction, meta: ExecutionMeta, parsed: boolean) {
  const tokenBalance = (balance: TokenBalance) => ({
    accountIndex: balance.accountIndex,
    mint: balance.mint,
    owner: balance.owner,
    programId: balance.programId,
    uiTokenAmount: uiTokenAmount(balance.amount, balance.decimals),
  });
  return {
    computeUnitsConsumed: meta.computeUnitsConsumed,
    err: meta.err,
    fee: meta.fee,
    innerInstructions: renderInner(tx, meta.innerInstructions, parsed),
    loadedAddresses: { readonly: [], writable: [] },
    logMessages: meta.logMessages,
    postBalances: meta.postBalances,
    postTokenBalances: meta.postTokenBalances.map(tokenBalance),
    preBalances: meta.preBalances,
    preTokenBalances: meta.preTokenBalances.map(tokenBalance),
    ...(meta.returnData
      ? {
          returnData: {
            data: [Buffer.from(meta.returnData.data).toString("base64"), "base64"],
            programId: meta.returnData.programId,
          },
        }
      : {}),
    rewards: [],
    status: meta.err === null ? { Ok: null } : { Err: meta.err },
  };
}

/** Inner instructions as the RPC lists them (`simulateTransaction` gives them parsed, as jsonParsed does). */
export function renderInner(tx: WireTransaction, inner: InnerInstructions[], parsed: boolean) {
  return inner.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((instruction) =>
      parsed
        ? parsedInstruction(tx, instruction, instruction.stackHeight)
        : compiledInstruction(instruction, instruction.stackHeight),
    ),
  }));
}

type Instruction = WireTransaction["instructions"][number];

function compiledInstruction(instruction: Instruction, stackHeight: number | null) {
  return {
    accounts: instruction.accounts,
    data: base58(instruction.data),
    programIdIndex: instruction.programIdIndex,
    stackHeight,
  };
}

/** An instruction as jsonParsed shows it: decoded for the programs x402 uses, else its accounts and data. */
function parsedInstruction(tx: WireTransaction, instruction: Instruction, stackHeight: number | null) {
  const programId = tx.accountKeys[instruction.programIdIndex] as string;
  const accounts = instruction.accounts.map((index) => tx.accountKeys[index] as string);
  const decoded = parseKnown(programId, accounts, instruction.data);
  if (decoded) return { ...decoded, programId, stackHeight };
  return { accounts, data: base58(instruction.data), programId, stackHeight };
}

function parseKnown(
  programId: string,
  accounts: string[],
  data: Uint8Array,
): { program: string; parsed: unknown } | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (MEMO_PROGRAMS.has(programId)) return { parsed: new TextDecoder().decode(data), program: "spl-memo" };
  if (programId === SYSTEM_PROGRAM && data.length === 12 && view.getUint32(0, true) === 2) {
    const [source, destination] = accounts;
    return {
      parsed: { info: { destination, lamports: view.getBigUint64(4, true), source }, type: "transfer" },
      program: "system",
    };
  }
  if (programId === SPL_TOKEN_PROGRAM || programId === TOKEN_2022_PROGRAM) {
    const program = programId === SPL_TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
    if (data[0] === 12 && data.length >= 10) {
      const [source, mint, destination, authority] = accounts;
      const tokenAmount = uiTokenAmount(view.getBigUint64(1, true), data[9] ?? 0);
      return {
        parsed: { info: { authority, destination, mint, source, tokenAmount }, type: "transferChecked" },
        program,
      };
    }
    if (data[0] === 3 && data.length >= 9) {
      const [source, destination, authority] = accounts;
      return {
        parsed: {
          info: { amount: view.getBigUint64(1, true).toString(), authority, destination, source },
          type: "transfer",
        },
        program,
      };
    }
  }
  if (programId === ASSOCIATED_TOKEN_PROGRAM && (data.length === 0 || data[0] === 0 || data[0] === 1)) {
    const [source, account, wallet, mint, systemProgram, tokenProgram] = accounts;
    const type = data[0] === 1 ? "createIdempotent" : "create";
    return {
      parsed: { info: { account, mint, source, systemProgram, tokenProgram, wallet }, type },
      program: "spl-associated-token-account",
    };
  }
  return null;
}
