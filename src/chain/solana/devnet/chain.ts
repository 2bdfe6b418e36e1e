import { usdcAccountOf } from "../accounts.ts";
import { SOLANA_USDC_DECIMALS, SOLANA_USDC_MINT, SPL_TOKEN_PROGRAM } from "../constants.ts";
import { devnetKeyPair, type SolanaKeyPair } from "./keys.ts";
import { encodeMint, encodeTokenAccount, MINT_SIZE, TOKEN_ACCOUNT_SIZE } from "./layouts.ts";
import { Ledger, type Sent } from "./ledger.ts";
import { decodeWire, fromBase58, type WireTransaction, writeCompactU16 } from "./wire.ts";

export const LAMPORTS_PER_SOL = 1_000_000_000n;
export const USDC_UNIT = 10n ** BigInt(SOLANA_USDC_DECIMALS);
const SYSTEM_PROGRAM = "11111111111111111111111111111111";
const FAUCET_LAMPORTS = 1_000_000n * LAMPORTS_PER_SOL;

export interface GenesisOptions {
  /** How many funded buyers (default 3). */
  buyers: number;
  /** Each buyer's USDC in base units (default 1,000 USDC). */
  buyerUsdc: bigint;
  /** Each buyer's SOL in lamports (default 1 SOL: rent for a token account of its own, fees if it sends). */
  buyerLamports: bigint;
  /** The facilitator's fee payer's SOL in lamports (default 100 SOL). */
  feePayerLamports: bigint;
  /**
   * Wallets of the caller's own keys written at genesis beside the buyers, each its SOL and its USDC account
   * holding `usdc` (opened even when 0: `exact` pays into an account, it does not open one). The demo's merchants
   * and population.
   */
  accounts?: readonly GenesisAccount[];
  /**
   * The clock slots are dated by, unix ms (default the wall clock): the demo plays a week in minutes and dates
   * each slot at the time its plan gives, as a validator's clock would have read then. It must not go back.
   */
  now?: () => number;
}

/** A wallet written at genesis: its address (base58), its SOL and its USDC, in base units. */
export interface GenesisAccount {
  address: string;
  lamports: bigint;
  usdc: bigint;
}

export const DEFAULT_GENESIS: GenesisOptions = {
  buyers: 3,
  buyerUsdc: 1_000n * USDC_UNIT,
  buyerLamports: LAMPORTS_PER_SOL,
  feePayerLamports: 100n * LAMPORTS_PER_SOL,
};

/**
 * A local Solana with USDC: its mint written at the real mint's address (owned by the SPL Token program, 6
 * decimals, the devnet's own mint authority), buyers holding SOL and USDC in their associated token accounts, a
 * facilitator fee payer holding SOL, and a faucet that `requestAirdrop` pays from by real transfers. Accounts
 * present at genesis are written, as a validator's genesis writes them; everything after is a transaction.
 */
export class SolanaChain {
  readonly ledger: Ledger;
  readonly mintAuthority = devnetKeyPair("usdc mint authority");
  readonly feePayer = devnetKeyPair("facilitator fee payer");
  readonly faucet = devnetKeyPair("faucet");
  readonly buyers: SolanaKeyPair[];

  private constructor(private readonly genesis: GenesisOptions) {
    this.ledger = new Ledger(genesis.now);
    this.buyers = Array.from({ length: genesis.buyers }, (_, i) => devnetKeyPair("buyer", i));
  }

  static async create(options: Partial<GenesisOptions> = {}): Promise<SolanaChain> {
    const chain = new SolanaChain({ ...DEFAULT_GENESIS, ...options });
    await chain.writeGenesis();
    return chain;
  }

  private async writeGenesis(): Promise<void> {
    const { buyerUsdc, buyerLamports, feePayerLamports } = this.genesis;
    const accounts = this.genesis.accounts ?? [];
    const rent = (size: number) => this.ledger.svm.minimumBalanceForRentExemption(BigInt(size));
    this.ledger.setAccount(SOLANA_USDC_MINT, {
      lamports: rent(MINT_SIZE),
      owner: SPL_TOKEN_PROGRAM,
      data: encodeMint({
        mintAuthority: this.mintAuthority.address,
        supply: buyerUsdc * BigInt(this.buyers.length) + accounts.reduce((sum, a) => sum + a.usdc, 0n),
        decimals: SOLANA_USDC_DECIMALS,
        freezeAuthority: null,
      }),
    });
    const system = { data: new Uint8Array(0), owner: SYSTEM_PROGRAM };
    this.ledger.setAccount(this.faucet.address, { ...system, lamports: FAUCET_LAMPORTS });
    this.ledger.setAccount(this.feePayer.address, { ...system, lamports: feePayerLamports });
    this.ledger.setAccount(this.mintAuthority.address, { ...system, lamports: LAMPORTS_PER_SOL });
    const wallets = [
      ...this.buyers.map((b) => ({ address: b.address, lamports: buyerLamports, usdc: buyerUsdc })),
      ...accounts,
    ];
    for (const wallet of wallets) {
      this.ledger.setAccount(wallet.address, { ...system, lamports: wallet.lamports });
      this.ledger.setAccount(await usdcAccountOf(wallet.address), {
        lamports: rent(TOKEN_ACCOUNT_SIZE),
        owner: SPL_TOKEN_PROGRAM,
        data: encodeTokenAccount({ mint: SOLANA_USDC_MINT, owner: wallet.address, amount: wallet.usdc }),
      });
    }
  }

  decode(bytes: Uint8Array): WireTransaction {
    return decodeWire(bytes);
  }

  /** Pays `lamports` from the faucet by a system transfer the faucet signs: a transaction like any other. */
  airdrop(address: string, lamports: bigint): Sent {
    const transfer = new Uint8Array(12);
    const view = new DataView(transfer.buffer);
    view.setUint32(0, 2, true); // SystemInstruction::Transfer
    view.setBigUint64(4, lamports, true);
    const keys = [this.faucet.address, address, SYSTEM_PROGRAM];
    const message = Uint8Array.from([
      1,
      0,
      1, // one signer (the faucet), no read-only signer, one read-only key (the system program)
      ...writeCompactU16(keys.length),
      ...keys.flatMap((key) => [...fromBase58(key)]),
      ...fromBase58(this.ledger.latestBlockhash().blockhash),
      ...writeCompactU16(1),
      2,
      ...writeCompactU16(2),
      0,
      1,
      ...writeCompactU16(transfer.length),
      ...transfer,
    ]);
    return this.ledger.send(
      Uint8Array.from([...writeCompactU16(1), ...this.faucet.sign(message), ...message]),
    );
  }
}
