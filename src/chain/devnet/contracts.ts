/**
 * The contracts a fresh devnet holds at their canonical Base addresses: USDC, Permit2, x402's `upto` and
 * `exact` Permit2 proxies, x402's `batch-settlement` escrow with its two deposit collectors, and Multicall3.
 */
import { type Address, type Hex, pad } from "viem";
import {
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  MULTICALL3_ADDRESS,
  PERMIT2_ADDRESS,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
  X402_UPTO_PROXY_ADDRESS,
} from "../base.ts";
import { BATCH_SETTLEMENT_RUNTIME_BYTECODE } from "../batch-settlement.ts";
import { ERC3009_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE } from "../erc3009-deposit-collector.ts";
import { EXACT_PROXY_RUNTIME_BYTECODE } from "../exact-proxy.ts";
import { MULTICALL3_RUNTIME_BYTECODE } from "../multicall3.ts";
import { PERMIT2_RUNTIME_BYTECODE } from "../permit2.ts";
import { PERMIT2_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE } from "../permit2-deposit-collector.ts";
import { UPTO_PROXY_RUNTIME_BYTECODE } from "../upto-proxy.ts";
import { USDC_OWNER_SLOT, USDC_RUNTIME_BYTECODE } from "../usdc.ts";
import type { DevnetClients } from "./chain.ts";

/**
 * x402's contracts added after the first saved chains: each needs no constructor and starts with empty
 * storage, so a chain saved without them gets them when it resumes (`installMissingContracts`).
 */
const LATER_CONTRACTS: readonly { address: Address; bytecode: Hex }[] = [
  { address: X402_EXACT_PROXY_ADDRESS, bytecode: EXACT_PROXY_RUNTIME_BYTECODE },
  { address: X402_BATCH_SETTLEMENT_ADDRESS, bytecode: BATCH_SETTLEMENT_RUNTIME_BYTECODE },
  { address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, bytecode: ERC3009_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE },
  { address: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, bytecode: PERMIT2_DEPOSIT_COLLECTOR_RUNTIME_BYTECODE },
];

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
    ...LATER_CONTRACTS.map((contract) => test.setCode(contract)),
  ]);
  // The constructor never ran here, so `owner` (slot 0) is written directly.
  await test.setStorageAt({ address: usdc, index: USDC_OWNER_SLOT, value: pad(owner) });
}

/**
 * Installs, on a chain loaded from a save, those of x402's later contracts whose address holds no code (a
 * chain saved before they were added); a contract already there, with its state, is left as it is.
 */
export async function installMissingContracts({ test, client }: DevnetClients): Promise<void> {
  const codes = await Promise.all(LATER_CONTRACTS.map(({ address }) => client.getCode({ address })));
  const missing = LATER_CONTRACTS.filter((_, i) => !codes[i] || codes[i] === "0x");
  await Promise.all(missing.map((contract) => test.setCode(contract)));
}
