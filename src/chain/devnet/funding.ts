/**
 * Funding a fresh devnet's accounts: ETH for gas by balance writes, and the buyers' USDC and Permit2
 * approvals by real transactions.
 */
import { type Address, encodeFunctionData, type Hex, maxUint256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BASE_CHAIN_ID, BLOCK_SECONDS, PERMIT2_ADDRESS } from "../base.ts";
import { usdcAbi } from "../usdc.ts";
import type { DevnetAccount, DevnetAccounts } from "./accounts.ts";
import type { DevnetClients } from "./chain.ts";
import { DevnetError } from "./devnet-errors.ts";

const ETH = 10n ** 18n;
const OWNER_ETH = 1_000n * ETH;
const FACILITATOR_ETH = 1_000n * ETH;
const BUYER_ETH = 1n * ETH;
/** Gas for one `mint` (about 53k to a fresh account), with margin; fixed so funding needs no estimates. */
const MINT_GAS = 120_000n;
/** Gas for one buyer's `approve` of Permit2 (about 46k from a zero allowance), with margin. */
const APPROVE_GAS = 100_000n;

/** Gives every account its ETH, then each buyer `buyerUsdc` and its Permit2 approval; all in blocks. */
export async function fundAccounts(
  clients: DevnetClients,
  usdc: Address,
  accounts: DevnetAccounts,
  buyerUsdc: bigint,
): Promise<void> {
  const { test } = clients;
  const { owner, facilitatorAccount, buyers } = accounts;
  await Promise.all([
    test.setBalance({ address: owner.address, value: OWNER_ETH }),
    test.setBalance({ address: facilitatorAccount.address, value: FACILITATOR_ETH }),
    ...buyers.map((b) => test.setBalance({ address: b.address, value: BUYER_ETH })),
  ]);
  if (buyers.length > 0) {
    await fundBuyers(clients, usdc, owner, buyers, buyerUsdc);
  } else {
    await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
  }
}

/**
 * Real mint and approve transactions (not storage writes) so the chain holds the Transfer-from-zero and
 * Approval logs an indexer sees for real USDC. Signed locally with fixed nonce, gas and fees: no round
 * trips. Each buyer approves Permit2 for everything (its nonce 0), as a wallet does once before its
 * first Permit2 payment.
 */
async function fundBuyers(
  { test, client }: DevnetClients,
  usdc: Address,
  owner: DevnetAccount,
  buyers: DevnetAccount[],
  buyerUsdc: bigint,
): Promise<void> {
  const fees = await client.estimateFeesPerGas();
  const fixed = {
    chainId: client.chain.id,
    type: "eip1559",
    to: usdc,
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  } as const;
  const mints =
    buyerUsdc > 0n
      ? signMints(
          owner,
          usdc,
          0,
          fixed,
          buyers.map((b) => ({ to: b.address, amount: buyerUsdc })),
          client.chain.id,
        )
      : [];
  const approvals = buyers.map((b) =>
    privateKeyToAccount(b.privateKey).signTransaction({
      ...fixed,
      nonce: 0,
      data: encodeFunctionData({
        abi: usdcAbi,
        functionName: "approve",
        args: [PERMIT2_ADDRESS, maxUint256],
      }),
      gas: APPROVE_GAS,
    }),
  );
  const raw = await Promise.all([...mints, ...approvals]);
  await Promise.all(raw.map((serializedTransaction) => client.sendRawTransaction({ serializedTransaction })));
  // A block holds thousands of these; mine until the pool is empty (each block takes at least one).
  for (let blocks = 1; ; blocks++) {
    await test.mine({ blocks: 1, interval: BLOCK_SECONDS });
    const pool = await test.getTxpoolStatus();
    if (pool.pending === 0 && pool.queued === 0) break;
    if (blocks >= raw.length)
      throw new DevnetError("funding the buyers failed: transactions stuck in the pool");
  }
  await checkFunding(client, usdc, buyers, buyerUsdc);
}

/** Throws unless every buyer holds its USDC and has approved Permit2. */
async function checkFunding(
  client: DevnetClients["client"],
  usdc: Address,
  buyers: DevnetAccount[],
  buyerUsdc: bigint,
): Promise<void> {
  const supply = await client.readContract({ address: usdc, abi: usdcAbi, functionName: "totalSupply" });
  if (supply !== buyerUsdc * BigInt(buyers.length)) {
    throw new DevnetError(`funding the buyers failed: USDC total supply is ${supply}`);
  }
  const allowances = await Promise.all(
    buyers.map((b) =>
      client.readContract({
        address: usdc,
        abi: usdcAbi,
        functionName: "allowance",
        args: [b.address, PERMIT2_ADDRESS],
      }),
    ),
  );
  if (allowances.some((a) => a !== maxUint256)) {
    throw new DevnetError("funding the buyers failed: a buyer's Permit2 approval did not land");
  }
}

/**
 * USDC `mint` transactions from the token's owner, signed locally with consecutive nonces from `nonce` and
 * fixed gas: real mints rather than storage writes, so the chain holds the Transfer-from-zero logs an
 * indexer sees for real USDC.
 */
export function signMints(
  owner: DevnetAccount,
  usdc: Address,
  nonce: number,
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  mints: readonly { to: Address; amount: bigint }[],
  chainId: number = BASE_CHAIN_ID,
): Promise<Hex>[] {
  const signer = privateKeyToAccount(owner.privateKey);
  return mints.map(({ to, amount }, i) =>
    signer.signTransaction({
      chainId,
      type: "eip1559",
      to: usdc,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      nonce: nonce + i,
      data: encodeFunctionData({ abi: usdcAbi, functionName: "mint", args: [to, amount] }),
      gas: MINT_GAS,
    }),
  );
}
