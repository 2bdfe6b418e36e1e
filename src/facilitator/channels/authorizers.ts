/**
 * Who this facilitator knows can sign a batch-settlement channel's claims (docs/facilitator.md, "The
 * receiverAuthorizer (decision)"). It relays a deposit, at its own gas, only into a channel whose
 * receiverAuthorizer is one of them: the escrow lets only that address's signature claim the channel, so with
 * any other the receiver can never be paid from it, the payer takes the money back after the withdrawal
 * delay, and the deposit's gas (about 120k) was spent on nothing.
 *
 * Known: the channel's receiver itself, this facilitator's settling account when it offers the role, and
 * the authorizers a receiver has registered here (a merchant's own authorizer key: `channelAuthorizers` in
 * `createFacilitator`'s options, or `register` once the merchant is built).
 */

export interface ChannelAuthorizers {
  /** Whether someone this facilitator knows can sign claims of `receiver`'s channels that name `authorizer`. */
  knows(receiver: string, authorizer: string): boolean;
  /** Adds authorizers `receiver` signs its claims with (the addresses of its own authorizer keys). */
  register(receiver: string, authorizers: Iterable<string>): void;
  /** This facilitator's settling account, when it offers to be channels' receiverAuthorizer. */
  readonly self: string | undefined;
}

/** Receiver address -> the authorizer addresses it registered (any case). */
export type AuthorizerTable = Readonly<Record<string, readonly string[]>>;

export function createChannelAuthorizers(
  self: string | undefined,
  configured: AuthorizerTable = {},
): ChannelAuthorizers {
  const registered = new Map<string, Set<string>>();
  const register = (receiver: string, authorizers: Iterable<string>) => {
    const key = receiver.toLowerCase();
    const set = registered.get(key) ?? new Set<string>();
    for (const authorizer of authorizers) set.add(authorizer.toLowerCase());
    registered.set(key, set);
  };
  for (const [receiver, authorizers] of Object.entries(configured)) register(receiver, authorizers);
  const own = self?.toLowerCase();

  return {
    self,
    register,
    knows(receiver, authorizer) {
      const r = receiver.toLowerCase();
      const a = authorizer.toLowerCase();
      return a === r || a === own || registered.get(r)?.has(a) === true;
    },
  };
}
