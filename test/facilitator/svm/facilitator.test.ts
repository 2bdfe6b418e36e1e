/**
 * The project's facilitator on the local Solana (issue 86 item 5), over its HTTP face: `/supported` names its fee
 * payer; one payment sent to /settle by ten requests at once moves the USDC once and is answered success once;
 * the fee payer pays the fee and nothing else; a keyed settlement is refused before signing when the key's SOL
 * budget cannot hold its fee, and charged the fee to the lamport when it can; a transaction that would make the
 * fee payer pay for anything besides the fee (a transfer from its own USDC, an account created with its SOL, a
 * Memo it would sign) is refused at /verify and /settle, nothing moved.
 */
import {
  AccountRole,
  type AccountSignerMeta,
  type Address,
  appendTransactionMessageInstructions,
  createNoopSigner,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransactionMessageWithSigners,
  pipe,
  type Rpc,
  type SolanaRpcApi,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type TransactionSigner,
} from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import { getTransferCheckedInstruction } from "@solana-program/token";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { COMPUTE_BUDGET_PROGRAM_ADDRESS, MEMO_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from "@x402/svm";
import { ExactSvmScheme as ExactClient } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  SOLANA_NETWORK,
  SOLANA_USDC_DECIMALS,
  SOLANA_USDC_MINT,
} from "../../../src/chain/solana/constants.ts";
import {
  type SolanaDevnet,
  startSolanaDevnet,
  usdcAccountOf,
} from "../../../src/chain/solana/devnet/index.ts";
import type { Database } from "../../../src/common/db/index.ts";
import { addKey, type Facilitator } from "../../../src/facilitator/index.ts";
import { createSvmFacilitator, FEE_PAYER_NOT_ISOLATED } from "../../../src/facilitator/svm/facilitator.ts";
import { WEI_PER_LAMPORT } from "../../../src/facilitator/svm/signer.ts";
import { readSvmPayment } from "../../../src/facilitator/svm/transaction.ts";
import { LEDGER_KIND, openTestDatabase } from "../../helpers/db.ts";
import { openUsdcAccount, signerOf, usdcAccountFor } from "../../helpers/solana-devnet.ts";

const PRICE = 12_345n;

let devnet: SolanaDevnet;
let rpc: Rpc<SolanaRpcApi>;
let db: Database;
let facilitator: Facilitator;
let merchant: KeyPairSigner;
const buyers: KeyPairSigner[] = [];
const closers: (() => Promise<void> | void)[] = [];

const usdcOf = async (owner: string) =>
  BigInt((await rpc.getTokenAccountBalance((await usdcAccountOf(owner)) as Address).send()).value.amount);
const solOf = async (owner: string) => (await rpc.getBalance(owner as Address).send()).value;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ buyers: 3 });
  closers.push(() => devnet.stop());
  rpc = createSolanaRpc(devnet.rpc) as Rpc<SolanaRpcApi>;
  for (const b of devnet.buyers) buyers.push(await signerOf(b.secretKey));
  const ledger = await openTestDatabase(LEDGER_KIND);
  closers.push(ledger.close);
  db = ledger.db;
  facilitator = await createSvmFacilitator({
    db,
    rpc: devnet.rpc,
    feePayerKey: devnet.feePayer.secretKey,
    pollingIntervalMs: 20,
  });
  closers.push(() => facilitator.close());
  merchant = await generateKeyPairSigner();
  await openUsdcAccount(rpc, merchant);
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

function requirements(feePayer: string): PaymentRequirements {
  return {
    scheme: "exact",
    network: SOLANA_NETWORK,
    asset: SOLANA_USDC_MINT,
    amount: PRICE.toString(),
    payTo: merchant.address,
    maxTimeoutSeconds: 60,
    extra: { feePayer },
  } as PaymentRequirements;
}

async function pay(buyer: KeyPairSigner, accepted: PaymentRequirements): Promise<PaymentPayload> {
  const created = await new ExactClient(buyer, { rpcUrl: devnet.rpc }).createPaymentPayload(2, accepted);
  return {
    ...created,
    accepted,
    resource: { url: "http://127.0.0.1/api/calc", description: "", mimeType: "" },
  };
}

