/**
 * The chain reads the SDK's schemes make through our signer (`getCode`, `readContract`), with one
 * addition: a caller that knows which reads a step of the SDK is about to make can start them early and
 * let the SDK's identical reads share them (`hold`).
 *
 * Why: verifying an EIP-3009 payment, the SDK reads the payer's code twice in a row (ERC-6492
 * classification, then ECDSA-or-ERC-1271) and then simulates the transfer, all one after the other with
 * the secp256k1 recovery (CPU, about 2-3 ms) in between. Started together at the beginning, the reads
 * overlap with each other and with the recovery, and the payer's code is read once.
 *
 * A held read answers only calls for exactly the same thing (same contract, function and arguments) and
 * only while the hold that started it is in force (one verification, or one settlement's SDK call); a
 * newer hold's read replaces an older one. Every request that makes such reads (verify, settle) holds
 * them itself first, so each gets reads started during its own request: nothing is cached across
 * requests, and an answer is what the node said at "latest" during that request, as before.
 */
import type { Abi, Chain, Hex, PublicClient, Transport } from "viem";

export interface ContractRead {
  address: `0x${string}`;
  abi: Abi | readonly unknown[];
  functionName: string;
  args?: readonly unknown[];
}

export interface ChainReads {
  getCode(args: { address: `0x${string}` }): Promise<Hex | undefined>;
  readContract(args: ContractRead): Promise<unknown>;
  /**
   * Starts these reads now; until `release()`, `getCode` and `readContract` calls for the same things
   * answer from them instead of asking the node again.
   */
  hold(reads: { code?: readonly `0x${string}`[]; calls?: readonly ContractRead[] }): { release(): void };
}

/**
 * `from` is the facilitator's own account: calls are made as it would send them, which the upto proxy
 * checks (only the facilitator the buyer named may settle, so a simulation from anyone else reverts).
 */
export function createChainReads(client: PublicClient<Transport, Chain>, from: `0x${string}`): ChainReads {
  /** The latest read started by a hold still in force, per key. */
  const held = new Map<string, Promise<unknown>>();

  const fetchCode = (address: `0x${string}`) => client.getCode({ address });
  const fetchCall = (read: ContractRead) =>
    client.readContract({
      account: from,
      address: read.address,
      abi: read.abi as Abi,
      functionName: read.functionName,
      args: read.args ?? [],
    });

  return {
    getCode({ address }) {
      const shared = held.size > 0 ? held.get(codeKey(address)) : undefined;
      return (shared as Promise<Hex | undefined> | undefined) ?? fetchCode(address);
    },
    readContract(read) {
      const shared = held.size > 0 ? held.get(callKey(read)) : undefined;
      return shared ?? fetchCall(read);
    },
    hold({ code = [], calls = [] }) {
      // Every hold starts its own reads and they replace older ones: a call that is answered from a held
      // read gets one started during its own request (by its own hold or a later one), never an older one.
      const mine = new Map<string, Promise<unknown>>();
      const start = (key: string, read: () => Promise<unknown>) => {
        const result = read();
        // A failure is the reader's to handle; a read nobody ends up asking for must not go unhandled.
        result.catch(() => undefined);
        mine.set(key, result);
        held.set(key, result);
      };
      for (const address of code) start(codeKey(address), () => fetchCode(address));
      for (const read of calls) start(callKey(read), () => fetchCall(read));
      return {
        release() {
          for (const [key, result] of mine) if (held.get(key) === result) held.delete(key);
          mine.clear();
        },
      };
    },
  };
}

function codeKey(address: string): string {
  return `code:${address.toLowerCase()}`;
}

/**
 * Same contract, function and arguments: addresses and hex compared without case, numbers whatever
 * their JavaScript type (27 and 27n encode alike). The function name with the argument count tells the
 * overloads apart (USDC's transferWithAuthorization takes v, r, s or one signature).
 */
function callKey(read: ContractRead): string {
  const args = (read.args ?? []).map((arg) => {
    if (typeof arg === "bigint" || typeof arg === "number") return `n:${arg}`;
    if (typeof arg === "string") return /^0x[0-9a-fA-F]*$/.test(arg) ? `h:${arg.toLowerCase()}` : `s:${arg}`;
    return `j:${JSON.stringify(arg, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`;
  });
  return `call:${read.address.toLowerCase()}:${read.functionName}/${args.length}:${args.join(",")}`;
}
