import {
  type Account,
  BaseError,
  type Chain,
  type Hex,
  keccak256,
  type PublicClient,
  RpcRequestError,
  type Transport,
  type WalletClient,
} from "viem";

/** A transaction signed by the submitter: its hash is known before anything is broadcast. */
export interface SignedTransaction {
  hash: Hex;
  nonce: number;
}

export interface SubmitRequest {
  to: `0x${string}`;
  data: Hex;
  /** Gas limit; estimated (plus a margin) when absent. An estimate that reverts fails the submission. */
  gas?: bigint;
  /** ETH sent with it (wei): only a sponsored approval's funding sends any (sponsoring/approval.ts). */
  value?: bigint;
}

export interface SubmitHooks {
  /**
   * Runs before signing (and again before a retry at a fresh fee), with the most the transaction can cost
   * in gas: its gas limit and max fee per gas. Reserve it here; if it throws, nothing is signed.
   */
  beforeSign?(cost: { gas: bigint; maxFeePerGas: bigint }): Promise<void>;
  /**
   * Runs after signing, before broadcasting: record the hash durably here. If it throws, nothing is
   * broadcast and the nonce is reused by the next transaction.
   */
  beforeBroadcast(tx: SignedTransaction): Promise<void>;
  /** The node refused the transaction and does not have it: it can never be mined. */
  onRejected(tx: SignedTransaction): Promise<void>;
}

/**
 * Broadcasting failed. `rejected`: the node refused it and does not know it (safe to forget). `unknown`:
 * it may have reached the node (a timeout, a lost connection): treat as pending and check the chain.
 */
export class BroadcastError extends Error {
  override name = "BroadcastError";
  constructor(
    readonly tx: SignedTransaction,
    readonly outcome: "rejected" | "unknown",
    options: { cause: unknown },
  ) {
    super(`broadcast of ${tx.hash} failed (${outcome}): ${messageOf(options.cause)}`, options);
  }
}

export interface Submitter {
  readonly address: `0x${string}`;
  submit(request: SubmitRequest, hooks: SubmitHooks): Promise<Hex>;
}

/** Gas estimates get this margin (percent): state can change between estimate and inclusion. */
const GAS_MARGIN_PERCENT = 20n;

/**
 * How long one fee estimate serves the settlements that follow it: half of Base's 2 s block, so a reused
 * estimate is at most one block older than a fresh one. viem's estimate is 1.2 x the latest block's base
 * fee plus the tip; an OP Stack chain raises the base fee by a few percent a block at most (2% at the
 * Canyon defaults, elasticity 6 and denominator 250), far inside that margin. Each estimate is two calls
 * (the latest block, the tip).
 */
export const FEE_MAX_AGE_MS = 1_000;

export interface SubmitterOptions {
  /** How long a fee estimate is reused (ms); 0: only by settlements that start while it is under way. */
  feeMaxAgeMs?: number;
}

type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/**
 * Sends transactions from one EOA without nonce collisions: estimating gas and fees runs concurrently,
 * but nonce allocation, signing, the `beforeBroadcast` hook and the broadcast run one at a time, in nonce
 * order. The next nonce is kept in memory and re-read from the node (`pending`) after any broadcast
 * failure, so a nonce the node never saw is reused rather than leaving a gap that would stall every later
 * transaction. Meant for one sending process per key: a transaction sent with the key from elsewhere makes
 * the cached nonce stale, which costs one refused broadcast and a retry with the node's count.
 */
