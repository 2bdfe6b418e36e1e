/**
 * Transactions the local Solana cannot run, served as it serves the ones it ran. The devnet's litesvm has no build
 * of the payment-channels program to load (docs/chains.md, "Channels on Solana"), so a channel's `open` or
 * `distribute` cannot land on it; these are built to the program's published layout instead (its IDL and
 * `docs/003-program-instructions.md`: accounts, a one-byte discriminator and the arguments), with the inner
 * instructions and token balances executing them would leave, and recorded in a ledger of their own. The devnet's
 * own RPC front (`serveRpc`) answers for that ledger on 127.0.0.1, so `getSignaturesForAddress`, `getTransaction`
 * (its jsonParsed rendering included), `getSlot` and `getBlockTime` are the devnet's code and shapes, not a copy.
 */
import type { Server } from "node:http";
import { getAddressEncoder, getProgramDerivedAddress } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import {
  PAYMENT_CHANNELS_PROGRAM,
  SOLANA_USDC_DECIMALS,
  SOLANA_USDC_MINT,
  SPL_TOKEN_PROGRAM,
} from "../../src/chain/solana/constants.ts";
import type { SolanaChain } from "../../src/chain/solana/devnet/index.ts";
import type { InnerInstructions, Landed, TokenBalance } from "../../src/chain/solana/devnet/ledger.ts";
import { serveRpc } from "../../src/chain/solana/devnet/server.ts";
import type { WireTransaction } from "../../src/chain/solana/devnet/wire.ts";
import { solKey, solSignature } from "./solana.ts";

export interface Meta {
  address: string;
  signer?: boolean;
  writable?: boolean;
}
export interface Ix {
  programId: string;
  accounts: Meta[];
  data: Uint8Array;
}
/** What a top-level instruction ran by CPI, in order (`index`: the top-level instruction's). */
export interface Inner {
  index: number;
  instructions: { programId: string; accounts: string[]; data: Uint8Array }[];
}
/** A token account the transaction touches: its owner, and its balance before (absent: created) and after. */
export interface Holding {
  owner: string;
  pre?: bigint;
  post?: bigint;
}

const u8 = (n: number) => Uint8Array.of(n);
const u16 = (n: number) => new Uint8Array(new Uint16Array([n]).buffer);
const u32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
const u64 = (n: bigint) => new Uint8Array(new BigUint64Array([n]).buffer);
const addressBytes = (a: string) => new Uint8Array(getAddressEncoder().encode(a as never));
const bytes = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

export const ED25519_PROGRAM = "Ed25519SigVerify111111111111111111111111111";
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
const ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const RENT_SYSVAR = "SysvarRent111111111111111111111111111111111";
const INSTRUCTIONS_SYSVAR = "Sysvar1nstructions1111111111111111111111111";
/** The payment-channels program's treasury owner on mainnet (`@x402/svm` 2.27's `MAINNET_TREASURY_OWNER`). */
export const TREASURY_OWNER = "Cs2zdfUNonRdRGsiZUQQLdTxzxVvJZmgiX2mpLYKuEqP";

export const ataOf = async (owner: string, mint = SOLANA_USDC_MINT): Promise<string> =>
  (
    await findAssociatedTokenPda({
      owner: owner as never,
      mint: mint as never,
      tokenProgram: SPL_TOKEN_PROGRAM as never,
    })
  )[0];

/** The program's event authority PDA (seed "event_authority"). */
export const eventAuthority = async (program = PAYMENT_CHANNELS_PROGRAM): Promise<string> =>
  (await getProgramDerivedAddress({ programAddress: program as never, seeds: ["event_authority"] }))[0];

/** A channel as `open` derives it: `["channel", payer, payee, mint, authorized_signer, salt, open_slot]`. */
export interface Channel {
  payer: string;
  payee: string;
  authorizedSigner: string;
  salt: bigint;
  openSlot: bigint;
  /** Its PDA and its escrow (the PDA's associated token account). */
  address: string;
  escrow: string;
  /** The distribution preimage: the recipients' owners and shares (x402 puts `payTo` alone, at 10,000 bps). */
  recipients: { recipient: string; bps: number }[];
}

