/**
 * Gas sponsoring (x402's `eip2612GasSponsoring` and `erc20ApprovalGasSponsoring`): a fresh wallet holding
 * USDC and no ETH pays an upto maximum and an exact Permit2 price with the SDK's own clients, which sign an
 * EIP-2612 permit or a raw `approve(Permit2, max)` for the facilitator to carry out; the project's
 * facilitator, closed and reached over HTTP with an API key, gives Permit2 the allowance with the payment,
 * charges the key the gas, and takes exactly the price from the buyer. Every sponsoring it must not do is
 * refused before anything is sent (its nonce, the buyer's, and the balances do not move).
 */
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import {
  declareEip2612GasSponsoringExtension,
  declareErc20ApprovalGasSponsoringExtension,
} from "@x402/extensions";
import {
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  type Hex,
  keccak256,
  maxUint256,
  parseEther,
  parseEventLogs,
  parseTransaction,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BASE_USDC,
  PERMIT2_ADDRESS,
  X402_EXACT_PROXY_ADDRESS,
  X402_UPTO_PROXY_ADDRESS,
} from "../../../src/chain/base.ts";
import type { DevnetAccount } from "../../../src/chain/devnet/index.ts";
import { exactProxyAbi } from "../../../src/chain/exact-proxy.ts";
import { uptoProxyAbi } from "../../../src/chain/upto-proxy.ts";
import { eip2612Types, usdcAbi } from "../../../src/chain/usdc.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { addKey } from "../../../src/facilitator/access/index.ts";
import type { Facilitator } from "../../../src/facilitator/index.ts";
import { useDevnet, walletHolding } from "../../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { devnetFacilitator } from "../../helpers/facilitator.ts";
import { NETWORK, newMerchant, usdcReader } from "../../helpers/x402.ts";

const chain = useDevnet({ buyers: 2 });
let usdc: ReturnType<typeof usdcReader>;
let db: Database;
let closeDb: () => Promise<void>;
let facilitator: Facilitator;
let key: string;
let keyId: string;
const payee = newMerchant();
/** 5 USDC: what each fresh wallet holds. */
const HELD = 5_000_000n;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
  ({ db, close: closeDb } = await openTestDatabase(LEDGER_KIND));
  // Closed: the payee is served with a key, whose gas budget pays for the sponsoring.
  facilitator = await devnetFacilitator(chain.devnet, db, { access: { open: false } });
  const added = await addKey(db, {
    name: "shop",
    payees: [payee.toLowerCase()],
    gasBudgetWei: parseEther("1"),
    ratePerMinute: 1000,
  });
  key = added.key;
  keyId = added.apiKey.id;
}, 60_000);
afterAll(async () => {
  await facilitator?.close();
  await closeDb?.();
});

type Kind = "eip2612" | "erc20Approval";
const DECLARED = {
  eip2612: declareEip2612GasSponsoringExtension,
  erc20Approval: declareErc20ApprovalGasSponsoringExtension,
};

function uptoRequirements(max: string): PaymentRequirements {
  return {
    scheme: "upto",
    network: NETWORK,
    asset: getAddress(BASE_USDC),
    amount: max,
    payTo: payee,
    maxTimeoutSeconds: 300,
    // The token's domain, which the buyer's permit is signed on (what the merchant kit's 402 gives).
    extra: { facilitatorAddress: facilitator.address, name: "USD Coin", version: "2" },
  };
}

function exactRequirements(amount: string): PaymentRequirements {
  return {
    scheme: "exact",
    network: NETWORK,
    asset: getAddress(BASE_USDC),
    amount,
    payTo: payee,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2", assetTransferMethod: "permit2" },
  };
}

/**
 * A payment by the SDK's own client of `requirements`' scheme, from a 402 that declares `kind`: the client
 * reads the allowance (none) over the RPC it is given and signs the permit or the approval.
 */