export function createSubmitter(
  wallet: WalletClient<Transport, Chain, Account>,
  client: PublicClient<Transport, Chain>,
  { feeMaxAgeMs = FEE_MAX_AGE_MS }: SubmitterOptions = {},
): Submitter {
  const account = wallet.account;
  let nextNonce: number | undefined;
  // Settlements that start while a fee estimate is under way, or within `feeMaxAgeMs` of its start,
  // take that one (two RPC calls saved each); a failed estimate, or a refused broadcast, is not reused.
  let fees: { value: Promise<Fees>; startedAt: number; pending: boolean } | undefined;
  const estimateFees = (): Promise<Fees> => {
    const now = Date.now();
    if (fees && (fees.pending || now - fees.startedAt < feeMaxAgeMs)) return fees.value;
    const entry = { value: client.estimateFeesPerGas(), startedAt: now, pending: true };
    fees = entry;
    entry.value.then(
      () => {
        entry.pending = false;
      },
      () => {
        if (fees === entry) fees = undefined;
      },
    );
    return entry.value;
  };
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };

  return {
    address: account.address,
    async submit(request, hooks) {
      const [gas, price] = await Promise.all([
        request.gas ??
          client
            .estimateGas({
              account: account.address,
              to: request.to,
              data: request.data,
              value: request.value,
            })
            .then((g) => (g * (100n + GAS_MARGIN_PERCENT)) / 100n),
        estimateFees(),
      ]);
      if (hooks.beforeSign) await hooks.beforeSign({ gas, maxFeePerGas: price.maxFeePerGas });
      return exclusive(async () => {
        // A cached nonce can be stale (another process used the key once), or a reused fee estimate too
        // low: a refusal then gets one more try with the node's count and a fresh estimate. A nonce read
        // from the node is not retried.
        const cached = nextNonce !== undefined;
        try {
          return await signAndSend(request, gas, price, hooks);
        } catch (error) {
          if (!(cached && error instanceof BroadcastError && error.outcome === "rejected")) throw error;
          const fresh = await estimateFees();
          if (hooks.beforeSign) await hooks.beforeSign({ gas, maxFeePerGas: fresh.maxFeePerGas });
          return signAndSend(request, gas, fresh, hooks);
        }
      });
    },
  };

  async function signAndSend(
    request: SubmitRequest,
    gas: bigint,
    price: Fees,
    hooks: SubmitHooks,
  ): Promise<Hex> {
    const nonce =
      nextNonce ?? (await client.getTransactionCount({ address: account.address, blockTag: "pending" }));
    if (!account.signTransaction) throw new Error("the facilitator account cannot sign transactions locally");
    const serializedTransaction = await account.signTransaction(
      {
        type: "eip1559",
        chainId: wallet.chain.id,
        nonce,
        to: request.to,
        data: request.data,
        value: request.value,
        gas,
        maxFeePerGas: price.maxFeePerGas,
        maxPriorityFeePerGas: price.maxPriorityFeePerGas,
      },
      { serializer: wallet.chain.serializers?.transaction },
    );
    const tx = { hash: keccak256(serializedTransaction), nonce };
    await hooks.beforeBroadcast(tx);
    try {
      await wallet.sendRawTransaction({ serializedTransaction });
      nextNonce = nonce + 1;
      return tx.hash;
    } catch (error) {
      nextNonce = undefined;
      // The refusal may be the price (underpriced, below the base fee): the next settlement asks anew.
      fees = undefined;
      const outcome = await classify(client, tx.hash, error);
      if (outcome === "sent") {
        // e.g. the transport retried after a timeout and the node answered "already known".
        nextNonce = nonce + 1;
        return tx.hash;
      }
      if (outcome === "rejected") await hooks.onRejected(tx);
      throw new BroadcastError(tx, outcome, { cause: error });
    }
  }
}

/** After a failed broadcast: does the node have the transaction after all? */
async function classify(
  client: PublicClient<Transport, Chain>,
  hash: Hex,
  error: unknown,
): Promise<"sent" | "rejected" | "unknown"> {
  try {
    await client.getTransaction({ hash });
    return "sent";
  } catch {
    // Not found, or the node is unreachable: decided by the kind of error below.
  }
  // A JSON-RPC error answer (nonce too low, underpriced, insufficient funds) is a refusal; anything else
  // (timeout, connection reset, HTTP 5xx) leaves the outcome open.
  const answered = error instanceof BaseError && error.walk((e) => e instanceof RpcRequestError) !== null;
  return answered ? "rejected" : "unknown";
}

function messageOf(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage;
  return error instanceof Error ? error.message : String(error);
}
