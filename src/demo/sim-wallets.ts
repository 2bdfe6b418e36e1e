/**
 * The simulated wallets' signers, made on first use and kept: a viem account, an x402 client paying
 * `exact` and `upto` on Base, and a fetch that pays through it.
 */
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { UptoEvmScheme as UptoEvmClient } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import type { Account } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { DevnetAccount } from "../chain/devnet/index.ts";
import type { WalletId } from "./plan.ts";

export class SimWallets {
  private readonly accounts = new Map<WalletId, Account>();
  private readonly x402Clients = new Map<WalletId, x402Client>();
  private readonly payers = new Map<WalletId, typeof fetch>();

  constructor(private readonly keys: ReadonlyMap<WalletId, DevnetAccount>) {}

  account(id: WalletId): Account {
    const known = this.accounts.get(id);
    if (known) return known;
    const made = privateKeyToAccount(this.keyOf(id));
    this.accounts.set(id, made);
    return made;
  }

  x402Client(id: WalletId): x402Client {
    let payer = this.x402Clients.get(id);
    if (!payer) {
      const signer = privateKeyToAccount(this.keyOf(id));
      payer = new x402Client()
        .register("eip155:8453", new ExactEvmClient(signer))
        .register("eip155:8453", new UptoEvmClient(signer));
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

  private keyOf(id: WalletId): `0x${string}` {
    const key = this.keys.get(id);
    if (!key) throw new Error(`no key for simulated wallet ${id}`);
    return key.privateKey;
  }
}
