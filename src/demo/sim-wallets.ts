/**
 * The simulated wallets' signers, made on first use and kept: a viem account, an x402 client paying
 * `exact` and `upto` on Base, and a fetch that pays through it; and a channel session's client (x402
 * batch-settlement), one per wallet and session.
 */
import { x402Client } from "@x402/core/client";
import type { PaymentRequirements } from "@x402/core/types";
import {
  BatchSettlementEvmScheme as ChannelClient,
  InMemoryClientChannelStorage,
} from "@x402/evm/batch-settlement/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoEvmClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { type Account, createPublicClient, http, pad, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { BASE_CAIP2 } from "../chain/base.ts";
import { type DevnetAccount, devnetChain } from "../chain/devnet/index.ts";
import type { WalletId } from "./plan-types.ts";

/** A payer's channel with one merchant for one session: its SDK client, what the client keeps, its fetch. */
export interface ChannelSession {
  client: ChannelClient;
  storage: SessionStorage;
  payingFetch: typeof fetch;
  /** Runs `call` after the session's calls before it: one at a time through the channel. */
  serial<T>(call: () => Promise<T>): Promise<T>;
}

/** The SDK client's in-memory channel state, which also says which channel it holds (the session's one). */
export class SessionStorage extends InMemoryClientChannelStorage {
  channelId: `0x${string}` | undefined;

  override async set(
    key: string,
    context: Parameters<InMemoryClientChannelStorage["set"]>[1],
  ): Promise<void> {
    this.channelId = key as `0x${string}`;
    return super.set(key, context);
  }
}

/**
 * Whether a wallet pays `exact` through the Permit2 proxy where a merchant offers it (a quarter of the
 * agents, fixed by the wallet's id): wallets that sign Permit2 rather than EIP-3009, so the week holds both.
 */
export function permit2Payer(id: WalletId): boolean {
  const agent = /^agent:(\d+)$/.exec(id);
  return agent !== null && Number(agent[1]) % 4 === 3;
}

/** The Permit2 payer's choice: `exact` through Permit2 where offered, else the first it can pay. */
function preferPermit2(_version: number, accepts: PaymentRequirements[]): PaymentRequirements {
  return (
    accepts.find((a) => a.scheme === "exact" && a.extra?.assetTransferMethod === "permit2") ??
    (accepts[0] as PaymentRequirements)
  );
}

export class SimWallets {
  private readonly accounts = new Map<WalletId, Account>();
  private readonly x402Clients = new Map<WalletId, x402Client>();
  private readonly payers = new Map<WalletId, typeof fetch>();
  private readonly sessions = new Map<string, ChannelSession>();
  private readonly reader;
  private byAddress?: Map<string, WalletId>;

  /**
   * `network`: the CAIP-2 network the wallets pay on (Base's by default): their clients register it alone, so
   * of a 402 that lists every network a host takes they choose that one's ways.
   */
  constructor(
    private readonly keys: ReadonlyMap<WalletId, DevnetAccount>,
    rpc: string,
    private readonly network: `${string}:${string}` = BASE_CAIP2,
    chainId?: number,
  ) {
    this.reader = createPublicClient({ chain: devnetChain(rpc, chainId), transport: http(rpc) });
  }

  account(id: WalletId): Account {
    const known = this.accounts.get(id);
    if (known) return known;
    const made = privateKeyToAccount(this.keyOf(id));
    this.accounts.set(id, made);
    return made;
  }

  /** The simulated wallet of an address, lower-case, or undefined. */
  idOf(address: string): WalletId | undefined {
    if (!this.byAddress) {
      this.byAddress = new Map([...this.keys].map(([id, key]) => [key.address.toLowerCase(), id]));
    }
    return this.byAddress.get(address.toLowerCase());
  }

  x402Client(id: WalletId): x402Client {
    let payer = this.x402Clients.get(id);
    if (!payer) {
      const signer = privateKeyToAccount(this.keyOf(id));
      payer = new x402Client(permit2Payer(id) ? preferPermit2 : undefined)
        .register(this.network, new ExactEvmClient(signer))
        .register(this.network, new UptoEvmClient(signer));
      this.x402Clients.set(id, payer);
    }
    return payer;
  }

  payingFetch(id: WalletId): typeof fetch {
    let f = this.payers.get(id);
    if (!f) {
      f = wrapFetchWithPayment(fetch, this.x402Client(id));
      this.payers.set(id, f);
    }
    return f;
  }

  /**
   * The wallet's channel with `merchant` for `session`, made on first use: a channel of its own (the session
   * is its salt), which the SDK client opens with a deposit on the first call and pays by voucher after.
   */
  channel(id: WalletId, merchant: string, session: number): ChannelSession {
    const key = `${id} ${merchant} ${session}`;
    let made = this.sessions.get(key);
    if (!made) {
      const account = privateKeyToAccount(this.keyOf(id));
      const storage = new SessionStorage();
      const client = new ChannelClient(
        {
          address: account.address,
          signTypedData: (message) =>
            account.signTypedData(message as Parameters<typeof account.signTypedData>[0]),
          readContract: (args) =>
            this.reader.readContract(args as Parameters<typeof this.reader.readContract>[0]),
        },
        { salt: pad(toHex(session), { size: 32 }), storage },
      );
      let last: Promise<unknown> = Promise.resolve();
      made = {
        client,
        storage,
        payingFetch: wrapFetchWithPayment(fetch, new x402Client().register(this.network, client)),
        serial: <T>(call: () => Promise<T>) => {
          const next = last.then(call, call);
          last = next.catch(() => undefined);
          return next;
        },
      };
      this.sessions.set(key, made);
    }
    return made;
  }

  /** The session's channel if this process has paid through it, else undefined. */
  openChannel(id: WalletId, merchant: string, session: number): ChannelSession | undefined {
    return this.sessions.get(`${id} ${merchant} ${session}`);
  }

  /** Forgets a session that ended. */
  endChannel(id: WalletId, merchant: string, session: number): void {
    this.sessions.delete(`${id} ${merchant} ${session}`);
  }

  private keyOf(id: WalletId): `0x${string}` {
    const key = this.keys.get(id);
    if (!key) throw new Error(`no key for simulated wallet ${id}`);
    return key.privateKey;
  }
}