export async function channelOf(o: Omit<Channel, "address" | "escrow">, program = PAYMENT_CHANNELS_PROGRAM) {
  const [address] = await getProgramDerivedAddress({
    programAddress: program as never,
    seeds: [
      "channel",
      addressBytes(o.payer),
      addressBytes(o.payee),
      addressBytes(SOLANA_USDC_MINT),
      addressBytes(o.authorizedSigner),
      u64(o.salt),
      u64(o.openSlot),
    ],
  });
  return { ...o, address, escrow: await ataOf(address) } as Channel;
}

const preimage = (c: Channel) =>
  bytes(u32(c.recipients.length), ...c.recipients.map((r) => bytes(addressBytes(r.recipient), u16(r.bps))));

/** `open` (1): salt, deposit, grace period, open slot, the preimage; 14 accounts (docs/003, "open"). */
export async function openIx(
  c: Channel,
  rentPayer: string,
  deposit: bigint,
  program = PAYMENT_CHANNELS_PROGRAM,
): Promise<Ix> {
  const w = (address: string) => ({ address, writable: true });
  return {
    programId: program,
    accounts: [
      { address: c.payer, signer: true, writable: true },
      { address: rentPayer, signer: true, writable: true },
      { address: c.payee },
      { address: SOLANA_USDC_MINT },
      { address: c.authorizedSigner },
      w(c.address),
      w(await ataOf(c.payer)),
      w(c.escrow),
      { address: SPL_TOKEN_PROGRAM },
      { address: SYSTEM_PROGRAM },
      { address: RENT_SYSVAR },
      { address: ATA_PROGRAM },
      { address: await eventAuthority(program) },
      { address: program },
    ],
    data: bytes(u8(1), u64(c.salt), u64(deposit), u32(3600), u64(c.openSlot), preimage(c)),
  };
}

/** `settle` (2), after its Ed25519 voucher: the channel and the instructions sysvar. */
export const settleIx = (c: Channel): Ix => ({
  programId: PAYMENT_CHANNELS_PROGRAM,
  accounts: [{ address: c.address, writable: true }, { address: INSTRUCTIONS_SYSVAR }],
  data: u8(2),
});

/** `settleAndSeal` (4), the payee signing, with the voucher of the Ed25519 instruction before it. */
export const settleAndSealIx = (c: Channel): Ix => ({
  programId: PAYMENT_CHANNELS_PROGRAM,
  accounts: [
    { address: c.payee, signer: true },
    { address: c.address, writable: true },
    { address: INSTRUCTIONS_SYSVAR },
  ],
  data: bytes(u8(4), u8(1)),
});

/** The Ed25519 precompile's instruction carrying a voucher (its content is not read by the indexer). */
export const voucherIx = (c: Channel, cumulative: bigint): Ix => ({
  programId: ED25519_PROGRAM,
  accounts: [],
  data: bytes(
    u8(1),
    u8(0),
    new Uint8Array(14),
    u8(0x56),
    u8(1),
    addressBytes(c.address),
    u64(cumulative),
    u64(0n),
  ),
});

/**
 * `distribute` (7): 11 fixed accounts (channel, payer, rent payer, escrow, the payer's, payee's and treasury's
 * token accounts, mint, token program, event authority, the program) then each recipient's token account, and the
 * preimage as its argument (docs/003, "distribute").
 */
