/**
 * The facilitator's Solana RPC client (src/chain/solana/rpc.ts) where npm's undici is the process's global
 * dispatcher, as it is in the `facilitator` and `serve` processes (undici sets it when loaded before any fetch):
 * kit's own HTTP transport is refused there, ours is not, and reads the devnet's integers as kit's does.
 */
import { createSolanaRpc } from "@solana/kit";
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SolanaDevnet, startSolanaDevnet } from "../../../src/chain/solana/devnet/index.ts";
import { solanaRpc } from "../../../src/chain/solana/rpc.ts";

let devnet: SolanaDevnet;
const before = getGlobalDispatcher();
beforeAll(async () => {
  devnet = await startSolanaDevnet({ port: 0, buyers: 1 });
  setGlobalDispatcher(new Agent());
});
afterAll(async () => {
  setGlobalDispatcher(before);
  await devnet?.stop();
});

describe("the Solana RPC client under npm undici's global dispatcher", () => {
  it("answers where kit's own transport is refused", async () => {
    await expect(createSolanaRpc(devnet.rpc).getSlot().send()).rejects.toThrow(/fetch failed/);
    const rpc = solanaRpc(devnet.rpc);
    expect(typeof (await rpc.getSlot().send())).toBe("bigint");
    const buyer = devnet.buyers[0]?.address as string;
    const { value } = await rpc.getBalance(buyer as never).send();
    expect(value).toBe(1_000_000_000n);
  });
});
