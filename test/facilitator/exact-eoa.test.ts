/**
 * The exact scheme's fast path (`src/facilitator/exact-eoa.ts`) against `@x402/evm`'s own scheme on one
 * devnet: the same answer for every payment, and the SDK asked only where this path does not accept.
 */
import crypto from "node:crypto";
import type { PaymentPayload, PaymentRequirements, SchemeNetworkFacilitator } from "@x402/core/types";
import { type FacilitatorEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createTestClient, createWalletClient, http, publicActions, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { type DevnetAccount, devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { eip3009Types } from "../../src/chain/usdc.ts";
import { ExactEoaScheme } from "../../src/facilitator/exact-eoa.ts";
import { useDevnet } from "../helpers/chain.ts";
import { newMerchant, pay, requirementsFor, usdcReader } from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 2 });
let sdk: ExactEvmScheme;
let ours: ExactEoaScheme;
let signer: FacilitatorEvmSigner;
/** How often the fast path handed a call to the SDK. */
const handed = { verify: 0, settle: 0 };

beforeAll(async () => {
  const wallet = createWalletClient({
    chain: devnetChain(chain.devnet.rpc),
    transport: http(chain.devnet.rpc),
    account: privateKeyToAccount(chain.devnet.facilitatorAccount.privateKey),
    pollingInterval: 20,
  }).extend(publicActions);
  // viem's waitForTransactionReceipt passes over a block that shows while it is still looking the
  // transaction up, and this chain mines only when a transaction waits: the settlement's receipt then never
  // came (30 s, seen on a loaded machine). The project's own receipt polling asks until it has one.
  signer = toFacilitatorEvmSigner({
    ...wallet,
    waitForTransactionReceipt: async ({ hash }: { hash: `0x${string}` }) => {
      const receipt = await pollReceipt(wallet as never, hash, 20_000, 20);
      if (!receipt) throw new Error(`no receipt for ${hash} in 20 s`);
      return receipt;
    },
  } as never);
  sdk = new ExactEvmScheme(signer);
  const counting: SchemeNetworkFacilitator = {
    scheme: sdk.scheme,
    caipFamily: sdk.caipFamily,
    getExtra: (network) => sdk.getExtra(network),
    getSigners: (network) => sdk.getSigners(network),
    verify: (...args) => {
      handed.verify++;
      return sdk.verify(...args);
    },
    settle: (...args) => {
      handed.settle++;
      return sdk.settle(...args);
    },
  };
  ours = new ExactEoaScheme(signer, counting);
});

/** An authorization signed by `buyer` for `requirements`, with any of its terms overridden. */
async function authorize(
  buyer: DevnetAccount,
  requirements: PaymentRequirements,
  terms: Partial<{ value: bigint; validAfter: bigint; validBefore: bigint }> = {},
): Promise<PaymentPayload> {
  const account = privateKeyToAccount(buyer.privateKey);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: account.address,
    to: requirements.payTo as `0x${string}`,
    value: BigInt(requirements.amount),
    validAfter: now - 600n,
    validBefore: now + 300n,
    nonce: toHex(crypto.randomBytes(32)),
    ...terms,
  };
  const { name, version } = requirements.extra as { name: string; version: string };
  const signature = await account.signTypedData({
    domain: {
      name,
      version,
      chainId: chain.devnet.chainId,
      verifyingContract: requirements.asset as `0x${string}`,
    },
    types: eip3009Types,
    primaryType: "TransferWithAuthorization",
    message,
  });
  return {
    x402Version: 2,
    resource: { url: "http://shop.test/weather" },
    accepted: requirements,
    payload: {
      signature,
      authorization: {
        ...message,
        value: String(message.value),
        validAfter: String(message.validAfter),
        validBefore: String(message.validBefore),
      },
    },
  };
}

/** The payment with its signature replaced. */
function resigned(payment: PaymentPayload, signature: string): PaymentPayload {
  return { ...payment, payload: { ...payment.payload, signature } };
}

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** Verified by both; the answers must be equal, and only a refusal may reach the SDK from the fast path. */
async function verifyBoth(payment: PaymentPayload, requirements: PaymentRequirements) {
  const before = handed.verify;
  const [fast, stock] = [await ours.verify(payment, requirements), await sdk.verify(payment, requirements)];
  expect(fast).toEqual(stock);
  return { answer: fast, handed: handed.verify - before };
}

