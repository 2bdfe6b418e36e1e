import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";

/** An Ed25519 key pair as Solana keeps one: `secretKey` is the 32-byte seed then the 32-byte public key. */
export interface SolanaKeyPair {
  address: string;
  publicKey: Uint8Array;
  secretKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

// PKCS#8's wrapping of a raw Ed25519 seed (RFC 8410): Node's crypto takes keys in DER, not as bare seeds.
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

export function keyPairFromSeed(seed: Uint8Array): SolanaKeyPair {
  if (seed.length !== 32) throw new Error(`an Ed25519 seed is 32 bytes, not ${seed.length}`);
  const privateKey: KeyObject = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const publicKey = new Uint8Array(
    createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(-32),
  );
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  return {
    address: base58(publicKey),
    publicKey,
    secretKey,
    sign: (message) => new Uint8Array(sign(null, message, privateKey)),
  };
}

/**
 * The devnet's keys follow from their role and number, as the EVM devnet's follow from its public mnemonic: the
 * same buyers every start, so a demo's configuration and a saved world keep working. They guard nothing real.
 */
export function devnetKeyPair(role: string, index = 0): SolanaKeyPair {
  return keyPairFromSeed(
    createHash("sha256").update(`x402-merchants solana devnet ${role} ${index}`).digest(),
  );
}

export function base58(bytes: Uint8Array): string {
  return getBase58Decoder().decode(bytes);
}
