/**
 * What the tests on the local Solana do the same way: a key pair from the devnet's base58 secret key, an
 * owner opening its own USDC account with an ordinary associated-token-account transaction, as on mainnet
 * (airdropped SOL pays for it): `exact` moves USDC into that account and does not create it; a fresh wallet
 * holding a given amount of USDC, sent by an ordinary transfer; and a wallet holding USDC and no SOL at all, whose
 * USDC account another opened for it, as a wallet that was only ever sent USDC.
 */
import {
  type Address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  generateKeyPairSigner,
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
import {
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import { SOLANA_USDC_DECIMALS, SOLANA_USDC_MINT } from "../../src/chain/solana/constants.ts";
import { LAMPORTS_PER_SOL, usdcAccountOf } from "../../src/chain/solana/devnet/index.ts";

/** The signer of a base58 64-byte key pair, as `devnet --chain solana` prints them. */
export const signerOf = (secretKey: string): Promise<KeyPairSigner> =>
  createKeyPairSignerFromBytes(getBase58Encoder().encode(secretKey));

/** `owner` opens its USDC account, paying with 0.1 SOL airdropped first; the airdrop's signature. */
export async function openUsdcAccount(rpc: Rpc<SolanaRpcApi>, owner: KeyPairSigner): Promise<string> {
  const airdrop = await rpc.requestAirdrop(owner.address, (LAMPORTS_PER_SOL / 10n) as never).send();
  await send(
    rpc,
    owner,
    await getCreateAssociatedTokenIdempotentInstructionAsync({
      payer: owner,
      owner: owner.address,
      mint: SOLANA_USDC_MINT as Address,
    }),
  );
  return airdrop;
}

/**
 * A wallet whose USDC account holds `amount` (atomic), sent from `funder`'s by a `TransferChecked`: `wallet`, or a
 * fresh one. It opens its account itself, so it holds some of the 0.1 SOL airdropped for that.
 */
export async function walletHolding(
  rpc: Rpc<SolanaRpcApi>,
  funder: KeyPairSigner,
  amount: bigint,
  wallet?: KeyPairSigner,
): Promise<KeyPairSigner> {
  const holder = wallet ?? (await generateKeyPairSigner());
  await openUsdcAccount(rpc, holder);
  await sendUsdc(rpc, funder, holder.address, amount);
  return holder;
}

/**
 * A fresh wallet with no SOL at all (zero lamports: the chain has no account of it) whose USDC account holds
 * `amount`: `funder` opens that account for it, paying the rent, and sends the USDC.
 */
export async function walletWithoutSol(
  rpc: Rpc<SolanaRpcApi>,
  funder: KeyPairSigner,
  amount: bigint,
): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await usdcAccountFor(rpc, funder, wallet.address, amount);
  return wallet;
}

/** `funder` opens `owner`'s USDC account, paying its rent, and sends it `amount` (atomic). */
export async function usdcAccountFor(
  rpc: Rpc<SolanaRpcApi>,
  funder: KeyPairSigner,
  owner: string,
  amount: bigint,
): Promise<void> {
  await send(
    rpc,
    funder,
    await getCreateAssociatedTokenIdempotentInstructionAsync({
      payer: funder,
      owner: owner as Address,
      mint: SOLANA_USDC_MINT as Address,
    }),
  );
  await sendUsdc(rpc, funder, owner, amount);
}

/** `amount` of USDC from `funder`'s account to `owner`'s, which exists. */
async function sendUsdc(
  rpc: Rpc<SolanaRpcApi>,
  funder: KeyPairSigner,
  owner: string,
  amount: bigint,
): Promise<void> {
  await send(
    rpc,
    funder,
    getTransferCheckedInstruction({
      source: (await usdcAccountOf(funder.address)) as Address,
      mint: SOLANA_USDC_MINT as Address,
      destination: (await usdcAccountOf(owner)) as Address,
      authority: funder,
      amount,
      decimals: SOLANA_USDC_DECIMALS,
    }),
  );
}

/** One instruction in a transaction `signer` pays the fee of and signs; the devnet lands it as it is sent. */
async function send(
  rpc: Rpc<SolanaRpcApi>,
  signer: KeyPairSigner,
  instruction: Parameters<typeof appendTransactionMessageInstruction>[0],
): Promise<void> {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(signer, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
    (tx) => appendTransactionMessageInstruction(instruction, tx),
  );
  const signed = await signTransactionMessageWithSigners(message);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send();
}
