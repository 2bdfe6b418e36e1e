/**
 * x402's `upto` scheme on the devnet with the stock SDK only: `@x402/evm/upto/client` signs a Permit2
 * maximum, `@x402/evm/upto/facilitator` verifies it and settles less, through the devnet's own Permit2,
 * upto proxy and Multicall3 at their canonical addresses. No project code is in the payment path; the
 * signer below is plain viem.
 *
 * Receipts are polled by hash, not awaited with viem's `waitForTransactionReceipt`: its block watcher drops
 * a new block seen while it is still looking up the transaction, and a chain that mines only when a
 * transaction waits never brings another block, so the wait can hang (it did, once, in a loaded CI run).
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoFacilitator } from "@x402/evm/upto/facilitator";
import {
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  parseEventLogs,
  publicActions,
  type Transport,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { USDC_UNIT, X402_UPTO_PROXY_ADDRESS } from "../../../src/chain/base.ts";
import { devnetChain } from "../../../src/chain/devnet/index.ts";
import { permit2Abi } from "../../../src/chain/permit2.ts";
import { pollReceipt } from "../../../src/chain/receipt.ts";
import { uptoProxyAbi } from "../../../src/chain/upto-proxy.ts";
import { usdcAbi } from "../../../src/chain/usdc.ts";
import { authorizationUsed } from "../../../src/facilitator/outcome.ts";
import { useDevnet } from "../../helpers/chain.ts";

const NETWORK = "eip155:8453";
const MAX = USDC_UNIT; // 1.000000 USDC signed for
const MERCHANT = privateKeyToAccount(generatePrivateKey()).address;

const chain = useDevnet({ buyers: 3 });
let client: PublicClient<Transport, Chain>;
let facilitatorWallet: ReturnType<typeof walletOf>;
let facilitator: UptoFacilitator;

function walletOf(privateKey: Hex) {
  return createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: devnetChain(chain.devnet.rpc),
    transport: http(chain.devnet.rpc),
    pollingInterval: 20,
  }).extend(publicActions);
}

beforeAll(async () => {
  client = createPublicClient({
    chain: devnetChain(chain.devnet.rpc),
    transport: http(chain.devnet.rpc),
    pollingInterval: 20,
  });
  facilitatorWallet = walletOf(chain.devnet.facilitatorAccount.privateKey);
  const w = facilitatorWallet;
  // The SDK's own adapter over a viem wallet client: reads and `eth_call`s go out from the facilitator's address.
  const signer = toFacilitatorEvmSigner({
    address: w.account.address,
    readContract: (args) => w.readContract(args as Parameters<typeof w.readContract>[0]),
    verifyTypedData: (args) => w.verifyTypedData(args as Parameters<typeof w.verifyTypedData>[0]),
    writeContract: (args) => w.writeContract(args as Parameters<typeof w.writeContract>[0]),
    sendTransaction: (args) => w.sendTransaction(args),
    waitForTransactionReceipt: ({ hash }) => receiptOf(hash),
    getCode: (args) => w.getCode(args),
  });
  facilitator = new UptoFacilitator(signer);
}, 60_000);

async function receiptOf(hash: Hex) {
  const receipt = await pollReceipt(client, hash, 20_000, 20);
  if (!receipt) throw new Error(`no receipt for ${hash} in 20 s`);
  return receipt;
}

function buyerAt(index: number) {
  const buyer = chain.devnet.buyers[index];
  if (!buyer) throw new Error(`the devnet has no buyer ${index}`);
  return buyer;
}

function requirements(amount: bigint): PaymentRequirements {
  return {
    scheme: "upto",
    network: NETWORK,
    asset: chain.devnet.usdc,
    amount: amount.toString(),
    payTo: MERCHANT,
    maxTimeoutSeconds: 300,
    extra: facilitator.getExtra(NETWORK) ?? {},
  };
}

/** What the buyer's wallet sends: the stock client's signature for at most MAX. */
async function pay(privateKey: Hex): Promise<PaymentPayload> {
  const accepted = requirements(MAX);
  const signed = await new UptoClient(privateKeyToAccount(privateKey)).createPaymentPayload(2, accepted);
  return { x402Version: signed.x402Version, accepted, payload: signed.payload };
}