describe("the exact scheme's fast path for ordinary wallets", () => {
  it("accepts a valid payment without asking the SDK, as the SDK accepts it", async () => {
    const requirements = requirementsFor(newMerchant());
    for (const payment of [
      await pay(chain.devnet.buyers[0] as DevnetAccount, requirements),
      await authorize(chain.devnet.buyers[0] as DevnetAccount, requirements),
    ]) {
      const { answer, handed } = await verifyBoth(payment, requirements);
      expect(answer.isValid).toBe(true);
      expect(handed).toBe(0);
    }
  });

  it("answers every refusal with the SDK's own reason and message", async () => {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const requirements = requirementsFor(newMerchant());
    const now = BigInt(Math.floor(Date.now() / 1000));
    const valid = await authorize(buyer, requirements);
    const { signature } = valid.payload as { signature: `0x${string}` };
    const r = signature.slice(2, 66);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = Number.parseInt(signature.slice(130), 16);
    const poorKey = generatePrivateKey();
    const poor = { address: privateKeyToAccount(poorKey).address, privateKey: poorKey };
    const notAToken = { ...requirements, asset: newMerchant() };

    const cases: [string, PaymentPayload, PaymentRequirements][] = [
      ["another payee", valid, requirementsFor(newMerchant())],
      ["another amount", valid, { ...requirements, amount: "999" }],
      [
        "a tampered signature",
        resigned(valid, `${signature.slice(0, 100)}00${signature.slice(102)}`),
        requirements,
      ],
      [
        "the malleable high-s twin",
        resigned(valid, `0x${r}${toHex(N - s, { size: 32 }).slice(2)}${(55 - v).toString(16)}`),
        requirements,
      ],
      ["v of 29", resigned(valid, `${signature.slice(0, 130)}1d`), requirements],
      ["expired", await authorize(buyer, requirements, { validBefore: now + 2n }), requirements],
      ["not yet valid", await authorize(buyer, requirements, { validAfter: now + 600n }), requirements],
      ["no funds", await authorize(poor, requirements), requirements],
      ["an asset with no code", await authorize(buyer, notAToken), notAToken],
      ["no EIP-712 domain", valid, { ...requirements, extra: {} }],
      ["another network", valid, { ...requirements, network: "eip155:84532" }],
    ];
    for (const [name, payment, asked] of cases) {
      const { answer, handed } = await verifyBoth(payment, asked);
      expect(answer.isValid, name).toBe(false);
      expect(handed, name).toBe(1);
    }
  });

  it("hands a payer with code (a smart wallet) to the SDK", async () => {
    const requirements = requirementsFor(newMerchant());
    const buyer = chain.devnet.buyers[1] as DevnetAccount;
    const payment = await authorize(buyer, requirements);
    const test = createTestClient({
      mode: "anvil",
      chain: devnetChain(chain.devnet.rpc),
      transport: http(chain.devnet.rpc),
    });
    await test.setCode({ address: buyer.address, bytecode: "0x6000" });
    try {
      const { answer, handed } = await verifyBoth(payment, requirements);
      expect(answer.isValid).toBe(false); // no ERC-1271 there
      expect(handed).toBe(1);
    } finally {
      await test.setCode({ address: buyer.address, bytecode: "0x" });
    }
  });

  it("settles a valid payment itself, once: the second settle is refused as the SDK refuses it", async () => {
    const payTo = newMerchant();
    const requirements = requirementsFor(payTo);
    const payment = await authorize(chain.devnet.buyers[0] as DevnetAccount, requirements);
    const before = handed.settle;
    const settled = await ours.settle(payment, requirements);
    expect(settled).toMatchObject({
      success: true,
      network: requirements.network,
      payer: chain.devnet.buyers[0]?.address,
    });
    expect(handed.settle).toBe(before);
    expect(await usdcReader(chain.devnet.rpc).balanceOf(payTo)).toBe(1000n);

    const [again, stock] = [
      await ours.settle(payment, requirements),
      await sdk.settle(payment, requirements),
    ];
    expect(again.success).toBe(false);
    expect(again.errorReason).toBe(stock.errorReason);
    expect(again.errorReason).toBe("invalid_exact_evm_nonce_already_used");
    expect(await usdcReader(chain.devnet.rpc).balanceOf(payTo)).toBe(1000n);
  });

  it("hands a settle it would not accept to the SDK, which refuses it without a transaction", async () => {
    const requirements = requirementsFor(newMerchant());
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const valid = await authorize(buyer, requirements);
    const { signature } = valid.payload as { signature: string };
    const payments = [
      await authorize(buyer, requirements, { value: 5n }),
      // Recovers to another address: the settlement's re-verification has no simulation to catch it.
      resigned(valid, `${signature.slice(0, 100)}00${signature.slice(102)}`),
    ];
    for (const payment of payments) {
      const before = handed.settle;
      const answer = await ours.settle(payment, requirements);
      expect(answer).toEqual(await sdk.settle(payment, requirements));
      expect(answer).toMatchObject({ success: false, transaction: "" });
      expect(handed.settle).toBe(before + 1);
    }
  });

  it("finds the payment's Transfer in the receipt, or answers a mismatch", async () => {
    // The same transaction, its receipt's logs altered as a token that emits something else would.
    const altered = (change: (log: { topics: readonly string[]; data: string }) => object) =>
      new ExactEoaScheme(
        {
          ...signer,
          async waitForTransactionReceipt(args) {
            const receipt = await signer.waitForTransactionReceipt(args);
            return { ...receipt, logs: receipt.logs?.map((log) => ({ ...log, ...change(log) })) } as never;
          },
        },
        sdk,
      );
    const cases: [string, (log: { topics: readonly string[]; data: string }) => object, boolean][] = [
      ["unchanged", () => ({}), true],
      ["another value", () => ({ data: toHex(1n, { size: 32 }) }), false],
      [
        "another payee",
        (log) => ({ topics: [log.topics[0], log.topics[1], toHex(7n, { size: 32 })] }),
        false,
      ],
      ["another token", () => ({ address: newMerchant() }), false],
    ];
    for (const [name, change, success] of cases) {
      const requirements = requirementsFor(newMerchant());
      const answer = await altered(change).settle(
        await authorize(chain.devnet.buyers[1] as DevnetAccount, requirements),
        requirements,
      );
      expect(answer.success, name).toBe(success);
      if (!success) expect(answer.errorReason, name).toBe("invalid_exact_evm_transfer_event_mismatch");
      expect(answer.transaction, name).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });
});