function pay(wallet: DevnetAccount, requirements: PaymentRequirements, kind?: Kind): Promise<PaymentPayload> {
  const account = privateKeyToAccount(wallet.privateKey);
  const rpc = { rpcUrl: chain.devnet.rpc };
  const scheme =
    requirements.scheme === "upto" ? new UptoEvmScheme(account, rpc) : new ExactEvmScheme(account, rpc);
  return new x402Client().register(NETWORK, scheme).createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://shop.test/v1/chat/completions/_t/t3/upto" },
    accepts: [requirements],
    ...(kind && { extensions: DECLARED[kind]() }),
  });
}

async function post(path: "/verify" | "/settle", payment: PaymentPayload, requirements: PaymentRequirements) {
  const response = await facilitator.app.request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: requirements }),
  });
  return (await response.json()) as Record<string, unknown>;
}

/** What the key has been charged so far (wei), by action. */
async function charged(): Promise<Record<string, bigint>> {
  const { rows } = await db.query<{ action: string; wei: string }>(
    `SELECT action, coalesce(sum(charged_wei), 0)::text AS wei FROM facilitator_key_charges
     WHERE key_id = $1 AND state = 'charged' GROUP BY action`,
    [keyId],
  );
  return Object.fromEntries(rows.map((r) => [r.action, BigInt(r.wei)]));
}

const eth = (address: `0x${string}`) => usdc.client.getBalance({ address });
const allowance = (owner: `0x${string}`) =>
  usdc.client.readContract({
    address: chain.devnet.usdc,
    abi: usdcAbi,
    functionName: "allowance",
    args: [owner, PERMIT2_ADDRESS],
  });
const facilitatorNonce = () => usdc.nonceOf(chain.devnet.facilitatorAccount.address);

/** The chain as a refusal must leave it: nothing sent by the facilitator or for the buyer. */
async function snapshot(wallet: DevnetAccount) {
  return {
    facilitator: await facilitatorNonce(),
    buyer: await usdc.nonceOf(wallet.address),
    usdc: await usdc.balanceOf(wallet.address),
    eth: await eth(wallet.address),
    allowance: await allowance(wallet.address),
  };
}

/** A payment whose sponsoring extension's info is `change`d (the buyer's signed payment kept). */
function altered(payment: PaymentPayload, kind: Kind, change: Record<string, unknown>): PaymentPayload {
  const extension = (payment.extensions as Record<string, { info: Record<string, unknown> }>)[
    `${kind}GasSponsoring`
  ] as { info: Record<string, unknown> };
  return {
    ...payment,
    extensions: {
      ...payment.extensions,
      [`${kind}GasSponsoring`]: { ...extension, info: { ...extension.info, ...change } },
    },
  };
}

