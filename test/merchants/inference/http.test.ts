/**
 * The inference host served by the merchant kit on 127.0.0.1, unpaid: /v1/models is free, a tier constraint is
 * a 400 in OpenAI's error shape before any payment, and the 402s offer `exact` at the per-call price and `upto`
 * at the /upto maximum. (Paid flows need the devnet; the kit's tests pay upto endpoints end to end.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Listening } from "../../../src/common/listen.ts";
import { inferenceMerchant, OFFLINE_SETTINGS } from "../../../src/merchants/inference/catalogue.ts";
import { openTestDatabase } from "../../helpers/db.ts";
import { refusingFacilitator as facilitator, startMerchant } from "../../helpers/merchant.ts";

let host: Listening;
let close: () => Promise<void>;
beforeAll(async () => {
  const opened = await openTestDatabase("pglite");
  close = opened.close;
  host = await startMerchant(
    (url) =>
      inferenceMerchant(
        { payTo: "0x1111111111111111111111111111111111111111", publicUrl: url },
        OFFLINE_SETTINGS,
      ),
    opened.db,
    facilitator,
  );
}, 60_000);
afterAll(async () => {
  await host?.close();
  await close?.();
});

const post = (path: string, body: unknown) =>
  fetch(`${host.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const offer = (response: Response) =>
  JSON.parse(Buffer.from(response.headers.get("payment-required") ?? "", "base64").toString("utf8")) as {
    accepts: { scheme: string; amount: string }[];
  };

describe("the inference host, unpaid", () => {
  it("serves /v1/models free", async () => {
    const response = await fetch(`${host.url}/v1/models`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { alias: string }[] };
    expect(body.data).toHaveLength(16);
  });

  it("refuses a tier constraint before payment, in OpenAI's error shape", async () => {
    const response = await post("/v1/chat/completions/_t/t5", {
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 100,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("payment-required")).toBeNull();
    expect(await response.json()).toEqual({
      error: {
        message: expect.stringMatching(/512 to 2048/),
        type: "invalid_request_error",
        param: "max_tokens",
        code: expect.any(String),
      },
    });
  });

  it("asks exact for the per-call price and upto for the /upto maximum", async () => {
    const messages = [{ role: "user", content: "hi" }];
    const plain = await post("/v1/chat/completions/_t/t5", { messages });
    expect(plain.status).toBe(402);
    expect(offer(plain).accepts.map((a) => [a.scheme, a.amount])).toEqual([["exact", "5783"]]);
    const metered = await post("/v1/chat/completions/_t/t5/upto", { messages });
    expect(metered.status).toBe(402);
    expect(offer(metered).accepts.map((a) => [a.scheme, a.amount])).toEqual([["upto", "43205"]]);
  });
});
