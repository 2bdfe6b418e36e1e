import { describe, expect, it } from "vitest";
import { createPayerFunds } from "../../src/facilitator/payer-funds.ts";

const key = { asset: "0xToken", payer: "0xPayer" };
const never = () => Promise.reject(new Error("the balance was read"));

describe("a payer's settlements in flight", () => {
  it("reads nothing for a settlement with none in flight, and forgets it once it left", async () => {
    const funds = createPayerFunds();
    const first = await funds.enter(key, 10n, never);
    expect(first.lacking).toBeUndefined();
    first.leave();
    const again = await funds.enter(key, 10n, never);
    expect(again.lacking).toBeUndefined();
    again.leave();
  });

  it("goes ahead at once when the balance covers every settlement in flight", async () => {
    const funds = createPayerFunds();
    const first = await funds.enter(key, 10n, async () => 0n);
    const second = await funds.enter({ asset: "0xTOKEN", payer: "0xpayer" }, 10n, async () => 20n);
    expect(second.lacking).toBeUndefined();
    first.leave();
    second.leave();
  });

  it("waits for those in flight when the balance is short, then decides on what they left", async () => {
    const funds = createPayerFunds();
    let balance = 15n;
    const first = await funds.enter(key, 10n, async () => balance);
    let decided = false;
    const second = funds
      .enter(key, 10n, async () => balance)
      .finally(() => {
        decided = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(decided).toBe(false);
    balance = 5n; // the first settlement took its 10
    first.leave();
    const { lacking, leave } = await second;
    expect(lacking).toBe(
      "the payer holds 5 atomic units of the token once its settlements in flight ended, less than the 10 at stake",
    );
    leave();
  });

  it("goes ahead after waiting when the money is still there (the other one failed)", async () => {
    const funds = createPayerFunds();
    const first = await funds.enter(key, 10n, async () => 15n);
    const second = funds.enter(key, 10n, async () => 15n);
    first.leave();
    expect((await second).lacking).toBeUndefined();
  });

  it("keeps payers and tokens apart, and a later settlement never holds up an earlier one", async () => {
    const funds = createPayerFunds();
    const a = await funds.enter(key, 10n, async () => 0n);
    const otherPayer = await funds.enter({ ...key, payer: "0xOther" }, 10n, never);
    const otherToken = await funds.enter({ ...key, asset: "0xCoin" }, 10n, never);
    expect([otherPayer.lacking, otherToken.lacking]).toEqual([undefined, undefined]);
    // b waits for a; a third entering after b waits for both, and a leaving first releases b.
    const b = funds.enter(key, 10n, async () => 10n);
    const c = funds.enter(key, 10n, async () => 10n);
    a.leave();
    const bEntered = await b;
    expect(bEntered.lacking).toBeUndefined();
    bEntered.leave();
    expect((await c).lacking).toBeUndefined();
  });

  it("goes ahead when the balance cannot be read: the chain decides, as before", async () => {
    const funds = createPayerFunds();
    const first = await funds.enter(key, 10n, async () => undefined);
    const second = await funds.enter(key, 10n, async () => undefined);
    expect(second.lacking).toBeUndefined();
    first.leave();
    second.leave();
  });
});