const usdcOf = (account: Address) =>
  client.readContract({
    address: chain.devnet.usdc,
    abi: usdcAbi,
    functionName: "balanceOf",
    args: [account],
  });

/** Whether Permit2 has spent this payment's nonce (the bit in the buyer's unordered nonce bitmap). */
function nonceSpent(payload: PaymentPayload): Promise<boolean> {
  const auth = (payload.payload as { permit2Authorization: { from: Address; nonce: string } })
    .permit2Authorization;
  const nonce = toHex(BigInt(auth.nonce), { size: 32 });
  return authorizationUsed(client, { method: "permit2", asset: chain.devnet.usdc, payer: auth.from, nonce });
}

/** The proxy's `settle` as the facilitator would send it, simulated from `from` (for on-chain refusals). */
function simulateSettle(payload: PaymentPayload, amount: bigint, from: Address) {
  const p = payload.payload as {
    signature: Hex;
    permit2Authorization: {
      from: Address;
      permitted: { token: Address; amount: string };
      nonce: string;
      deadline: string;
      witness: { to: Address; facilitator: Address; validAfter: string };
    };
  };
  const a = p.permit2Authorization;
  return client.simulateContract({
    account: from,
    address: X402_UPTO_PROXY_ADDRESS,
    // With Permit2's errors, so its refusals (a spent nonce) are decoded by name.
    abi: [...uptoProxyAbi, ...permit2Abi],
    functionName: "settle",
    args: [
      {
        permitted: { token: a.permitted.token, amount: BigInt(a.permitted.amount) },
        nonce: BigInt(a.nonce),
        deadline: BigInt(a.deadline),
      },
      amount,
      a.from,
      { to: a.witness.to, facilitator: a.witness.facilitator, validAfter: BigInt(a.witness.validAfter) },
      p.signature,
    ],
  });
}