describe("gas sponsoring: a wallet holding only USDC pays through Permit2", () => {
  it("lists both extensions in /supported", async () => {
    const supported = (await (await facilitator.app.request("/supported")).json()) as {
      extensions: string[];
    };
    expect(supported.extensions).toEqual(
      expect.arrayContaining(["eip2612GasSponsoring", "erc20ApprovalGasSponsoring"]),
    );
  });

  for (const scheme of ["upto", "exact"] as const) {
    it(`pays ${scheme} with an EIP-2612 permit carried in the settlement: the buyer pays the price, the key the gas`, async () => {
      const wallet = await walletHolding(chain.devnet, HELD);
      expect(await eth(wallet.address)).toBe(0n);
      const requirements = scheme === "upto" ? uptoRequirements("1000000") : exactRequirements("250000");
      const payment = await pay(wallet, requirements, "eip2612");
      expect(payment.extensions?.eip2612GasSponsoring).toMatchObject({
        info: { from: wallet.address, spender: getAddress(PERMIT2_ADDRESS), amount: requirements.amount },
      });
      const before = { charged: await charged(), nonce: await facilitatorNonce() };

      expect(await post("/verify", payment, requirements)).toMatchObject({
        isValid: true,
        payer: wallet.address,
      });
      // upto settles what was metered; exact its price.
      const price = scheme === "upto" ? 370_000n : 250_000n;
      const settled = await post("/settle", payment, { ...requirements, amount: price.toString() });
      expect(settled, JSON.stringify(settled)).toMatchObject({ success: true, payer: wallet.address });
      const hash = settled.transaction as Hex;
      const receipt = await usdc.receipt(hash);
      const { input, to } = await usdc.client.getTransaction({ hash });
      // One transaction: the proxy's settleWithPermit, the permit and the transfer together.
      expect(to?.toLowerCase()).toBe(
        (scheme === "upto" ? X402_UPTO_PROXY_ADDRESS : X402_EXACT_PROXY_ADDRESS).toLowerCase(),
      );
      expect(
        parseEventLogs({ abi: uptoProxyAbi, logs: receipt.logs, eventName: "SettledWithPermit" }),
      ).toHaveLength(1);
      const abi = scheme === "upto" ? uptoProxyAbi : exactProxyAbi;
      expect(decodeFunctionData({ abi, data: input }).functionName).toBe("settleWithPermit");
      expect(await facilitatorNonce()).toBe(before.nonce + 1);
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - price);
      expect(await eth(wallet.address)).toBe(0n);
      // The key paid the whole transaction, permit included.
      const cost = receipt.gasUsed * receipt.effectiveGasPrice;
      const after = await charged();
      expect((after[scheme] ?? 0n) - (before.charged[scheme] ?? 0n)).toBe(cost);
    });

    it(`pays ${scheme} with a raw approval it funds and broadcasts: the buyer pays the price, the key the gas`, async () => {
      const wallet = await walletHolding(chain.devnet, HELD);
      const requirements = scheme === "upto" ? uptoRequirements("1000000") : exactRequirements("250000");
      const payment = await pay(wallet, requirements, "erc20Approval");
      const info = (
        payment.extensions as { erc20ApprovalGasSponsoring: { info: { signedTransaction: Hex } } }
      ).erc20ApprovalGasSponsoring.info;
      const approvalTx = parseTransaction(info.signedTransaction);
      const before = { charged: await charged(), nonce: await facilitatorNonce() };

      expect(await post("/verify", payment, requirements)).toMatchObject({ isValid: true });
      // Verified, nothing sent yet.
      expect(await facilitatorNonce()).toBe(before.nonce);
      expect(await eth(wallet.address)).toBe(0n);
      const price = scheme === "upto" ? 370_000n : 250_000n;
      const settled = await post("/settle", payment, { ...requirements, amount: price.toString() });
      expect(settled, JSON.stringify(settled)).toMatchObject({ success: true, payer: wallet.address });
      const receipt = await usdc.receipt(settled.transaction as Hex);
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - price);
      expect(await allowance(wallet.address)).toBe(maxUint256 - price);

      // Two transactions of the facilitator (the funding, the settlement) and the buyer's approval.
      expect(await facilitatorNonce()).toBe(before.nonce + 2);
      expect(await usdc.nonceOf(wallet.address)).toBe(1);
      const { rows } = await db.query<{
        state: string;
        funding_tx: Hex;
        funded_wei: string;
        cost_wei: string;
      }>(
        "SELECT state, funding_tx, funded_wei::text, cost_wei::text FROM facilitator_sponsored_approvals WHERE payer = $1",
        [wallet.address.toLowerCase()],
      );
      expect(rows).toHaveLength(1);
      const row = rows[0] as (typeof rows)[number];
      expect(row.state).toBe("approved");
      // Funded exactly what the approval may cost (its gas limit at its max fee), the wallet having none.
      const funded = (approvalTx.gas ?? 0n) * (approvalTx.maxFeePerGas ?? 0n);
      expect(BigInt(row.funded_wei)).toBe(funded);
      const funding = await usdc.receipt(row.funding_tx);
      const approval = await usdc.receipt(keccak256(info.signedTransaction));
      // The wallet keeps what its approval did not burn of the gas it was given, nothing of its own.
      expect(await eth(wallet.address)).toBe(funded - approval.gasUsed * approval.effectiveGasPrice);
      const sponsored = funding.gasUsed * funding.effectiveGasPrice + funded;
      expect(BigInt(row.cost_wei)).toBe(sponsored);
      const after = await charged();
      expect((after.approval ?? 0n) - (before.charged.approval ?? 0n)).toBe(sponsored);
      expect((after[scheme] ?? 0n) - (before.charged[scheme] ?? 0n)).toBe(
        receipt.gasUsed * receipt.effectiveGasPrice,
      );
    });
  }
});

