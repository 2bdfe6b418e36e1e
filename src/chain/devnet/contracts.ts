/**
 * The contracts a fresh devnet holds at their canonical Base addresses: USDC, Permit2, x402's `upto` proxy
 * and Multicall3.
 */
import { type Address, pad } from "viem";
import { MULTICALL3_ADDRESS, PERMIT2_ADDRESS, X402_UPTO_PROXY_ADDRESS } from "../base.ts";
import { MULTICALL3_RUNTIME_BYTECODE } from "../multicall3.ts";
import { PERMIT2_RUNTIME_BYTECODE } from "../permit2.ts";
import { UPTO_PROXY_RUNTIME_BYTECODE } from "../upto-proxy.ts";
import { USDC_OWNER_SLOT, USDC_RUNTIME_BYTECODE } from "../usdc.ts";
import type { DevnetClients } from "./chain.ts";

/** Writes the contracts' code, and `owner` as USDC's owner. */
export async function installContracts(
  test: DevnetClients["test"],
  usdc: Address,
  owner: Address,
): Promise<void> {
  // A resumed chain has these codes in its saved state; a fresh one gets them here (no constructor runs:
  // each contract is written to need none).
  await Promise.all([
    test.setCode({ address: usdc, bytecode: USDC_RUNTIME_BYTECODE }),
    test.setCode({ address: PERMIT2_ADDRESS, bytecode: PERMIT2_RUNTIME_BYTECODE }),
    test.setCode({ address: X402_UPTO_PROXY_ADDRESS, bytecode: UPTO_PROXY_RUNTIME_BYTECODE }),
    test.setCode({ address: MULTICALL3_ADDRESS, bytecode: MULTICALL3_RUNTIME_BYTECODE }),
  ]);
  // The constructor never ran here, so `owner` (slot 0) is written directly.
  await test.setStorageAt({ address: usdc, index: USDC_OWNER_SLOT, value: pad(owner) });
}
