/**
 * The devnet's accounts: keys of anvil's public test mnemonic, derived at anvil's own path, so a wallet
 * that knows the mnemonic knows them too.
 */
import crypto from "node:crypto";
import { type Address, type Hex, toHex } from "viem";
import { HDKey, privateKeyToAccount } from "viem/accounts";
import { DevnetError } from "./devnet-errors.ts";

/** A funded key pair. The keys are anvil's well-known test keys: never use them on a real chain. */
export interface DevnetAccount {
  address: Address;
  privateKey: Hex;
}

/** The accounts a devnet funds: the token's owner, the facilitator's signer and the buyers. */
export interface DevnetAccounts {
  owner: DevnetAccount;
  facilitatorAccount: DevnetAccount;
  buyers: DevnetAccount[];
}

/** anvil's default test mnemonic: its keys are public, which is what a devnet wants. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";
/** Derivation indices: 0 owns the token, 1 is the facilitator signer, 2 onwards are the buyers. */
const OWNER_INDEX = 0;
const FACILITATOR_INDEX = 1;
const FIRST_BUYER_INDEX = 2;

/** The owner, the facilitator's signer and `buyerCount` buyers. */
export function devnetAccounts(buyerCount: number): DevnetAccounts {
  return {
    owner: derive(OWNER_INDEX),
    facilitatorAccount: derive(FACILITATOR_INDEX),
    buyers: Array.from({ length: buyerCount }, (_, i) => derive(FIRST_BUYER_INDEX + i)),
  };
}

let masterKey: HDKey | undefined;

/** Account `index` of the devnet mnemonic at anvil's derivation path m/44'/60'/0'/0/index. */
export function derive(index: number): DevnetAccount {
  // BIP-39 seed = PBKDF2-HMAC-SHA512(mnemonic, "mnemonic", 2048 rounds): native and computed once,
  // instead of once per account as viem's mnemonicToAccount would.
  masterKey ??= HDKey.fromMasterSeed(
    crypto.pbkdf2Sync(DEVNET_MNEMONIC.normalize("NFKD"), "mnemonic", 2048, 64, "sha512"),
  );
  const key = masterKey.derive(`m/44'/60'/0'/0/${index}`).privateKey;
  if (!key) throw new DevnetError(`cannot derive account ${index}`);
  const privateKey = toHex(key);
  return { address: privateKeyToAccount(privateKey).address, privateKey };
}
