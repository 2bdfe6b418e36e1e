/**
 * What a host offers follows its facilitator's `/supported`: a facilitator that starts serving channels (it
 * lists batch-settlement with a receiver authorizer, and judges the host's probe instead of refusing it) is
 * seen by the first paid call five minutes after the last look, and from then on the 402s list the channel
 * and the refund route answers; one that stops is seen the same way. No timer: the host's clock is moved.
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { REFUND_PATH } from "../../../src/merchant-kit/routes.ts";
import { channelEndpoints } from "../../helpers/channel-shop.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { switchingFacilitator } from "../../helpers/facilitator.ts";
import { gates } from "../../helpers/gates.ts";
import { startMerchant, testMerchant } from "../../helpers/merchant.ts";
import { newMerchant } from "../../helpers/x402.ts";

const AUTHORIZER = "0x00000000000000000000000000000000000000a1";

afterEach(() => {
  vi.useRealTimers();
});

describe("what a host offers, as its facilitator changes", () => {
  it("lists a channel once the facilitator serves it, and stops when it stops", async () => {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    const facilitator = switchingFacilitator(AUTHORIZER, { upto: true, channels: false });
    const { db, close } = await openTestDatabase("pglite");
    onTestFinished(close);
    const host = await startMerchant(
      (url) =>
        testMerchant(newMerchant(), url, channelEndpoints(gates(), { runs: 0, running: 0, mostAtOnce: 0 })),
      db,
      facilitator.client,
    );
    onTestFinished(() => host.close());
    const schemes = async () => {
      const answer = await fetch(`${host.url}/api/counted`);
      expect(answer.status).toBe(402);
      return decodePaymentRequiredHeader(answer.headers.get("payment-required") as string).accepts.map(
        (a) => a.scheme,
      );
    };
    /** The schemes offered, once the look a call started after the clock moved has ended (a few calls). */
    const offeredAfter = async (minutes: number, want: string[]) => {
      vi.setSystemTime(Date.now() + minutes * 60_000);
      for (let i = 0; i < 50; i++) {
        if (JSON.stringify(await schemes()) === JSON.stringify(want)) return want;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return schemes();
    };

    expect(await schemes()).toEqual(["exact"]);
    expect((await fetch(`${host.url}${REFUND_PATH}`)).status).toBe(404);

    facilitator.kinds.channels = true;
    // Within five minutes of the last look, the host does not ask again.
    vi.setSystemTime(Date.now() + 60_000);
    expect(await schemes()).toEqual(["exact"]);
    expect(await offeredAfter(5, ["exact", "batch-settlement"])).toEqual(["exact", "batch-settlement"]);
    expect((await fetch(`${host.url}${REFUND_PATH}`)).status).toBe(402);

    facilitator.kinds.channels = false;
    expect(await offeredAfter(6, ["exact"])).toEqual(["exact"]);
    expect((await fetch(`${host.url}${REFUND_PATH}`)).status).toBe(404);
  });
});
