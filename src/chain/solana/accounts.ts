/**
 * Solana's token accounts as x402 pays from and to them: an owner's associated USDC account, the one the SDK's
 * `exact` client transfers from and the facilitator's checks make it transfer to. Here, not in the devnet, so that
 * the merchants read it without loading the local chain.
 */
import { findAssociatedTokenPda } from "@solana-program/token";
import { SOLANA_USDC_MINT, SPL_TOKEN_PROGRAM } from "./constants.ts";

/** An owner's associated USDC account (the SPL Token program's, as USDC's mint is). */
export async function usdcAccountOf(owner: string): Promise<string> {
  const [address] = await findAssociatedTokenPda({
    mint: SOLANA_USDC_MINT as never,
    owner: owner as never,
    tokenProgram: SPL_TOKEN_PROGRAM as never,
  });
  return address;
}
