import type { Chain, PublicClient, Transport } from "viem";
import { describe, expect, it } from "vitest";
import { createChainReads } from "../../src/facilitator/chain-reads.ts";

const PAYER = "0x00000000000000000000000000000000000000aA";
const TOKEN = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const FACILITATOR = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** A client that counts its reads and answers each with its sequence number. */
function countingClient() {
  const calls: string[] = [];
  const client = {
    getCode: async ({ address }: { address: string }) => {
      calls.push(`code ${address}`);
      return `0x${calls.length}`;
    },
    readContract: async ({
      account,
      functionName,
      args,
    }: {
      account: string;
      functionName: string;
      args: readonly unknown[];
    }) => {
      // Every call is made as the facilitator would send it.
      if (account !== FACILITATOR) throw new Error(`called from ${account}`);
      calls.push(`${functionName}(${args.join(",")})`);
      if (functionName === "fails") throw new Error("reverted");
      return calls.length;
    },
  };
  return { calls, client: client as unknown as PublicClient<Transport, Chain> };
}

describe("chain reads shared with a hold", () => {
  it("answers identical reads from the held one while the hold lasts, then asks the node again", async () => {
    const { calls, client } = countingClient();
    const reads = createChainReads(client, FACILITATOR);
    const call = { address: TOKEN, abi: [], functionName: "f", args: [PAYER, 27n, "0xAB"] } as const;
    const hold = reads.hold({ code: [PAYER], calls: [call] });
    expect(calls).toHaveLength(2); // started at once

    // Same things, spelt differently (address case, 27 vs 27n, hex case): shared.
    expect(await reads.getCode({ address: PAYER.toLowerCase() as `0x${string}` })).toBe("0x1");
    expect(await reads.getCode({ address: PAYER })).toBe("0x1");
    expect(
      await reads.readContract({
        ...call,
        address: TOKEN.toLowerCase() as `0x${string}`,
        args: [PAYER.toLowerCase(), 27, "0xab"],
      }),
    ).toBe(2);
    expect(calls).toHaveLength(2);

    // Anything else goes to the node.
    await reads.readContract({ ...call, args: [PAYER, 28n, "0xab"] });
    await reads.readContract({ ...call, args: [PAYER, 27n] });
    await reads.getCode({ address: TOKEN });
    expect(calls).toHaveLength(5);

    hold.release();
    hold.release(); // idempotent
    expect(await reads.getCode({ address: PAYER })).toBe("0x6");
    expect(await reads.readContract(call)).toBe(7);
  });

  it("lets a newer hold's read replace an older one, and keeps it when the older hold ends", async () => {
    const { calls, client } = countingClient();
    const reads = createChainReads(client, FACILITATOR);
    const first = reads.hold({ code: [PAYER] });
    const second = reads.hold({ code: [PAYER] });
    expect(await reads.getCode({ address: PAYER })).toBe("0x2");
    first.release();
    expect(await reads.getCode({ address: PAYER })).toBe("0x2");
    second.release();
    expect(await reads.getCode({ address: PAYER })).toBe("0x3");
    expect(calls).toHaveLength(3);
  });

  it("shares a failure with the calls that ask for it, and a read nobody asks for fails quietly", async () => {
    const { client } = countingClient();
    const reads = createChainReads(client, FACILITATOR);
    const failing = { address: TOKEN, abi: [], functionName: "fails", args: [1n] } as const;
    const unused = reads.hold({ calls: [failing] });
    unused.release(); // never asked: no unhandled rejection
    const hold = reads.hold({ calls: [failing] });
    await expect(reads.readContract(failing)).rejects.toThrow("reverted");
    hold.release();
  });
});
