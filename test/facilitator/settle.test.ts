import type { PaymentPayload } from "@x402/core/types";
import { createTestClient, http, parseEventLogs } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Devnet, devnetChain } from "../../src/chain/devnet/index.ts";
import { usdcAbi } from "../../src/chain/usdc.ts";
import { type Database, openDatabase } from "../../src/common/db/index.ts";
import { createFacilitator, type Facilitator, reasons } from "../../src/facilitator/index.ts";
import { useDevnet, walletHolding } from "../helpers/chain.ts";
import { DATABASE_KINDS, openTestDatabase, type TestDatabaseOptions } from "../helpers/db.ts";
import { startRpcProxy } from "../helpers/rpc-proxy.ts";
import { fundedAccount, sendTransfer } from "../helpers/settle.ts";
import {
  newMerchant,
  pay,
  requirementsFor,
  transferWithAuthorizationData,
  usdcReader,
} from "../helpers/x402.ts";

const chain = useDevnet({ buyers: 4 });
let usdc: ReturnType<typeof usdcReader>;

beforeAll(async () => {
  usdc = usdcReader(chain.devnet.rpc);
});

const options = () => ({
  rpc: chain.devnet.rpc,
  chain: devnetChain(chain.devnet.rpc),
  pollingIntervalMs: 20,
  resolveIntervalMs: 0,
});

/** A ledger row's state and hash. */
async function ledger(db: Database, payment: PaymentPayload) {
  const { authorization } = payment.payload as { authorization: { from: string; nonce: string } };
  const { rows } = await db.query<{ state: string; tx_hash: string | null; block_number: bigint | null }>(
    "SELECT state, tx_hash, block_number FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2 AND network = $3",
    [authorization.from.toLowerCase(), authorization.nonce.toLowerCase(), payment.accepted.network],
  );
  return rows[0];
}