/** A raw transaction signed by `by` (the wallet by default), by default the approval the SDK's client signs. */
async function signedTx(
  wallet: DevnetAccount,
  fields: { to?: `0x${string}`; data?: Hex; value?: bigint; gas?: bigint; maxFeePerGas?: bigint } = {},
  by: DevnetAccount = wallet,
): Promise<Hex> {
  const fees = await usdc.client.estimateFeesPerGas();
  return privateKeyToAccount(by.privateKey).signTransaction({
    type: "eip1559",
    chainId: chain.devnet.chainId,
    nonce: await usdc.client.getTransactionCount({ address: wallet.address }),
    to: chain.devnet.usdc,
    data: approveData(PERMIT2_ADDRESS, maxUint256),
    gas: 70_000n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    ...fields,
  });
}

const approveData = (spender: `0x${string}`, amount: bigint) =>
  encodeFunctionData({ abi: usdcAbi, functionName: "approve", args: [spender, amount] });

/** An EIP-2612 permit of Permit2 signed by `by` for `wallet`'s tokens. */
async function signedPermit(
  wallet: DevnetAccount,
  fields: { value: bigint; nonce?: bigint; deadline: bigint },
  by: DevnetAccount = wallet,
): Promise<Hex> {
  return privateKeyToAccount(by.privateKey).signTypedData({
    domain: {
      name: "USD Coin",
      version: "2",
      chainId: chain.devnet.chainId,
      verifyingContract: chain.devnet.usdc,
    },
    types: eip2612Types,
    primaryType: "Permit",
    message: { owner: wallet.address, spender: PERMIT2_ADDRESS, nonce: 0n, ...fields },
  });
}

const stranger = (): DevnetAccount => {
  const privateKey = generatePrivateKey();
  return { address: privateKeyToAccount(privateKey).address, privateKey };
};