export async function distributeIx(
  c: Channel,
  rentPayer: string,
  program = PAYMENT_CHANNELS_PROGRAM,
): Promise<Ix> {
  const w = (address: string) => ({ address, writable: true });
  const recipients = await Promise.all(c.recipients.map((r) => ataOf(r.recipient)));
  return {
    programId: program,
    accounts: [
      w(c.address),
      w(c.payer),
      w(rentPayer),
      w(c.escrow),
      w(await ataOf(c.payer)),
      w(await ataOf(c.payee)),
      w(await ataOf(TREASURY_OWNER)),
      { address: SOLANA_USDC_MINT },
      { address: SPL_TOKEN_PROGRAM },
      { address: await eventAuthority(program) },
      { address: program },
      ...recipients.map(w),
    ],
    data: bytes(u8(7), preimage(c)),
  };
}

export const memoIx = (text: string): Ix => ({
  programId: MEMO_PROGRAM,
  accounts: [],
  data: new TextEncoder().encode(text),
});

/** A token `TransferChecked` (12) as a CPI: source, mint, destination, authority. */
export const transferChecked = (source: string, destination: string, authority: string, amount: bigint) => ({
  programId: SPL_TOKEN_PROGRAM,
  accounts: [source, SOLANA_USDC_MINT, destination, authority],
  data: bytes(u8(12), u64(amount), u8(SOLANA_USDC_DECIMALS)),
});

/** A top-level token `TransferChecked`, the owner signing: a wallet paying another. */
export const transferIx = (source: string, destination: string, owner: string, amount: bigint): Ix => {
  const { programId, data } = transferChecked(source, destination, owner, amount);
  const w = (address: string) => ({ address, writable: true });
  return {
    programId,
    accounts: [w(source), { address: SOLANA_USDC_MINT }, w(destination), { address: owner, signer: true }],
    data,
  };
};

/** The associated-token-account program's `CreateIdempotent` (1) as `open` runs it for the escrow. */
export const createEscrow = (rentPayer: string, c: Channel) => ({
  programId: ATA_PROGRAM,
  accounts: [rentPayer, c.escrow, c.address, SOLANA_USDC_MINT, SYSTEM_PROGRAM, SPL_TOKEN_PROGRAM],
  data: u8(1),
});

/**
 * SPL Token's `Batch` (255) of transfers, as the program pays a sealed channel's legs when it queues two or more:
 * per instruction its account count, data length and data, the accounts laid end to end.
 */
export function batch(transfers: ReturnType<typeof transferChecked>[]) {
  return {
    programId: SPL_TOKEN_PROGRAM,
    accounts: transfers.flatMap((t) => t.accounts),
    data: bytes(u8(255), ...transfers.map((t) => bytes(u8(t.accounts.length), u8(t.data.length), t.data))),
  };
}

/** The escrow closed by the sealed `distribute` (token `CloseAccount`, 9): its rent to the rent payer. */
export const closeAccount = (account: string, destination: string, owner: string) => ({
  programId: SPL_TOKEN_PROGRAM,
  accounts: [account, destination, owner],
  data: u8(9),
});

/** Compiles a message as Solana orders its keys: the fee payer, writable signers, signers, writable, the rest. */
function compile(feePayer: string, ixs: Ix[]): WireTransaction {
  const metas = new Map<string, { signer: boolean; writable: boolean }>([
    [feePayer, { signer: true, writable: true }],
  ]);
  const add = (m: Meta) => {
    const known = metas.get(m.address) ?? { signer: false, writable: false };
    metas.set(m.address, { signer: known.signer || !!m.signer, writable: known.writable || !!m.writable });
  };
  for (const ix of ixs) {
    ix.accounts.forEach(add);
    add({ address: ix.programId });
  }
  const all = [...metas];
  const group = (signer: boolean, writable: boolean) =>
    all.filter(([, m]) => m.signer === signer && m.writable === writable).map(([a]) => a);
  const keys = [...group(true, true), ...group(true, false), ...group(false, true), ...group(false, false)];
  const index = (a: string) => keys.indexOf(a);
  const signers = group(true, true).length + group(true, false).length;
  return {
    bytes: new Uint8Array(),
    messageBytes: new Uint8Array(),
    signatures: Array.from({ length: signers }, () => solSignature()),
    version: 0,
    header: {
      numRequiredSignatures: signers,
      numReadonlySignedAccounts: group(true, false).length,
      numReadonlyUnsignedAccounts: group(false, false).length,
    },
    accountKeys: keys,
    recentBlockhash: solKey("recent blockhash"),
    instructions: ixs.map((ix) => ({
      programIdIndex: index(ix.programId),
      accounts: ix.accounts.map((m) => index(m.address)),
      data: ix.data,
    })),
  };
}