describe.each(DATABASE_KINDS)("facilitator settlement (ledger on %s)", (kind) => {
  let db: Database;
  let dbOptions: TestDatabaseOptions;
  let closeDb: () => Promise<void>;
  let facilitator: Facilitator;
  beforeAll(async () => {
    ({ db, options: dbOptions, close: closeDb } = await openTestDatabase(kind));
    facilitator = await createFacilitator({
      db,
      privateKey: chain.devnet.facilitatorAccount.privateKey,
      ...options(),
    });
  });
  afterAll(async () => {
    await facilitator?.close();
    await closeDb?.();
  });

  it("verifies and settles a real payment: USDC moves in a transaction from the facilitator account", async () => {
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "1500");
    const payment = await pay(buyer, requirements);
    const before = await usdc.balanceOf(buyer.address);

    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: true,
      invalidReason: undefined,
      payer: buyer.address,
    });
    expect(await ledger(db, payment)).toMatchObject({ state: "verified", tx_hash: null });

    const settled = await facilitator.settle(payment, requirements);
    expect(settled, JSON.stringify(settled)).toMatchObject({
      success: true,
      network: "eip155:8453",
      payer: buyer.address,
    });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);

    const receipt = await usdc.client.getTransactionReceipt({ hash: settled.transaction as `0x${string}` });
    expect(receipt.status).toBe("success");
    expect(receipt.from).toBe(chain.devnet.facilitatorAccount.address.toLowerCase());
    const logs = parseEventLogs({ abi: usdcAbi, logs: receipt.logs });
    const { authorization } = payment.payload as { authorization: { nonce: string } };
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([
      ["AuthorizationUsed", { authorizer: buyer.address, nonce: authorization.nonce }],
      ["Transfer", { from: buyer.address, to: merchant, value: 1500n }],
    ]);
    expect(await usdc.balanceOf(merchant)).toBe(1500n);
    expect(await usdc.balanceOf(buyer.address)).toBe(before - 1500n);
    expect(await ledger(db, payment)).toEqual({
      state: "settled",
      tx_hash: settled.transaction,
      block_number: receipt.blockNumber,
    });
  });

  it("settles a payment never verified (x402's upfront flow) once, verifying it first; other content under a verified nonce is refused and sends nothing", async () => {
    const [, buyer] = chain.devnet.buyers as [Devnet["buyers"][0], Devnet["buyers"][0]];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant);
    const payment = await pay(buyer, requirements);
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    // Verified, then presented with other content under the same nonce: not what was verified.
    expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
    const forged = structuredClone(payment);
    (forged.payload as { authorization: { value: string } }).authorization.value = "999999";
    const forgedRequirements = { ...requirements, amount: "999999" };
    expect(await facilitator.settle(forged, forgedRequirements)).toMatchObject({
      success: false,
      errorReason: reasons.PAYMENT_NOT_VERIFIED,
      transaction: "",
    });
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce);

    // Never verified: /settle verifies it as /verify would, then settles it once.
    const upfront = await pay(buyer, requirements);
    expect(await ledger(db, upfront)).toBeUndefined();
    const settled = await facilitator.settle(upfront, requirements);
    expect(settled, JSON.stringify(settled)).toMatchObject({ success: true, payer: buyer.address });
    expect(await ledger(db, upfront)).toMatchObject({ state: "settled", tx_hash: settled.transaction });
    expect(await usdc.balanceOf(merchant)).toBe(BigInt(requirements.amount));
    expect(await facilitator.settle(upfront, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
    });

    // The same unverified payment sent several times at once: verified and settled once, one success.
    const again = await pay(buyer, requirements);
    const sentBefore = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => facilitator.settle(again, requirements)),
    );
    expect(answers.filter((a) => a.success)).toHaveLength(1);
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sentBefore + 1);
    expect(await usdc.balanceOf(merchant)).toBe(2n * BigInt(requirements.amount));
  });

  it("fails verification of a bad signature, which then cannot be settled either", async () => {
    const [, , buyer] = chain.devnet.buyers as Devnet["buyers"];
    const requirements = requirementsFor(newMerchant());
    const payment = await pay(buyer as Devnet["buyers"][0], requirements);
    const tampered = structuredClone(payment);
    const sig = (tampered.payload as { signature: string }).signature;
    // Same length, another signer: flip one byte of r.
    (tampered.payload as { signature: string }).signature =
      `${sig.slice(0, 10)}${sig[10] === "0" ? "1" : "0"}${sig.slice(11)}`;

    expect(await facilitator.verify(tampered, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_signature",
    });
    // /settle verifies what it was not asked to verify, and refuses it for the same reason.
    expect(await facilitator.settle(tampered, requirements)).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_signature",
      transaction: "",
    });
  });

  it("settles one authorization once and answers its success once: concurrent and repeated calls", async () => {
    const [, , , buyer] = chain.devnet.buyers as Devnet["buyers"];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "2000");
    const payment = await pay(buyer as Devnet["buyers"][0], requirements);
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);

    const answers = await Promise.all(
      Array.from({ length: 8 }, () => facilitator.settle(payment, requirements)),
    );
    // One transaction; one caller told of its success, the others that the nonce is used (as the
    // official facilitator answers), so a resource server delivers the payment once.
    const won = answers.filter((a) => a.success);
    expect(won).toHaveLength(1);
    const hash = won[0]?.transaction as string;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    for (const lost of answers.filter((a) => !a.success)) {
      expect(lost).toMatchObject({
        success: false,
        errorReason: reasons.NONCE_ALREADY_USED,
        transaction: "",
        payer: buyer?.address,
      });
    }
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce + 1);
    expect(await usdc.balanceOf(merchant)).toBe(2000n);

    // Later: the same refusal; and /verify no longer accepts it.
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      transaction: "",
    });
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
      invalidMessage: `this authorization is already settled (transaction ${hash})`,
    });
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce + 1);
    expect(await usdc.balanceOf(merchant)).toBe(2000n);
  });

  it("refuses a wrong recipient or amount, an expiring authorization and a payer without funds", async () => {
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const requirements = requirementsFor(newMerchant(), "1000");
    const payment = await pay(buyer, requirements);
    const refusals: [PaymentPayload, typeof requirements, string | RegExp][] = [
      [payment, { ...requirements, payTo: newMerchant() }, "invalid_exact_evm_recipient_mismatch"],
      [
        payment,
        { ...requirements, amount: "2000" },
        "invalid_exact_evm_payload_authorization_value_mismatch",
      ],
      // Valid for one more second only: too little to settle (the SDK wants 6).
      [
        await pay(buyer, { ...requirements, maxTimeoutSeconds: 1 }),
        { ...requirements, maxTimeoutSeconds: 1 },
        "invalid_exact_evm_payload_authorization_valid_before",
      ],
      // A signature by a key with no USDC: the spec's reason, whatever the SDK's diagnosis.
      [
        await pay(
          (() => {
            const privateKey = generatePrivateKey();
            return { address: privateKeyToAccount(privateKey).address, privateKey };
          })(),
          requirements,
        ),
        requirements,
        "insufficient_funds",
      ],
    ];
    for (const [payload, reqs, reason] of refusals) {
      expect(await facilitator.verify(payload, reqs)).toMatchObject({
        isValid: false,
        invalidReason: typeof reason === "string" ? reason : expect.stringMatching(reason),
      });
      expect(await ledger(db, payload)).toBeUndefined();
    }
  });

  it("answers insufficient_funds at settle when the payer moved its funds away after /verify", async () => {
    const wallet = await fundedAccount(chain.devnet, await walletHolding(chain.devnet, 1000n));
    const requirements = requirementsFor(newMerchant(), "1000");
    const payment = await pay(wallet, requirements);
    expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
    const away = await sendTransfer(chain.devnet, wallet, newMerchant(), 1000n);
    // Polled, not watched: viem's block-watching wait can miss a block mined on demand.
    expect((await usdc.receipt(away)).status).toBe("success");

    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.INSUFFICIENT_FUNDS,
      errorMessage: "the payer holds 0 atomic units of the token, less than the 1000 at stake",
      transaction: "",
    });
    // Nothing was broadcast: the authorization may settle once the funds are back.
    expect(await ledger(db, payment)).toMatchObject({ state: "verified" });
  });

  it("of payments a wallet can afford only some of, settled at once, broadcasts only those it can pay", async () => {
    const wallet = await walletHolding(chain.devnet, 2000n);
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "1000");
    const payments = await Promise.all([1, 2, 3].map(() => pay(wallet, requirements)));
    // Each is covered by the balance on its own, so all three verify.
    for (const payment of payments)
      expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
    const sent = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);

    const answers = await Promise.all(payments.map((payment) => facilitator.settle(payment, requirements)));
    expect(answers.filter((a) => a.success)).toHaveLength(2);
    // The third is refused before broadcast: no transaction that would revert at the facilitator's cost.
    expect(answers.filter((a) => !a.success)).toEqual([
      expect.objectContaining({
        errorReason: reasons.INSUFFICIENT_FUNDS,
        payer: wallet.address,
        transaction: "",
      }),
    ]);
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(sent + 2);
    expect(await usdc.balanceOf(merchant)).toBe(2000n);
    expect(await usdc.balanceOf(wallet.address)).toBe(0n);
    // Refused, not spent: the authorization settles once the wallet holds the money again.
    const refused = payments[answers.findIndex((a) => !a.success)] as PaymentPayload;
    expect(await ledger(db, refused)).toMatchObject({ state: "verified", tx_hash: null });
    const back = await sendTransfer(
      chain.devnet,
      chain.devnet.buyers[0] as Devnet["buyers"][0],
      wallet.address,
      1000n,
    );
    expect((await usdc.receipt(back)).status).toBe("success");
    expect(await facilitator.settle(refused, requirements)).toMatchObject({ success: true });
    expect(await usdc.balanceOf(merchant)).toBe(3000n);
  });

  it("settles a wallet's payments at once when its balance covers them all", async () => {
    const wallet = await walletHolding(chain.devnet, 3000n);
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "1000");
    const payments = await Promise.all([1, 2, 3].map(() => pay(wallet, requirements)));
    for (const payment of payments)
      expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
    // Not one after another: with no block mined, all three are broadcast and wait in the pool together.
    chain.miner.pause();
    let answers: Awaited<ReturnType<Facilitator["settle"]>>[];
    try {
      const settling = Promise.all(payments.map((payment) => facilitator.settle(payment, requirements)));
      const pool = createTestClient({ mode: "anvil", transport: http(chain.devnet.rpc) });
      let pending = 0;
      for (let tries = 0; tries < 250 && pending < 3; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        pending = (await pool.getTxpoolStatus()).pending;
      }
      expect(pending).toBe(3);
      chain.miner.resume();
      answers = await settling;
    } finally {
      chain.miner.resume();
    }
    expect(answers.map((a) => a.success)).toEqual([true, true, true]);
    expect(await usdc.balanceOf(merchant)).toBe(3000n);
  });

  it("answers concurrent verifications of one authorization alike, with one ledger row", async () => {
    const [, buyer] = chain.devnet.buyers as [Devnet["buyers"][0], Devnet["buyers"][0]];
    const requirements = requirementsFor(newMerchant());
    const payment = await pay(buyer, requirements);
    const tampered = structuredClone(payment);
    (tampered.payload as { authorization: { value: string } }).authorization.value = "1001";
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => facilitator.verify(payment, requirements)),
      facilitator.verify(tampered, { ...requirements, amount: "1001" }),
    ]);
    expect(answers.slice(0, 6).every((a) => a.isValid)).toBe(true);
    // Same payer and nonce, other content: its own answer, not one shared with the valid ones.
    expect(answers[6]).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_signature" });
    expect(await ledger(db, payment)).toMatchObject({ state: "verified" });
    const { rowCount } = await db.query(
      "SELECT 1 FROM facilitator_authorizations WHERE payer = $1 AND nonce = $2",
      [
        buyer.address.toLowerCase(),
        (payment.payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase(),
      ],
    );
    expect(rowCount).toBe(1);
  });

  it.runIf(kind === "postgres")(
    "settles once when several processes share the ledger and the key",
    async () => {
      // A second facilitator on its own pool stands for a second process on the same server.
      const otherDb = await openDatabase(dbOptions);
      const other = await createFacilitator({
        db: otherDb,
        privateKey: chain.devnet.facilitatorAccount.privateKey,
        ...options(),
      });
      try {
        const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
        const merchant = newMerchant();
        const requirements = requirementsFor(merchant, "4000");
        const payment = await pay(buyer, requirements);
        const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
        expect((await other.verify(payment, requirements)).isValid).toBe(true);
        const answers = await Promise.all(
          [facilitator, other, facilitator, other, other, facilitator].map((f) =>
            f.settle(payment, requirements),
          ),
        );
        // One transaction, its success told to one caller across both processes; the rest: nonce used.
        expect(answers.filter((a) => a.success)).toHaveLength(1);
        expect(
          answers.filter((a) => !a.success).every((a) => a.errorReason === reasons.NONCE_ALREADY_USED),
        ).toBe(true);
        expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce + 1);
        expect(await usdc.balanceOf(merchant)).toBe(4000n);
      } finally {
        await other.close();
        await otherDb.close();
      }
    },
  );

  it("recovers when the key sent a transaction from elsewhere (a stale nonce)", async () => {
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const signer = privateKeyToAccount(chain.devnet.facilitatorAccount.privateKey);
    const viemChain = devnetChain(chain.devnet.rpc);
    // Settle once so the submitter caches its next nonce, then use that nonce behind its back.
    const first = requirementsFor(newMerchant());
    const firstPayment = await pay(buyer, first);
    await facilitator.verify(firstPayment, first);
    const firstSettled = await facilitator.settle(firstPayment, first);
    expect(firstSettled, JSON.stringify(firstSettled)).toMatchObject({ success: true });
    const elsewhere = await usdc.client.sendRawTransaction({
      serializedTransaction: await signer.signTransaction({
        chainId: viemChain.id,
        type: "eip1559",
        nonce: await usdc.nonceOf(signer.address),
        to: signer.address,
        gas: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      }),
    });
    await usdc.receipt(elsewhere);

    const merchant = newMerchant();
    const second = requirementsFor(merchant, "1234");
    const payment = await pay(buyer, second);
    await facilitator.verify(payment, second);
    const settled = await facilitator.settle(payment, second);
    expect(settled, JSON.stringify(settled)).toMatchObject({ success: true });
    expect(await usdc.balanceOf(merchant)).toBe(1234n);
    expect(await ledger(db, payment)).toMatchObject({ state: "settled", tx_hash: settled.transaction });
  });

  it("refuses an authorization already used on chain, before and after verification", async () => {
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const owner = privateKeyToAccount(chain.devnet.owner.privateKey);
    const viemChain = devnetChain(chain.devnet.rpc);
    /** Someone else (here the token owner) submits the buyer's signed authorization first. */
    const submitElsewhere = async (payment: PaymentPayload) => {
      const hash = await usdc.client.sendRawTransaction({
        serializedTransaction: await owner.signTransaction({
          chainId: viemChain.id,
          type: "eip1559",
          nonce: await usdc.nonceOf(owner.address),
          to: chain.devnet.usdc,
          gas: 200_000n,
          maxFeePerGas: 10n ** 10n,
          maxPriorityFeePerGas: 1n,
          data: transferWithAuthorizationData(payment),
        }),
      });
      await usdc.receipt(hash);
    };

    const early = await pay(buyer, requirementsFor(newMerchant()));
    await submitElsewhere(early);
    expect(await facilitator.verify(early, early.accepted)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
      invalidMessage: "this authorization was already used on chain",
    });

    const late = await pay(buyer, requirementsFor(newMerchant()));
    expect((await facilitator.verify(late, late.accepted)).isValid).toBe(true);
    await submitElsewhere(late);
    const nonce = await usdc.nonceOf(chain.devnet.facilitatorAccount.address);
    expect(await facilitator.settle(late, late.accepted)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
      transaction: "",
    });
    expect(await usdc.nonceOf(chain.devnet.facilitatorAccount.address)).toBe(nonce);
    expect(await ledger(db, late)).toMatchObject({ state: "verified", tx_hash: null });
  });
});

