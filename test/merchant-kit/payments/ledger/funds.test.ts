/**
 * The payer's funds read through Multicall3 from a JSON-RPC node on 127.0.0.1 that answers with errors
 * now and then: a node error is asked again, a node that keeps failing is a 503.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { encodeAbiParameters, encodeFunctionResult } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { multicall3Abi } from "../../../../src/chain/multicall3.ts";
import { chainFunds } from "../../../../src/merchant-kit/payments/ledger/funds.ts";

const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const PAYER = `0x${"ab".repeat(20)}` as const;
const NONCE = `0x${"11".repeat(32)}` as const;

/** A node answering eth_call with `answers` in turn: an error code, or the balance and nonce state. */
async function node(answers: (number | { balance: bigint; used: boolean })[]) {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const request = JSON.parse(body) as { id: number; method: string };
      calls.push(request.method);
      const answer = answers.shift();
      res.setHeader("content-type", "application/json");
      if (typeof answer === "number" || answer === undefined) {
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: request.id,
            error: {
              code: answer ?? -32000,
              message: "BlockOutOfRangeError: block height is 9 but requested was 8",
            },
          }),
        );
        return;
      }
      const result = encodeFunctionResult({
        abi: multicall3Abi,
        functionName: "aggregate3",
        result: [
          { success: true, returnData: encodeAbiParameters([{ type: "uint256" }], [answer.balance]) },
          { success: true, returnData: encodeAbiParameters([{ type: "bool" }], [answer.used]) },
        ],
      });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url, calls };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("chainFunds", () => {
  it("reads the balance and the nonces' states in one eth_call", async () => {
    const n = await node([{ balance: 1234n, used: true }]);
    const funds = await chainFunds(n.url, USDC)(PAYER, [NONCE, "42"]);
    expect(funds.balance).toBe(1234n);
    expect([...funds.used]).toEqual([NONCE]);
    expect(n.calls).toEqual(["eth_call"]);
  });

  it("asks again when the node answers with an error, twice at most, then answers 503", async () => {
    const flaky = await node([-32602, -32602, { balance: 5n, used: false }]);
    const funds = await chainFunds(flaky.url, USDC)(PAYER, [NONCE]);
    expect(funds).toEqual({ balance: 5n, used: new Set() });
    expect(flaky.calls).toHaveLength(3);

    const broken = await node([-32602, -32602, -32602, { balance: 5n, used: false }]);
    const error = await chainFunds(broken.url, USDC)(PAYER, [NONCE]).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: "chain_unavailable" });
    expect(broken.calls).toHaveLength(3);
  });
});
