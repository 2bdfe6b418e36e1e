import { type CheckFn, cachedCheck, rpcCall } from "../../common/health.ts";

/**
 * What a Solana facilitator paying fees from `feePayer` at `rpc` needs (its `/readyz`): `chain`, the node
 * answers (`getSlot`); `signer`, the fee payer holds lamports (with none, every settlement fails: not ready,
 * though it still verifies).
 */
export function svmReadiness(rpc: string, feePayer: string): Record<string, CheckFn> {
  return {
    chain: cachedCheck(
      "facilitator solana",
      async (signal) => ({ slot: await rpcCall(rpc, "getSlot", [], signal) }),
      {
        timeoutMs: 3_000,
      },
    ),
    signer: cachedCheck(
      "facilitator fee payer",
      async (signal) => {
        const answer = (await rpcCall(rpc, "getBalance", [feePayer], signal)) as { value?: number } | null;
        const lamports = BigInt(answer?.value ?? 0);
        if (lamports === 0n) throw new Error(`the fee payer ${feePayer} holds no SOL to pay fees`);
        return { address: feePayer, balance_lamports: lamports.toString() };
      },
      { timeoutMs: 3_000 },
    ),
  };
}