describe("a confirmation that does not come in time", () => {
  let facilitator: Facilitator;
  let db: Database;
  let closeDb: () => Promise<void>;
  const key = generatePrivateKey();
  const signer = privateKeyToAccount(key).address;

  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(DATABASE_KINDS.at(-1) ?? "pglite"));
    // Its own signer, so its nonces never meet the other facilitators' on this chain.
    const test = createTestClient({
      chain: devnetChain(chain.devnet.rpc),
      mode: "anvil",
      transport: http(chain.devnet.rpc),
    });
    await test.setBalance({ address: signer, value: 10n ** 18n });
    facilitator = await createFacilitator({ db, privateKey: key, ...options(), confirmationTimeoutMs: 300 });
  });
  afterAll(async () => {
    chain.miner.resume();
    await facilitator?.close();
    await closeDb?.();
  });

  it("is pending with its hash, then resolved by looking at the chain, never by sending again", async () => {
    const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
    const merchant = newMerchant();
    const requirements = requirementsFor(merchant, "777");
    const payment = await pay(buyer, requirements);
    expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);

    chain.miner.pause();
    const first = await facilitator.settle(payment, requirements);
    expect(first).toMatchObject({
      success: false,
      errorReason: reasons.SETTLEMENT_PENDING,
      payer: buyer.address,
    });
    expect(first.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await ledger(db, payment)).toMatchObject({ state: "pending", tx_hash: first.transaction });
    // Broadcast but not mined: the chain alone would still accept it; the ledger refuses it.
    expect(await facilitator.verify(payment, requirements)).toMatchObject({
      isValid: false,
      invalidReason: reasons.NONCE_ALREADY_USED,
      invalidMessage: `this authorization is already pending (transaction ${first.transaction})`,
    });

    // Asked again while it is still unmined: the same hash, nothing new in the pool.
    const again = await facilitator.settle(payment, requirements);
    expect(again).toMatchObject({ errorReason: reasons.SETTLEMENT_PENDING, transaction: first.transaction });
    expect(await chain.miner.pending()).toBe(1);
    // The same row pending on another network, as a facilitator of several chains keeps it in the one
    // ledger: this chain's pass never looks at it (its node never saw that transaction).
    await db.query(
      `INSERT INTO facilitator_authorizations
       SELECT (jsonb_populate_record(a, '{"network": "eip155:42161"}'::jsonb)).*
       FROM facilitator_authorizations a WHERE tx_hash = $1`,
      [first.transaction],
    );
    expect(await facilitator.resolvePending()).toEqual({ checked: 1, resolved: 0 });

    await chain.devnet.mine(1);
    expect(await facilitator.resolvePending()).toEqual({ checked: 1, resolved: 1 });
    const other = await db.query<{ state: string }>(
      "SELECT state FROM facilitator_authorizations WHERE network = 'eip155:42161'",
    );
    expect(other.rows).toEqual([{ state: "pending" }]);
    expect(await ledger(db, payment)).toMatchObject({ state: "settled", tx_hash: first.transaction });
    // The background resolution did not answer anyone: the retry that comes next gets the success, once.
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: true,
      transaction: first.transaction,
    });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: reasons.NONCE_ALREADY_USED,
    });
    expect(await usdc.balanceOf(merchant)).toBe(777n);
    expect(await usdc.nonceOf(signer)).toBe(1);
  });
});

