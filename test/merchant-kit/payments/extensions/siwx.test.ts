/**
 * A malformed sign-in (`SIGN-IN-WITH-X`) is refused, never a 500 (issue 83, item 1): a header that is no
 * message is 400 `invalid_sign_in`; a message whose fields break the SIWE grammar the SDK's signature check
 * formats them by, or exceed the kit's caps, is 402 `sign_in_invalid` with the route's challenge; nothing is
 * logged at error level, nothing runs, and an oversized nonce is never stored. In process, on a merchant whose
 * facilitator settles nothing: no sign-in here reaches a payment. The way a well-formed sign-in is served is
 * tested end to end on a devnet (payment-identifier.test.ts, "sign-in-with-x").
 */
import { decodePaymentRequiredHeader } from "@x402/core/http";
import {
  createSIWxPayload,
  encodeSIWxHeader,
  SIGN_IN_WITH_X,
  type SIWxExtension,
  type SIWxPayload,
} from "@x402/extensions/sign-in-with-x";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Listening } from "../../../../src/common/listen.ts";
import { defineEndpoint } from "../../../../src/merchant-kit/endpoint.ts";
import { AccessStore } from "../../../../src/merchant-kit/payments/extensions/siwx-store.ts";
import { LEDGER_KIND, openTestDatabase } from "../../../helpers/db.ts";
import { capturedLogLines } from "../../../helpers/log.ts";
import { refusingFacilitator, startMerchant, testMerchant } from "../../../helpers/merchant.ts";
import { newMerchant } from "../../../helpers/x402.ts";

let runs = 0;
const day = defineEndpoint({
  method: "GET",
  path: "/api/day/:name",
  price: "0.003",
  accessSeconds: 86_400,
  accessCalls: 3,
  description: "Counts, for a day per name.",
  input: z.object({ name: z.string().regex(/^[a-z]+$/) }),
  output: z.object({ run: z.number() }),
  example: { input: { name: "alpha" }, output: { run: 1 } },
  handler: async () => ({ run: ++runs }),
});

const payTo = newMerchant();
let state: Awaited<ReturnType<typeof openTestDatabase>>;
let host: Listening;
let url: string;

beforeAll(async () => {
  state = await openTestDatabase(LEDGER_KIND);
  host = await startMerchant((u) => testMerchant(payTo, u, [day]), state.db, refusingFacilitator);
  url = host.url;
}, 60_000);
afterAll(async () => {
  await host?.close();
  await state?.close();
});

/** A wallet with a period of `/api/day/<name>` running, granted as a settled payment grants it. */
async function paidWallet(name: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  await new AccessStore(state.db, payTo).grant(`/api/day/${name}`, account.address, 86_400, 3);
  return account;
}

/** The route's fresh challenge, completed with the merchant's chain as the SDK's client completes it. */
async function challenge(name: string) {
  const answer = await fetch(`${url}/api/day/${name}`);
  const required = decodePaymentRequiredHeader(answer.headers.get("payment-required") as string);
  const declared = required.extensions?.[SIGN_IN_WITH_X] as SIWxExtension | undefined;
  if (!declared) throw new Error(`/api/day/${name}'s 402 declares no sign-in`);
  return { ...declared.info, chainId: "eip155:8453", type: "eip191" as const };
}

/** A well-formed message for `name`, signed by `account` with the SDK's client. */
async function message(account: ReturnType<typeof privateKeyToAccount>, name: string) {
  return createSIWxPayload(await challenge(name), account, `${url}/api/day/${name}`);
}

const signIn = (name: string, header: string) =>
  fetch(`${url}/api/day/${name}`, { headers: { [SIGN_IN_WITH_X]: header } });

/** What a refused sign-in answered, with the lines logged at error level while it was answered. */
async function refusal(name: string, header: string) {
  const errors = capturedLogLines("error");
  const before = runs;
  const answer = await signIn(name, header);
  const body = await answer.json();
  return {
    status: answer.status,
    code: body.error?.code as string,
    message: body.error?.message as string,
    challenged: answer.headers.has("payment-required"),
    ran: runs - before,
    errors: errors.length,
  };
}