/** A ledger of recorded transactions, each in a slot of its own, served by the devnet's RPC front. */
export class RecordedSolana {
  private readonly landed = new Map<string, Landed>();
  private readonly byAddress = new Map<string, string[]>();
  private readonly times = new Map<bigint, number>();
  private slotNow = 0n;
  private server?: Server;
  url = "";

  constructor(
    private readonly firstSlot: bigint,
    private readonly firstTime: number,
  ) {
    this.slotNow = firstSlot - 1n;
  }

  /**
   * Records a landed transaction: its instructions, what they ran (`inner`) and the token accounts they touched.
   * Every inner instruction's accounts are in the message (a CPI names only accounts its caller was given).
   */
  record(feePayer: string, ixs: Ix[], inner: Inner[], holdings: Map<string, Holding>): string {
    const tx = compile(feePayer, ixs);
    const at = (a: string) => {
      const i = tx.accountKeys.indexOf(a);
      if (i < 0)
        throw new Error(`${a} is not in the message: a CPI names only accounts its caller was given`);
      return i;
    };
    const innerInstructions: InnerInstructions[] = inner.map(({ index, instructions }) => ({
      index,
      instructions: instructions.map((ix) => ({
        programIdIndex: at(ix.programId),
        accounts: ix.accounts.map(at),
        data: ix.data,
        stackHeight: 2,
      })),
    }));
    const balance = (account: string, owner: string, amount: bigint): TokenBalance => ({
      accountIndex: at(account),
      mint: SOLANA_USDC_MINT,
      owner,
      programId: SPL_TOKEN_PROGRAM,
      amount,
      decimals: SOLANA_USDC_DECIMALS,
    });
    const held = [...holdings];
    this.slotNow += 1n;
    const blockTime = this.firstTime + Number(this.slotNow - this.firstSlot);
    this.times.set(this.slotNow, blockTime);
    const signature = tx.signatures[0] as string;
    this.landed.set(signature, {
      signature,
      slot: this.slotNow,
      blockTime,
      tx,
      meta: {
        err: null,
        fee: 5_000n * BigInt(tx.signatures.length),
        preBalances: tx.accountKeys.map(() => 2_039_280n),
        postBalances: tx.accountKeys.map(() => 2_039_280n),
        preTokenBalances: held.flatMap(([a, h]) => (h.pre === undefined ? [] : [balance(a, h.owner, h.pre)])),
        postTokenBalances: held.flatMap(([a, h]) =>
          h.post === undefined ? [] : [balance(a, h.owner, h.post)],
        ),
        logMessages: [],
        innerInstructions,
        computeUnitsConsumed: 40_000n,
        returnData: null,
      },
    });
    for (const key of tx.accountKeys)
      this.byAddress.set(key, [...(this.byAddress.get(key) ?? []), signature]);
    return signature;
  }

  async start(): Promise<string> {
    // The four methods the indexer calls read only these of the chain (src/chain/solana/devnet/rpc.ts).
    const self = this;
    const ledger = {
      get slot() {
        return self.slotNow;
      },
      blockTime: (slot: bigint) => this.times.get(slot),
      transaction: (signature: string) => this.landed.get(signature),
      signaturesOf: (address: string) => this.byAddress.get(address) ?? [],
    };
    const served = await serveRpc({ ledger } as unknown as SolanaChain, "127.0.0.1", 0);
    this.server = served.server;
    this.url = served.url;
    return this.url;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