describe("the chain reads of a verification", () => {
  it("reads the payer's code once and simulates once, and settles with one code read", async () => {
    const calls: { method: string; params: unknown[] }[] = [];
    const proxy = await startRpcProxy(chain.devnet.rpc, ({ body }) => {
      for (const call of Array.isArray(body) ? body : [body]) calls.push(call);
      return { kind: "forward" };
    });
    const { db, close } = await openTestDatabase(DATABASE_KINDS.at(-1) ?? "pglite");
    const facilitator = await createFacilitator({
      db,
      privateKey: chain.devnet.facilitatorAccount.privateKey,
      ...options(),
      rpc: proxy.url,
    });
    try {
      const [buyer] = chain.devnet.buyers as [Devnet["buyers"][0]];
      const requirements = requirementsFor(newMerchant());
      const payment = await pay(buyer, requirements);
      const payerCode = () =>
        calls.filter(
          (c) =>
            c.method === "eth_getCode" && String(c.params[0]).toLowerCase() === buyer.address.toLowerCase(),
        ).length;
      calls.length = 0;
      expect((await facilitator.verify(payment, requirements)).isValid).toBe(true);
      // The SDK asks for the payer's code twice and simulates the transfer: shared with the reads started
      // early. No authorizationState read for a valid payment.
      expect(payerCode()).toBe(1);
      expect(calls.filter((c) => c.method === "eth_call")).toHaveLength(1);

      calls.length = 0;
      expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true });
      expect(payerCode()).toBe(1);

      // Refused (used on chain): the SDK's simulation fails, then one direct authorizationState read
      // says why (besides the SDK's own diagnosis).
      calls.length = 0;
      expect(await facilitator.verify(payment, requirements)).toMatchObject({
        isValid: false,
        invalidReason: reasons.NONCE_ALREADY_USED,
      });
      expect(payerCode()).toBe(1);
    } finally {
      await facilitator.close();
      await close();
      await proxy.close();
    }
  });
});
