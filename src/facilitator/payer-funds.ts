/**
 * A payer's settlements in flight in this process, so that one settlement is not broadcast against money
 * another has already claimed.
 *
 * Both payments of a wallet holding the price of one verify (each is covered on its own) and, settled at
 * once, would both be signed before either is mined: the second transaction reverts on chain, the
 * facilitator pays its gas, and the buyer learns it only as `invalid_transaction_state`. Here a settlement
 * that starts while others of the same payer and token are in flight reads the balance: when it covers
 * them all, it goes ahead at once (a busy agent's calls settle in parallel); when it does not, it waits for
 * those to end and decides on the balance they left, refusing with `insufficient_funds` before anything is
 * broadcast. A settlement with none in flight reads nothing: /verify has just read the balance.
 *
 * In memory, one process: the signer's key is meant for one sending process (see the submitter), and money
 * leaving the wallet by other roads is the chain's to refuse, as it always was.
 */
export interface PayerFunds {
  /**
   * Enters one settlement of `amount` by `payer` in `asset`. `balance` is read only when others are in
   * flight (undefined: it could not be read, and the settlement goes ahead as it would have).
   * Resolves with undefined to go ahead, or with the reason the balance cannot cover it; call `leave`
   * either way when the settlement has ended.
   */
  enter(
    key: PayerKey,
    amount: bigint,
    balance: () => Promise<bigint | undefined>,
  ): Promise<{ lacking?: string; leave: () => void }>;
}

export interface PayerKey {
  asset: string;
  payer: string;
}

interface Entry {
  amount: bigint;
  ended: Promise<void>;
}

export function createPayerFunds(): PayerFunds {
  const inFlight = new Map<string, Set<Entry>>();

  return {
    async enter(key, amount, balance) {
      const id = `${key.asset.toLowerCase()}:${key.payer.toLowerCase()}`;
      let end!: () => void;
      const entry: Entry = { amount, ended: new Promise<void>((resolve) => (end = resolve)) };
      const entries = inFlight.get(id) ?? new Set<Entry>();
      inFlight.set(id, entries);
      // Only those that entered before this one: a later one waits for this, never the reverse.
      const before = [...entries];
      entries.add(entry);
      const leave = () => {
        end();
        entries.delete(entry);
        if (entries.size === 0 && inFlight.get(id) === entries) inFlight.delete(id);
      };
      if (before.length === 0) return { leave };
      const claimed = before.reduce((sum, e) => sum + e.amount, 0n);
      const now = await balance();
      // Whatever of the others is already mined is out of `now` and still counted: a stricter test, which
      // at worst makes this one wait for them.
      if (now === undefined || now >= claimed + amount) return { leave };
      await Promise.all(before.map((e) => e.ended));
      const after = await balance();
      if (after === undefined || after >= amount) return { leave };
      return {
        lacking: `the payer holds ${after} atomic units of the token once its settlements in flight ended, less than the ${amount} at stake`,
        leave,
      };
    },
  };
}