describe("gas sponsoring: what is refused before anything is sent", () => {
  /** /verify and /settle both refuse `payment` with `reason`, and the chain does not move. */
  async function refused(
    wallet: DevnetAccount,
    payment: PaymentPayload,
    requirements: PaymentRequirements,
    reason: string,
  ) {
    const before = await snapshot(wallet);
    const verified = await post("/verify", payment, requirements);
    expect(verified, JSON.stringify(verified)).toMatchObject({ isValid: false, invalidReason: reason });
    expect(verified.invalidMessage).toEqual(expect.any(String));
    const settled = await post("/settle", payment, requirements);
    expect(settled, JSON.stringify(settled)).toMatchObject({
      success: false,
      errorReason: reason,
      transaction: "",
    });
    expect(await snapshot(wallet)).toEqual(before);
  }

  it("refuses a permit for another spender or token, by or for another owner, for less than the payment, or stale", async () => {
    const wallet = await walletHolding(chain.devnet, HELD);
    const requirements = uptoRequirements("1000000");
    const fresh = () => pay(wallet, requirements, "eip2612");
    const other = stranger();
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 600);
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { spender: other.address }),
      requirements,
      "eip2612_spender_not_permit2",
    );
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { asset: other.address }),
      requirements,
      "eip2612_asset_mismatch",
    );
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { from: other.address }),
      requirements,
      "eip2612_from_mismatch",
    );
    // Signed by someone else than the payer it names.
    const forged = await signedPermit(wallet, { value: 1_000_000n, deadline }, other);
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { signature: forged, deadline: deadline.toString() }),
      requirements,
      "invalid_eip2612_signature",
    );
    // The payer's own signature, for less than its Permit2 authorization takes.
    const less = await signedPermit(wallet, { value: 999_999n, deadline });
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { signature: less, amount: "999999", deadline: deadline.toString() }),
      requirements,
      "permit2_2612_amount_mismatch",
    );
    // At a nonce the token is not at.
    const stale = await signedPermit(wallet, { value: 1_000_000n, nonce: 1n, deadline });
    await refused(
      wallet,
      altered(await fresh(), "eip2612", { signature: stale, nonce: "1", deadline: deadline.toString() }),
      requirements,
      "eip2612_nonce_mismatch",
    );
  });

  it("refuses a raw approval that is not exactly approve(Permit2, amount) on the token from the payer, or costs too much", async () => {
    const wallet = await walletHolding(chain.devnet, HELD);
    const requirements = exactRequirements("250000");
    const fresh = () => pay(wallet, requirements, "erc20Approval");
    const other = stranger();
    const fees = await usdc.client.estimateFeesPerGas();
    const cases: [Record<string, unknown>, string][] = [
      [
        { signedTransaction: await signedTx(wallet, { data: approveData(other.address, maxUint256) }) },
        "erc20_approval_tx_wrong_spender",
      ],
      [
        {
          signedTransaction: await signedTx(wallet, {
            data: encodeFunctionData({ abi: usdcAbi, functionName: "transfer", args: [other.address, 1n] }),
          }),
        },
        "erc20_approval_tx_wrong_selector",
      ],
      [
        { signedTransaction: await signedTx(wallet, { to: other.address }) },
        "erc20_approval_tx_wrong_target",
      ],
      [{ signedTransaction: await signedTx(wallet, { value: 1n }) }, "erc20_approval_tx_invalid_calldata"],
      [
        {
          signedTransaction: await signedTx(wallet, {
            data: `${approveData(PERMIT2_ADDRESS, maxUint256)}00`,
          }),
        },
        "erc20_approval_tx_invalid_calldata",
      ],
      [{ signedTransaction: await signedTx(wallet, {}, other) }, "erc20_approval_tx_signer_mismatch"],
      [{ from: other.address }, "erc20_approval_from_mismatch"],
      [
        {
          amount: "249999",
          signedTransaction: await signedTx(wallet, { data: approveData(PERMIT2_ADDRESS, 249_999n) }),
        },
        "erc20_approval_amount_too_small",
      ],
      [{ signedTransaction: await signedTx(wallet, { gas: 1_000_000n }) }, "erc20_approval_tx_too_costly"],
      [
        { signedTransaction: await signedTx(wallet, { maxFeePerGas: fees.maxFeePerGas * 10n }) },
        "erc20_approval_tx_too_costly",
      ],
    ];
    for (const [change, reason] of cases)
      await refused(wallet, altered(await fresh(), "erc20Approval", change), requirements, reason);
  });

  it("sponsors no approval without the payment it makes possible", async () => {
    // A wallet whose USDC does not cover the price: its approval would pay for nothing.
    const poor = await walletHolding(chain.devnet, 1_000n);
    await refused(
      poor,
      await pay(poor, exactRequirements("250000"), "erc20Approval"),
      exactRequirements("250000"),
      "insufficient_funds",
    );
    await refused(
      poor,
      await pay(poor, uptoRequirements("250000"), "eip2612"),
      uptoRequirements("250000"),
      "insufficient_funds",
    );

    // An upto call that metered nothing moves nothing: no funding, no approval, no settlement.
    const wallet = await walletHolding(chain.devnet, HELD);
    const requirements = uptoRequirements("1000000");
    const payment = await pay(wallet, requirements, "erc20Approval");
    expect(await post("/verify", payment, requirements)).toMatchObject({ isValid: true });
    const before = await snapshot(wallet);
    expect(await post("/settle", payment, { ...requirements, amount: "0" })).toMatchObject({
      success: true,
      transaction: "",
      amount: "0",
    });
    expect(await snapshot(wallet)).toEqual(before);
  });

  for (const kind of ["eip2612", "erc20Approval"] as const) {
    it(`settles plainly, sponsoring nothing, a ${kind} payment from a wallet that has the allowance by then`, async () => {
      const wallet = await walletHolding(chain.devnet, HELD);
      const requirements = exactRequirements("250000");
      const payment = await pay(wallet, requirements, kind);
      expect(await post("/verify", payment, requirements)).toMatchObject({ isValid: true });
      // The wallet approves Permit2 itself (given the ETH for it, then none), after signing.
      await fundedApproval(wallet);
      const before = { nonce: await facilitatorNonce(), charged: await charged() };
      const settled = await post("/settle", payment, requirements);
      expect(settled, JSON.stringify(settled)).toMatchObject({ success: true });
      const { input } = await usdc.client.getTransaction({ hash: settled.transaction as Hex });
      expect(decodeFunctionData({ abi: exactProxyAbi, data: input }).functionName).toBe("settle");
      expect(await facilitatorNonce()).toBe(before.nonce + 1);
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - 250_000n);
      // The permit was not used (the token's nonce for it is still 0), and no approval was funded.
      expect(
        await usdc.client.readContract({
          address: chain.devnet.usdc,
          abi: usdcAbi,
          functionName: "nonces",
          args: [wallet.address],
        }),
      ).toBe(0n);
      expect((await charged()).approval ?? 0n).toBe(before.charged.approval ?? 0n);
    });
  }
});

