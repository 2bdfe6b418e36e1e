import { createPublicClient, createWalletClient, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { devnetChain } from "../../src/chain/devnet/index.ts";
import { pollReceipt } from "../../src/chain/receipt.ts";
import { rpcTransport } from "../../src/chain/rpc-transport.ts";
import {
  BroadcastError,
  createSubmitter,
  type SubmitRequest,
  type SubmitterOptions,
} from "../../src/facilitator/submitter.ts";
import { useDevnet } from "../helpers/chain.ts";
import { type ProxyAction, type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.ts";

const chain = useDevnet({ buyers: 1 });

/** The proxies of the test that just ran. */
const proxies: RpcProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

const hooks = { beforeBroadcast: async () => {}, onRejected: async () => {} };
/** A plain call with its gas given, so that the fee estimate is the only estimate a submission makes. */
const request: SubmitRequest = { to: "0x000000000000000000000000000000000000dEaD", data: "0x", gas: 30_000n };

/**
 * A submitter over a proxy that counts the node's calls by method; `refuse` answers the next
 * `eth_sendRawTransaction` with a JSON-RPC error, as a node refusing an underpriced transaction does.
 */
async function counted(options: SubmitterOptions) {
  const calls = new Map<string, number>();
  let refuseNext = false;
  const proxy: RpcProxy = await startRpcProxy(chain.devnet.rpc, ({ body }): ProxyAction => {
    for (const call of Array.isArray(body) ? body : [body]) {
      calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
      if (call.method === "eth_sendRawTransaction" && refuseNext) {
        refuseNext = false;
        return { kind: "rpc-error", code: -32000, message: "max fee per gas less than block base fee" };
      }
    }
    return { kind: "forward" };
  });
  proxies.push(proxy);
  const viemChain = devnetChain(proxy.url);
  const transport = rpcTransport(proxy.url);
  const client = createPublicClient({ chain: viemChain, transport });
  const wallet = createWalletClient({
    chain: viemChain,
    transport,
    account: privateKeyToAccount(chain.devnet.facilitatorAccount.privateKey),
  });
  const submitter = createSubmitter(wallet, client, options);
  return {
    submitter,
    /** Fee estimates so far: viem asks for the tip once an estimate (and for the latest block). */
    estimates: () => calls.get("eth_maxPriorityFeePerGas") ?? 0,
    refuse: () => {
      refuseNext = true;
    },
    mined: (hash: Hex) => pollReceipt(client, hash, 10_000, 20),
  };
}

describe("the submitter's fee estimates", () => {
  it("serve the settlements that follow within the maximum age, each of them mined", async () => {
    const s = await counted({ feeMaxAgeMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      const hash = await s.submitter.submit(request, hooks);
      expect((await s.mined(hash))?.status).toBe("success");
    }
    expect(s.estimates()).toBe(1);
  });

  it("at age 0 are asked anew by each settlement, and shared only by those started together", async () => {
    const s = await counted({ feeMaxAgeMs: 0 });
    for (let i = 0; i < 2; i++) await s.mined(await s.submitter.submit(request, hooks));
    expect(s.estimates()).toBe(2);
    const hashes = await Promise.all([0, 1, 2].map(() => s.submitter.submit(request, hooks)));
    expect(new Set(hashes).size).toBe(3);
    expect(s.estimates()).toBe(3);
    for (const hash of hashes) expect((await s.mined(hash))?.status).toBe("success");
  });

  it("are asked anew when the node refuses a transaction: its retry and later settlements", async () => {
    const s = await counted({ feeMaxAgeMs: 60_000 });
    await s.mined(await s.submitter.submit(request, hooks));
    // Refused with a nonce kept in memory: retried once, with the node's count and a fresh estimate.
    s.refuse();
    expect((await s.mined(await s.submitter.submit(request, hooks)))?.status).toBe("success");
    expect(s.estimates()).toBe(2);
    await s.mined(await s.submitter.submit(request, hooks));
    expect(s.estimates()).toBe(2);
  });

  it("are not kept after a refusal that is not retried", async () => {
    const s = await counted({ feeMaxAgeMs: 60_000 });
    // A new submitter's first nonce is the node's own count: a refusal then is final.
    s.refuse();
    const refused = await s.submitter.submit(request, hooks).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BroadcastError);
    expect((refused as BroadcastError).outcome).toBe("rejected");
    expect(s.estimates()).toBe(1);
    expect((await s.mined(await s.submitter.submit(request, hooks)))?.status).toBe("success");
    expect(s.estimates()).toBe(2);
  });
});
