/**
 * What a payment's builder codes may cost the facilitator (docs/facilitator.md, "Builder codes"): the codes a
 * buyer adds are kept only as far as the ERC-8021 suffix stays within its cap, the merchant's app code and the
 * facilitator's own first; and the suffix's gas is in the estimate a key's reservation is made of.
 */
import type { PaymentPayload } from "@x402/core/types";
import { BuilderCodeFacilitatorExtension, encodeBuilderCodeSuffix } from "@x402/extensions/builder-code";
import { type Hex, parseEther, size } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetAccount } from "../../src/chain/devnet/index.ts";
import type { Database } from "../../src/common/db/index.ts";
import { addKey } from "../../src/facilitator/access/index.ts";
import {
  CappedBuilderCodeExtension,
  MAX_BUILDER_CODE_SUFFIX_BYTES,
} from "../../src/facilitator/builder-codes.ts";
import type { Facilitator } from "../../src/facilitator/index.ts";
import { builderCodesOf } from "../../src/indexer/builder-codes.ts";
import { useDevnet } from "../helpers/chain.ts";
import { LEDGER_KIND, openTestDatabase } from "../helpers/db.ts";
import { devnetFacilitator } from "../helpers/facilitator.ts";
import {
  newMerchant,
  pay,
  requirementsFor,
  transferWithAuthorizationData,
  usdcReader,
} from "../helpers/x402.ts";

/** The facilitator's default code and the longest of the merchants' defaults: the suffix as `serve` makes it. */
const WALLET = "x402_merchants";
const APP = "x402m_social_proxy";
/** Ten service codes of 32 characters: as many as the SDK's extension keeps, each as long as the spec allows. */
const TEN = Array.from({ length: 10 }, (_, i) => `agent_${i}_`.padEnd(32, "x"));

/** What a transaction's input costs as calldata: 4 gas a zero byte, 16 any other. */
function calldataGas(data: Hex): bigint {
  let gas = 0n;
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === "00" ? 4n : 16n;
  return gas;
}

/** A payment's extensions as a buyer's client sends them: the merchant's app code, and `services`. */
const codes = (services?: string[]) => ({
  "builder-code": { info: { a: APP, ...(services ? { s: services } : {}) } },
});

describe("a buyer's builder codes on the devnet", () => {
  const chain = useDevnet({ buyers: 1 });
  let facilitator: Facilitator;
  let db: Database;
  let closeDb: () => Promise<void>;
  let client: ReturnType<typeof usdcReader>["client"];
  beforeAll(async () => {
    ({ db, close: closeDb } = await openTestDatabase(LEDGER_KIND));
    facilitator = await devnetFacilitator(chain.devnet, db, { builderCode: WALLET });
    client = usdcReader(chain.devnet.rpc).client;
    await settle(undefined);
  });
  afterAll(async () => {
    await facilitator?.close();
    await closeDb?.();
  });

  /**
   * The payee of every payment here, paid once first (beforeAll): each settlement then costs what an
   * established merchant's does.
   */
  const payee = newMerchant();

  /** One payment with `extensions`, settled (with `keyId`'s grant when given), and its transaction read back. */
  async function settle(extensions: PaymentPayload["extensions"], keyId?: string) {
    const buyer = chain.devnet.buyers[0] as DevnetAccount;
    const requirements = requirementsFor(payee, "1000");
    const payment = { ...(await pay(buyer, requirements)), extensions };
    const answer = await facilitator.settle(payment, requirements, keyId ? { keyId } : undefined);
    expect(answer, JSON.stringify(answer)).toMatchObject({ success: true });
    const hash = answer.transaction as Hex;
    const receipt = await usdcReader(chain.devnet.rpc).receipt(hash);
    const tx = await client.getTransaction({ hash });
    // The call as anyone would encode it, then the suffix: what follows it is the facilitator's choice alone.
    const call = transferWithAuthorizationData(payment);
    expect(tx.input.startsWith(call)).toBe(true);
    const suffix = `0x${tx.input.slice(call.length)}` as Hex;
    // The gas beyond the call's own calldata: the same for every payment here but for what its suffix costs
    // (its calldata, and the token proxy's copy of it); the call's calldata varies with the zero bytes of
    // its nonce and signature.
    const beyondCall = receipt.gasUsed - calldataGas(call);
    return { tx, receipt, call, suffix, beyondCall };
  }

  it("keeps ten 32-character service codes to the cap: the app's and the facilitator's codes kept, the buyer's first in order", async () => {
    const none = await settle(codes());
    expect(none.suffix).toBe(encodeBuilderCodeSuffix({ w: WALLET, a: APP }));

    const ten = await settle(codes(TEN));
    expect(size(ten.suffix)).toBeLessThanOrEqual(MAX_BUILDER_CODE_SUFFIX_BYTES);
    // With these two codes (58 bytes), the first 32-character code fits and the second would not (129 bytes).
    expect(ten.suffix).toBe(encodeBuilderCodeSuffix({ w: WALLET, a: APP, s: TEN.slice(0, 1) }));
    expect(builderCodesOf(ten.tx.input)).toEqual({ app: APP, wallet: WALLET, services: TEN[0] });

    // Codes that fill the cap to its last byte (the second one character shorter): the most a buyer's codes
    // can make a settlement cost.
    const FULL = [TEN[0], TEN[1]?.slice(0, 31), ...TEN.slice(2)] as string[];
    const full = await settle(codes(FULL));
    expect(full.suffix).toBe(encodeBuilderCodeSuffix({ w: WALLET, a: APP, s: FULL.slice(0, 2) }));
    expect(size(full.suffix)).toBe(MAX_BUILDER_CODE_SUFFIX_BYTES);
    // Its cost over the settlement without the buyer's codes: 16 gas a byte of calldata (none is zero), the
    // token proxy's copy of the calldata into memory, give or take the 25 gas by which the rest differs from one
    // payment to another here (measured, with or without codes).
    const extra = full.beyondCall - none.beyondCall;
    const bytes = BigInt(size(full.suffix) - size(none.suffix));
    expect(extra).toBeGreaterThanOrEqual(16n * bytes - 32n);
    expect(extra).toBeLessThanOrEqual(16n * bytes + 64n);
  });

  it("reserves a keyed settlement's gas on the estimate of its whole calldata, suffix included, and charges the receipt", async () => {
    const { apiKey } = await addKey(db, {
      name: "codes",
      payees: null,
      gasBudgetWei: parseEther("1"),
      ratePerMinute: 60,
    });
    const { tx, receipt, call } = await settle(codes(TEN), apiKey.id);
    // The node's estimate, on the state the facilitator estimated on (the block before; the settlement is
    // the only transaction of its block), of the whole input and of the call alone.
    const estimate = (data: Hex) =>
      client.estimateGas({ account: tx.from, to: tx.to as Hex, data, blockNumber: receipt.blockNumber - 1n });
    const [whole, alone] = await Promise.all([estimate(tx.input), estimate(call)]);
    expect(whole).toBeGreaterThan(alone);
    expect(tx.gas).toBe((whole * 120n) / 100n);
    const { rows } = await db.query<{ state: string; reserved_wei: string; charged_wei: string }>(
      "SELECT state, reserved_wei, charged_wei FROM facilitator_key_charges WHERE tx_hash = $1",
      [tx.hash.toLowerCase()],
    );
    expect(rows[0]?.state).toBe("charged");
    expect(BigInt(rows[0]?.reserved_wei ?? 0)).toBe(tx.gas * (tx.maxFeePerGas as bigint));
    expect(BigInt(rows[0]?.charged_wei ?? 0)).toBe(receipt.gasUsed * receipt.effectiveGasPrice);
  });
});

