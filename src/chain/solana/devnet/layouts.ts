import { getAddressEncoder } from "@solana/kit";
import { base58 } from "./keys.ts";

/**
 * The SPL Token program's two account layouts (its `state.rs`, the same in Token-2022 before extensions): the
 * devnet writes USDC's mint and the buyers' accounts in them directly, and reads every token account back for
 * `jsonParsed` answers and a transaction's token balances.
 */
export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;

export interface MintState {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  freezeAuthority: string | null;
}

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  /** 0 uninitialized, 1 initialized, 2 frozen. */
  state: number;
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
}

const addressBytes = (address: string) => new Uint8Array(getAddressEncoder().encode(address as never));

export function encodeMint(mint: MintState): Uint8Array {
  const data = new Uint8Array(MINT_SIZE);
  const view = new DataView(data.buffer);
  writeOptionKey(data, 0, mint.mintAuthority);
  view.setBigUint64(36, mint.supply, true);
  data[44] = mint.decimals;
  data[45] = 1; // initialized
  writeOptionKey(data, 46, mint.freezeAuthority);
  return data;
}

export function decodeMint(data: Uint8Array): MintState | null {
  if (data.length < MINT_SIZE || data[45] !== 1) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mintAuthority: readOptionKey(data, 0),
    supply: view.getBigUint64(36, true),
    decimals: data[44] ?? 0,
    freezeAuthority: readOptionKey(data, 46),
  };
}

export function encodeTokenAccount(
  account: Pick<TokenAccountState, "mint" | "owner" | "amount">,
): Uint8Array {
  const data = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  const view = new DataView(data.buffer);
  data.set(addressBytes(account.mint), 0);
  data.set(addressBytes(account.owner), 32);
  view.setBigUint64(64, account.amount, true);
  data[108] = 1; // initialized; no delegate, not native, no close authority
  return data;
}

/** A token account's state, or null for any other data (a mint's 82 bytes, a multisig's 355). */
export function decodeTokenAccount(data: Uint8Array): TokenAccountState | null {
  if (data.length < TOKEN_ACCOUNT_SIZE || data.length === 355 || data[108] === 0) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const native = view.getUint32(109, true) === 1 ? view.getBigUint64(113, true) : null;
  return {
    mint: base58(data.subarray(0, 32)),
    owner: base58(data.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
    delegate: readOptionKey(data, 72),
    state: data[108] ?? 0,
    isNative: native,
    delegatedAmount: view.getBigUint64(121, true),
    closeAuthority: readOptionKey(data, 129),
  };
}

function writeOptionKey(data: Uint8Array, offset: number, key: string | null): void {
  if (key === null) return;
  new DataView(data.buffer, data.byteOffset).setUint32(offset, 1, true);
  data.set(addressBytes(key), offset + 4);
}

function readOptionKey(data: Uint8Array, offset: number): string | null {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return view.getUint32(offset, true) === 1 ? base58(data.subarray(offset + 4, offset + 36)) : null;
}

/** Token amounts as the RPC prints them: `uiAmount` a float, `uiAmountString` exact. */
export function uiTokenAmount(amount: bigint, decimals: number) {
  const text = amount.toString().padStart(decimals + 1, "0");
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, "");
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}