const nonces = async () =>
  (await state.db.query<{ nonce: string }>("SELECT nonce FROM merchant_sign_in_nonces")).rows.map(
    (r) => r.nonce,
  );

describe("a malformed signed message", () => {
  const refusedWithChallenge = { status: 402, code: "sign_in_invalid", challenged: true, ran: 0, errors: 0 };
  const now = () => new Date();

  it.each([
    ["a nonce shorter than 8 characters", { nonce: "abc1234" }, /nonce/],
    ["a nonce with a '-'", { nonce: "abcd-efgh-1234" }, /nonce/],
    [
      "a statement with a newline",
      { statement: "sign in\nURI: http://elsewhere.test/" },
      /statement|message/,
    ],
    ["an issuedAt that is not RFC 3339", { issuedAt: now().toUTCString() }, /issued-at|issuedAt/],
    [
      "an expirationTime that is not RFC 3339",
      { expirationTime: new Date(Date.now() + 60_000).toUTCString() },
      /expiration/,
    ],
    [
      "a notBefore that is not RFC 3339",
      { notBefore: new Date(Date.now() - 60_000).toUTCString() },
      /not-before|notBefore/,
    ],
    ["a version other than 1", { version: "2" }, /version/],
    ["a query the SIWE URI grammar refuses", { uri: "URI_QUERY" }, /SIWE message \(EIP-4361\)/],
    ["a resource that is no URI", { resources: ["not a uri"] }, /resource/],
    ["a request id with a space", { requestId: "a b" }, /SIWE message \(EIP-4361\)/],
    ["an address with a wrong EIP-55 checksum", { address: "ADDRESS_BAD_CHECKSUM" }, /address/],
    ["an address that is no address", { address: "0xnothex" }, /address/],
    ["an empty address", { address: "" }, /address/],
  ])("with %s is 402 sign_in_invalid with the challenge, not a 500", async (_, fields, reason) => {
    const account = await paidWallet("alpha");
    const base = await message(account, "alpha");
    const given = { ...fields } as Record<string, unknown>;
    if (given.uri === "URI_QUERY") given.uri = `${base.uri}?q={x}`;
    if (given.address === "ADDRESS_BAD_CHECKSUM") {
      // One letter of the majority case flipped: still mixed case (all one case reads as no checksum, and
      // passes), with a checksum that is not the address's.
      const a = account.address;
      const at = (re: RegExp) => [...a].flatMap((ch, j) => (j > 1 && re.test(ch) ? [j] : []));
      const [upper, lower] = [at(/[A-F]/), at(/[a-f]/)];
      const i = (upper.length > lower.length ? upper : lower)[0] as number;
      const ch = a[i] as string;
      given.address =
        a.slice(0, i) + (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()) + a.slice(i + 1);
    }
    const stored = await nonces();
    const answer = await refusal("alpha", encodeSIWxHeader({ ...base, ...given } as SIWxPayload));
    expect(answer).toMatchObject(refusedWithChallenge);
    expect(answer.message).toMatch(reason);
    expect(await nonces()).toEqual(stored);
  });

  it.each([
    ["a Solana chain", { chainId: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", type: "ed25519" }],
    ["an unknown namespace", { chainId: "cosmos:cosmoshub-4" }],
    ["an EVM chain id that is no number", { chainId: "eip155:base" }],
    ["a signature that is not hex", { signature: "0xnot-a-signature" }],
    ["a signature of the wrong length", { signature: `0x${"ab".repeat(64)}` }],
    // A smart wallet's (EIP-6492 wraps a deployment and ends in its magic suffix): its check needs the chain.
    [
      "an EIP-6492 signature",
      { signature: `0x${"00".repeat(96)}${"64".repeat(32)}`, signatureScheme: "eip6492" },
    ],
    ["an EIP-1271 signature", { signature: `0x${"11".repeat(65)}`, signatureScheme: "eip1271" }],
  ])("with %s is 402 sign_in_invalid, and asks nothing of a chain", async (_, fields) => {
    const account = await paidWallet("alpha");
    const base = await message(account, "alpha");
    const answer = await refusal("alpha", encodeSIWxHeader({ ...base, ...fields } as SIWxPayload));
    expect(answer).toMatchObject(refusedWithChallenge);
  });

  it.each([
    ["not base64", "not a message"],
    ["base64 of no JSON", Buffer.from("{nope").toString("base64")],
    ["base64 of JSON null", Buffer.from("null").toString("base64")],
    ["base64 of a JSON array", Buffer.from("[]").toString("base64")],
    ["a message missing its signature", "MISSING_SIGNATURE"],
    ["a message whose nonce is a number", "NUMBER_NONCE"],
  ])("that is %s is 400 invalid_sign_in", async (_, header) => {
    const account = await paidWallet("alpha");
    const base = await message(account, "alpha");
    let sent = header;
    if (header === "MISSING_SIGNATURE") sent = encodeSIWxHeader({ ...base, signature: undefined } as never);
    if (header === "NUMBER_NONCE") sent = encodeSIWxHeader({ ...base, nonce: 12345678 } as never);
    const answer = await refusal("alpha", sent);
    expect(answer).toMatchObject({ status: 400, code: "invalid_sign_in", ran: 0, errors: 0 });
  });
});

describe("the caps on a message's fields", () => {
  it("refuses an 8 KB nonce, validly signed by a wallet with a period, and never stores it", async () => {
    const account = await paidWallet("beta");
    const info = { ...(await challenge("beta")), nonce: "a1".repeat(4096) };
    // The SIWE grammar takes any alphanumeric nonce of 8 characters or more: this one is signed as is.
    const signed = await createSIWxPayload(info, account, `${url}/api/day/beta`);
    const answer = await refusal("beta", encodeSIWxHeader(signed));
    expect(answer).toMatchObject({
      status: 402,
      code: "sign_in_invalid",
      challenged: true,
      ran: 0,
      errors: 0,
    });
    expect(answer.message).toMatch(/nonce/);
    expect((await nonces()).filter((n) => n.length > 64)).toEqual([]);
    // The wallet's period is untouched: its next well-formed sign-in is served with all three calls.
    const served = await signIn("beta", encodeSIWxHeader(await message(account, "beta")));
    expect(served.status).toBe(200);
    expect(served.headers.get("access-calls-left")).toBe("2");
  });

  it.each([
    ["a statement", { statement: "a".repeat(600) }],
    ["a request id", { requestId: "a".repeat(300) }],
    ["a resource", { resources: [`http://127.0.0.1/${"a".repeat(2100)}`] }],
    ["resources", { resources: Array.from({ length: 9 }, (_, i) => `http://127.0.0.1/${i}`) }],
    ["a signature", { signature: `0x${"ab".repeat(2100)}` }],
    ["a uri", { uri: "LONG_URI" }],
  ])("refuses %s over its cap, validly signed, before its signature is checked", async (_, fields) => {
    const account = await paidWallet("gamma");
    const info = { ...(await challenge("gamma")) } as Record<string, unknown>;
    const given = { ...fields } as Record<string, unknown>;
    if (given.uri === "LONG_URI") given.uri = `${info.uri}?pad=${"a".repeat(2100)}`;
    const signed =
      "signature" in given
        ? { ...(await createSIWxPayload(info as never, account, `${url}/api/day/gamma`)), ...given }
        : await createSIWxPayload({ ...info, ...given } as never, account, `${url}/api/day/gamma`);
    const answer = await refusal("gamma", encodeSIWxHeader(signed as SIWxPayload));
    expect(answer).toMatchObject({
      status: 402,
      code: "sign_in_invalid",
      challenged: true,
      ran: 0,
      errors: 0,
    });
    expect(answer.message).toMatch(/longer than|more than/);
  });

  it("serves the SDK client's own message, well within every cap", async () => {
    const account = await paidWallet("delta");
    const answer = await signIn("delta", encodeSIWxHeader(await message(account, "delta")));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ run: runs });
  });
});