describe("the capped extension", () => {
  /** The suffix `extension` builds for a payment of `version` carrying `info` as its builder codes. */
  const suffixOf = (extension: BuilderCodeFacilitatorExtension, info: unknown, version = 2) =>
    extension.buildDataSuffix({
      paymentPayload: {
        x402Version: version,
        extensions: info === undefined ? undefined : { "builder-code": { info } },
      } as PaymentPayload,
      paymentRequirements: requirementsFor(newMerchant()),
    });
  const ours = new CappedBuilderCodeExtension(WALLET);
  const sdk = new BuilderCodeFacilitatorExtension({ builderCode: WALLET });

  it("builds the SDK's suffix where it is within the cap", () => {
    for (const info of [
      undefined,
      { a: APP },
      { a: APP, s: ["cdp_sdk_client", "cdp_sdk_server", TEN[0]] },
      { a: APP, s: "one_code" },
      { a: "Not A Code", s: ["ok", "Not_ok"] },
    ]) {
      const suffix = suffixOf(ours, info);
      expect(suffix).toBe(suffixOf(sdk, info));
      expect(size(suffix as Hex)).toBeLessThanOrEqual(MAX_BUILDER_CODE_SUFFIX_BYTES);
    }
    expect(suffixOf(new CappedBuilderCodeExtension(), undefined)).toBeUndefined();
  });

  it("keeps the facilitator's and the app's codes at the spec's longest, and the service codes in their order that fit", () => {
    const long = "w".repeat(32);
    const app = "a".repeat(32);
    // 92 bytes with `w` and `a`: 36 left, for `s` (3) and one code of up to 31 characters (33 bytes).
    const codes = [TEN[0], "short", "b".repeat(31), "c"] as string[];
    const suffix = suffixOf(new CappedBuilderCodeExtension(long), { a: app, s: codes });
    expect(suffix).toBe(encodeBuilderCodeSuffix({ w: long, a: app }));
    expect(size(suffix as Hex)).toBe(92);
    // The first code that does not fit ends the list: those after it are dropped too (the kept ones are a prefix).
    const some = suffixOf(ours, { a: APP, s: ["x", ...TEN] });
    expect(some).toBe(encodeBuilderCodeSuffix({ w: WALLET, a: APP, s: ["x", TEN[0] as string] }));
    // Codes outside the alphabet take no room (the SDK drops them); a v1 payment's app code is not read.
    const mixed = suffixOf(ours, { a: APP, s: ["Not_ok", ...TEN] });
    expect(mixed).toBe(encodeBuilderCodeSuffix({ w: WALLET, a: APP, s: TEN.slice(0, 1) }));
    expect(suffixOf(ours, { a: APP, s: TEN }, 1)).toBe(
      encodeBuilderCodeSuffix({ w: WALLET, s: TEN.slice(0, 2) }),
    );
  });
});