async function post(
  on: Facilitator,
  path: "/verify" | "/settle",
  payment: PaymentPayload,
  accepted: PaymentRequirements,
  key?: string,
): Promise<{ status: number; body: SettleResponse & { isValid?: boolean; invalidReason?: string } }> {
  const response = await on.app.fetch(
    new Request(`http://127.0.0.1${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: accepted }),
    }),
  );
  return { status: response.status, body: await response.json() };
}

describe("the facilitator on Solana", () => {
  it("lists exact on Solana with its fee payer", async () => {
    const supported = await (await facilitator.app.fetch(new Request("http://127.0.0.1/supported"))).json();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({
        x402Version: 2,
        scheme: "exact",
        network: SOLANA_NETWORK,
        extra: { feePayer: devnet.feePayer.address },
      }),
    );
    expect(supported.signers["solana:*"]).toEqual([devnet.feePayer.address]);
  });

  it("settles one payment sent by ten requests at once once, answering success once; the fee payer pays only the fee", async () => {
    const buyer = buyers[0] as KeyPairSigner;
    const accepted = requirements(devnet.feePayer.address);
    const payment = await pay(buyer, accepted);
    const fee = readSvmPayment(payment.payload)?.feeLamports as bigint;
    const before = {
      buyer: await usdcOf(buyer.address),
      merchant: await usdcOf(merchant.address),
      feePayer: await solOf(devnet.feePayer.address),
    };
    expect((await post(facilitator, "/verify", payment, accepted)).body).toMatchObject({ isValid: true });

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(facilitator, "/settle", payment, accepted)),
    );
    const successes = answers.filter((a) => a.body.success);
    expect(successes).toHaveLength(1);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    for (const refused of answers.filter((a) => !a.body.success))
      expect(refused.body.errorReason).toBe("duplicate_settlement");
    const signature = successes[0]?.body.transaction as string;

    expect(await usdcOf(buyer.address)).toBe(before.buyer - PRICE);
    expect(await usdcOf(merchant.address)).toBe(before.merchant + PRICE);
    const landed = await rpc
      .getTransaction(signature as never, { maxSupportedTransactionVersion: 0, encoding: "json" })
      .send();
    expect(landed?.meta?.fee).toBe(fee);
    expect(await solOf(devnet.feePayer.address)).toBe(before.feePayer - fee);

    // In the ledger as an EVM authorization is: settled, its signature and slot, delivered once.
    const { rows } = await db.query<{ state: string; tx_hash: string; block_number: string; payer: string }>(
      "SELECT state, tx_hash, block_number, payer FROM facilitator_authorizations WHERE network = $1 AND tx_hash = $2",
      [SOLANA_NETWORK, signature],
    );
    expect(rows).toEqual([
      expect.objectContaining({ state: "settled", tx_hash: signature, payer: buyer.address }),
    ]);
    expect(Number(rows[0]?.block_number)).toBeGreaterThan(0);

    // Later: verify refuses it, and so does settle.
    expect((await post(facilitator, "/verify", payment, accepted)).body).toMatchObject({
      isValid: false,
      invalidReason: "duplicate_settlement",
    });
    expect((await post(facilitator, "/settle", payment, accepted)).body).toMatchObject({ success: false });
    expect(await usdcOf(merchant.address)).toBe(before.merchant + PRICE);
  });

  it("refuses a keyed settlement whose fee the key's SOL budget cannot hold before signing, and charges the fee when it can", async () => {
    const keyed = await createSvmFacilitator({
      db,
      rpc: devnet.rpc,
      feePayerKey: devnet.feePayer.secretKey,
      pollingIntervalMs: 20,
      access: { open: false },
    });
    closers.push(() => keyed.close());
    const accepted = requirements(devnet.feePayer.address);
    const buyer = buyers[1] as KeyPairSigner;
    const payment = await pay(buyer, accepted);
    const fee = readSvmPayment(payment.payload)?.feeLamports as bigint;
    const poor = await addKey(db, {
      name: "poor",
      payees: null,
      gasBudgetWei: 10n ** 18n,
      chainGasBudgetsWei: { [SOLANA_NETWORK]: (fee - 1n) * WEI_PER_LAMPORT },
      ratePerMinute: 60,
    });
    const rich = await addKey(db, {
      name: "rich",
      payees: null,
      gasBudgetWei: 10n ** 18n,
      chainGasBudgetsWei: { [SOLANA_NETWORK]: 100n * fee * WEI_PER_LAMPORT },
      ratePerMinute: 60,
    });
    const before = {
      merchant: await usdcOf(merchant.address),
      feePayer: await solOf(devnet.feePayer.address),
    };

    // Without a key, a closed facilitator refuses; with the poor key, 429 before the fee payer signs.
    expect((await post(keyed, "/settle", payment, accepted)).status).toBe(401);
    // (The SDK logs the refused signature to the console; expected here, so kept out of the output.)
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const refused = await post(keyed, "/settle", payment, accepted, poor.key).finally(() =>
      quiet.mockRestore(),
    );
    expect(refused.status).toBe(429);
    expect(refused.body.errorReason).toBe("key_over_budget");
    expect(await usdcOf(merchant.address)).toBe(before.merchant);
    expect(await solOf(devnet.feePayer.address)).toBe(before.feePayer);

    // The same payment with a key that can hold it: settled, the key charged the fee to the lamport.
    const settled = await post(keyed, "/settle", payment, accepted, rich.key);
    expect(settled.body).toMatchObject({ success: true });
    expect(await usdcOf(merchant.address)).toBe(before.merchant + PRICE);
    const { rows } = await db.query<{ spent_wei: string; reserved_wei: string }>(
      "SELECT spent_wei, reserved_wei FROM facilitator_key_days WHERE key_id = $1 AND network = $2",
      [rich.apiKey.id, SOLANA_NETWORK],
    );
    expect(rows.map((r) => [BigInt(r.spent_wei), BigInt(r.reserved_wei)])).toEqual([
      [fee * WEI_PER_LAMPORT, 0n],
    ]);
  });
});

/** `signer` as an instruction's signing account, the signer it is signed with beside it. */
const signerMeta = (signer: TransactionSigner): AccountSignerMeta => ({
  address: signer.address,
  role: AccountRole.READONLY_SIGNER,
  signer,
});

/** The compute budget as the SDK's client sets it: a limit of 20,000 units, a price of 1 micro-lamport a unit. */
function computeBudget(): Instruction[] {
  const limit = new Uint8Array(5);
  limit[0] = 2;
  new DataView(limit.buffer).setUint32(1, 20_000, true);
  const price = new Uint8Array(9);
  price[0] = 3;
  new DataView(price.buffer).setBigUint64(1, 1n, true);
  const program = COMPUTE_BUDGET_PROGRAM_ADDRESS as Address;
  return [
    { programAddress: program, data: limit },
    { programAddress: program, data: price },
  ];
}

/**
 * A payment whose transaction `feePayer` (a no-op signer of the facilitator's address) pays the fee of, made of
 * the compute budget and `instructions`, signed by every signer they name but the fee payer, whose signature is
 * left to the facilitator as in any `exact` payment on Solana.
 */
async function payloadOf(
  feePayer: TransactionSigner,
  instructions: Instruction[],
  accepted: PaymentRequirements,
): Promise<PaymentPayload> {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(feePayer, tx),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
    (tx) => appendTransactionMessageInstructions([...computeBudget(), ...instructions], tx),
  );
  const signed = await partiallySignTransactionMessageWithSigners(message);
  return {
    x402Version: 2,
    accepted,
    payload: { transaction: getBase64EncodedWireTransaction(signed) },
    resource: { url: "http://127.0.0.1/api/calc", description: "", mimeType: "" },
  };
}

describe("the facilitator on Solana pays the fee and nothing else", () => {
  it("refuses, at /verify and at /settle, a transaction that makes its fee payer pay for anything besides the fee: nothing moves", async () => {
    const buyer = buyers[2] as KeyPairSigner;
    const feePayer = createNoopSigner(devnet.feePayer.address as Address);
    // The fee payer holds USDC, as a facilitator's wallet may: what a transfer it authorizes would take.
    await usdcAccountFor(rpc, buyer, devnet.feePayer.address, 10n * PRICE);
    const accepted = requirements(devnet.feePayer.address);
    const transfer = async (source: string, authority: TransactionSigner) =>
      getTransferCheckedInstruction({
        source: (await usdcAccountOf(source)) as Address,
        mint: SOLANA_USDC_MINT as Address,
        destination: (await usdcAccountOf(merchant.address)) as Address,
        authority,
        amount: PRICE,
        decimals: SOLANA_USDC_DECIMALS,
      });
    const rent = (await rpc.getMinimumBalanceForRentExemption(165n).send()) as bigint;
    const cases: [string, Instruction[]][] = [
      // The SDK refuses this one too (its transfer's authority is a fee payer it manages).
      [
        "the fee payer as the transfer's source and authority",
        [await transfer(devnet.feePayer.address, feePayer)],
      ],
      // And this (an instruction after the transfer that is neither Memo nor Lighthouse).
      [
        "the buyer's payment, then an account created with the fee payer's SOL",
        [
          await transfer(buyer.address, buyer),
          getCreateAccountInstruction({
            payer: feePayer,
            newAccount: await generateKeyPairSigner(),
            lamports: rent,
            space: 165n,
            programAddress: TOKEN_PROGRAM_ADDRESS as Address,
          }),
        ],
      ],
      // Not this one: the SDK's static checks allow a Memo after the transfer and look at no Memo's signers, so
      // only this facilitator's own check (transaction.ts, `feePayerTouched`) stands between it and a signature.
      [
        "the buyer's payment, then a Memo the fee payer signs",
        [
          await transfer(buyer.address, buyer),
          {
            programAddress: MEMO_PROGRAM_ADDRESS as Address,
            accounts: [signerMeta(feePayer)],
            data: new TextEncoder().encode("signed by the fee payer"),
          },
        ],
      ],
    ];
    for (const [name, instructions] of cases) {
      const payment = await payloadOf(feePayer, instructions, accepted);
      const before = {
        feePayerSol: await solOf(devnet.feePayer.address),
        feePayerUsdc: await usdcOf(devnet.feePayer.address),
        buyer: await usdcOf(buyer.address),
        merchant: await usdcOf(merchant.address),
      };
      expect((await post(facilitator, "/verify", payment, accepted)).body, name).toMatchObject({
        isValid: false,
        invalidReason: FEE_PAYER_NOT_ISOLATED,
      });
      // Settled without a /verify first (x402's `upfront` flow): refused the same, before the fee payer signs.
      expect((await post(facilitator, "/settle", payment, accepted)).body, name).toMatchObject({
        success: false,
        errorReason: FEE_PAYER_NOT_ISOLATED,
      });
      expect(
        {
          feePayerSol: await solOf(devnet.feePayer.address),
          feePayerUsdc: await usdcOf(devnet.feePayer.address),
          buyer: await usdcOf(buyer.address),
          merchant: await usdcOf(merchant.address),
        },
        name,
      ).toEqual(before);
    }
  });
});