describe("x402 upto on the devnet, stock SDK end to end", () => {
  it("verifies a 1 USDC maximum and settles 0.37 USDC: the buyer pays exactly that, the facilitator the gas", async () => {
    const buyer = buyerAt(0);
    const payload = await pay(buyer.privateKey);
    expect(await facilitator.verify(payload, requirements(MAX))).toMatchObject({
      isValid: true,
      payer: buyer.address,
    });

    const amount = 370_000n;
    const [buyerBefore, merchantBefore, buyerEth, facilitatorEth] = await Promise.all([
      usdcOf(buyer.address),
      usdcOf(MERCHANT),
      client.getBalance({ address: buyer.address }),
      client.getBalance({ address: chain.devnet.facilitatorAccount.address }),
    ]);
    const settled = await facilitator.settle(payload, requirements(amount));
    expect(settled).toMatchObject({
      success: true,
      payer: buyer.address,
      amount: "370000",
      network: NETWORK,
    });

    expect(await usdcOf(buyer.address)).toBe(buyerBefore - amount);
    expect(await usdcOf(MERCHANT)).toBe(merchantBefore + amount);
    expect(await client.getBalance({ address: buyer.address })).toBe(buyerEth);
    expect(await client.getBalance({ address: chain.devnet.facilitatorAccount.address })).toBeLessThan(
      facilitatorEth,
    );

    const receipt = await client.getTransactionReceipt({ hash: settled.transaction as Hex });
    expect(receipt.from.toLowerCase()).toBe(chain.devnet.facilitatorAccount.address.toLowerCase());
    expect(receipt.to?.toLowerCase()).toBe(X402_UPTO_PROXY_ADDRESS.toLowerCase());
    const settledEvents = parseEventLogs({ abi: uptoProxyAbi, logs: receipt.logs, eventName: "Settled" });
    expect(settledEvents.map((e) => e.address.toLowerCase())).toEqual([
      X402_UPTO_PROXY_ADDRESS.toLowerCase(),
    ]);
    const transfers = parseEventLogs({ abi: usdcAbi, logs: receipt.logs, eventName: "Transfer" });
    expect(transfers.map((t) => t.args)).toEqual([{ from: buyer.address, to: MERCHANT, value: amount }]);
    expect(await nonceSpent(payload)).toBe(true);
  });

  it("settles 0 without a transaction or a spent nonce, so the same signature still settles later", async () => {
    const buyer = buyerAt(1);
    const payload = await pay(buyer.privateKey);
    const before = await usdcOf(buyer.address);

    const zero = await facilitator.settle(payload, requirements(0n));
    expect(zero).toMatchObject({ success: true, transaction: "", amount: "0" });
    expect(await usdcOf(buyer.address)).toBe(before);
    expect(await nonceSpent(payload)).toBe(false);

    const later = await facilitator.settle(payload, requirements(250_000n));
    expect(later).toMatchObject({ success: true, amount: "250000" });
    expect(await usdcOf(buyer.address)).toBe(before - 250_000n);
  });

  it("refuses more than the signed maximum, in the SDK and in the proxy", async () => {
    const buyer = buyerAt(2);
    const payload = await pay(buyer.privateKey);
    const before = await usdcOf(buyer.address);

    const over = await facilitator.settle(payload, requirements(MAX + 1n));
    expect(over).toMatchObject({
      success: false,
      errorReason: "invalid_upto_evm_payload_settlement_exceeds_amount",
    });
    // The contract enforces it too, for a facilitator that skipped the SDK's check.
    await expect(simulateSettle(payload, MAX + 1n, chain.devnet.facilitatorAccount.address)).rejects.toThrow(
      /AmountExceedsPermitted/,
    );
    // Only the facilitator the buyer named may settle; the payee is the witness's, whoever sends.
    await expect(simulateSettle(payload, 1n, buyer.address)).rejects.toThrow(/UnauthorizedFacilitator/);
    expect(await usdcOf(buyer.address)).toBe(before);
    expect(await nonceSpent(payload)).toBe(false);
  });

  it("refuses a second settlement of the same signature", async () => {
    const buyer = buyerAt(0);
    const payload = await pay(buyer.privateKey);
    expect(await facilitator.settle(payload, requirements(100_000n))).toMatchObject({ success: true });
    const balance = await usdcOf(buyer.address);

    const again = await facilitator.settle(payload, requirements(100_000n));
    // The SDK's simulation fails and its diagnosis finds balance and allowance fine.
    expect(again).toMatchObject({
      success: false,
      transaction: "",
      errorReason: "permit2_simulation_failed",
    });
    // Permit2 itself refuses the spent nonce.
    await expect(simulateSettle(payload, 100_000n, chain.devnet.facilitatorAccount.address)).rejects.toThrow(
      /InvalidNonce/,
    );
    expect(await usdcOf(buyer.address)).toBe(balance);
  });

  it("refuses, at verify, a buyer holding USDC who never approved Permit2 (permit2_allowance_required)", async () => {
    const privateKey = generatePrivateKey();
    const fresh = privateKeyToAccount(privateKey).address;
    const owner = walletOf(chain.devnet.owner.privateKey);
    const hash = await owner.writeContract({
      address: chain.devnet.usdc,
      abi: usdcAbi,
      functionName: "mint",
      args: [fresh, 5n * USDC_UNIT],
    });
    expect((await receiptOf(hash)).status).toBe("success");

    const payload = await pay(privateKey);
    expect(await facilitator.verify(payload, requirements(MAX))).toEqual({
      isValid: false,
      invalidReason: "permit2_allowance_required",
      payer: fresh,
    });
    expect(await usdcOf(fresh)).toBe(5n * USDC_UNIT);
  });
});
