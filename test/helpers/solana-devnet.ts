/**
 * What the tests on the local Solana do the same way: a key pair from the devnet's base58 secret key, and an
 * owner opening its own USDC account with an ordinary associated-token-account transaction, as on mainnet
 * (airdropped SOL pays for it): `exact` moves USDC into that account and does not create it.
 */
import {
  type Address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  type KeyPairSigner,
  pipe,
  type Rpc,
  type SolanaRpcApi,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getCreateAssociatedTokenIdempotentInstructionAsync } from "@solana-program/token";
import { SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";
import { LAMPORTS_PER_SOL } from "../../src/chain/solana/devnet/index.ts";

/** The signer of a base58 64-byte key pair, as `devnet --chain solana` prints them. */
export const signerOf = (secretKey: string): Promise<KeyPairSigner> =>
  createKeyPairSignerFromBytes(getBase58Encoder().encode(secretKey));

/** `owner` opens its USDC account, paying with 0.1 SOL airdropped first; the airdrop's signature. */
export async function openUsdcAccount(rpc: Rpc<SolanaRpcApi>, owner: KeyPairSigner): Promise<string> {
  const airdrop = await rpc.requestAirdrop(owner.address, (LAMPORTS_PER_SOL / 10n) as never).send();
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const open = await pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(owner, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
    async (tx) =>
      appendTransactionMessageInstruction(
        await getCreateAssociatedTokenIdempotentInstructionAsync({
          payer: owner,
          owner: owner.address,
          mint: SOLANA_USDC_MINT as Address,
        }),
        tx,
      ),
  );
  const signed = await signTransactionMessageWithSigners(open);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
  return airdrop;
}