/** The wallet's own approval of Permit2, its gas given by a buyer and the rest taken back. */
async function fundedApproval(wallet: DevnetAccount) {
  await usdc.client.request({
    method: "anvil_setBalance" as never,
    params: [wallet.address, "0x2386f26fc10000"] as never,
  });
  const hash = (await usdc.client.request({
    method: "eth_sendRawTransaction",
    params: [await signedTx(wallet)],
  })) as Hex;
  expect((await usdc.receipt(hash)).status).toBe("success");
  await usdc.client.request({
    method: "anvil_setBalance" as never,
    params: [wallet.address, "0x0"] as never,
  });
}

describe("gas sponsoring under concurrency", () => {
  for (const kind of ["eip2612", "erc20Approval"] as const) {
    it(`sponsors a ${kind} payment sent five times at once once: one approval, one settlement`, async () => {
      const wallet = await walletHolding(chain.devnet, HELD);
      const requirements = uptoRequirements("1000000");
      const payment = await pay(wallet, requirements, kind);
      expect(await post("/verify", payment, requirements)).toMatchObject({ isValid: true });
      const nonce = await facilitatorNonce();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => post("/settle", payment, { ...requirements, amount: "100000" })),
      );
      expect(answers.filter((a) => a.success === true)).toHaveLength(1);
      // The permit rides in the settlement; the approval needs its funding besides.
      expect(await facilitatorNonce()).toBe(nonce + (kind === "eip2612" ? 1 : 2));
      expect(await usdc.balanceOf(wallet.address)).toBe(HELD - 100_000n);
    });
  }

  it("sponsors one approval for two payments of one wallet at once: the second finds the allowance", async () => {
    const wallet = await walletHolding(chain.devnet, HELD);
    const requirements = exactRequirements("250000");
    const [first, second] = [
      await pay(wallet, requirements, "erc20Approval"),
      await pay(wallet, requirements, "erc20Approval"),
    ];
    for (const p of [first, second])
      expect(await post("/verify", p, requirements)).toMatchObject({ isValid: true });
    const nonce = await facilitatorNonce();
    const answers = await Promise.all([first, second].map((p) => post("/settle", p, requirements)));
    expect(answers.map((a) => a.success)).toEqual([true, true]);
    // One funding and two settlements; the buyer sent its one approval.
    expect(await facilitatorNonce()).toBe(nonce + 3);
    expect(await usdc.nonceOf(wallet.address)).toBe(1);
    expect(await usdc.balanceOf(wallet.address)).toBe(HELD - 500_000n);
  });
});
