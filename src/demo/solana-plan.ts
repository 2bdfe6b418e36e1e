/**
 * The Solana week's population and plan (issue 86 item 7): a small mix beside Base's and Arbitrum's, its keys
 * derived from names as the EVM wallets are derived from the devnet's mnemonic, so a second start names the same
 * wallets. Genuine buyers pay the merchants at their listed prices; the utility API plays the two patterns the
 * screens catch on Solana that cost nothing to set up: paying itself, and a farm of wallets it funds with its own
 * USDC (real `TransferChecked`s the indexer reads as their funding) paying it back.
 */
import { createHash } from "node:crypto";
import { type GenesisAccount, keyPairFromSeed, type SolanaKeyPair } from "../chain/solana/devnet/index.ts";
import type { MerchantHost } from "../config/ports.ts";
import { ALIAS_PATHS } from "../merchants/index.ts";
import type { Behaviour, PlanEndpoint } from "./plan-types.ts";
import { random } from "./prng.ts";
import { DEMO_SHOPS } from "./shops/index.ts";
import type { SimMerchant } from "./sim-merchants.ts";
import { WALLET_HOSTS } from "./wallets.ts";

/** The Solana week's mix: fixed and small, whatever the world's scale (its cost is the start's, docs/demo.md). */
export const SOLANA_MIX = {
  buyers: 8,
  paymentsEach: 4,
  selfPayments: 2,
  farmWallets: 3,
  farmPaymentsEach: 3,
} as const;

/** What the utility API's Solana wallet holds at genesis: its own money, which pays itself and funds its farm. */
export const MERCHANT_USDC = 1_000_000n;
/** Each genuine buyer's USDC at genesis ($5: far more than its few calls cost). */
const BUYER_USDC = 5_000_000n;
/** What the utility sends each farm wallet: more than its calls cost, all of it the merchant's money. */
const FARM_FUNDING = 50_000n;
/** SOL for a wallet that signs a transfer and pays its fee (the merchant funding its farm); buyers need none. */
const SIGNER_LAMPORTS = 10_000_000n;
/** The merchant the patterns are played against, as on Base (play-week.ts: `chooseRoles(..., "utility")`). */
const PATTERN_MERCHANT = "utility";
/** Where the patterns pay: a listed price a cent, so their share of the utility's week is plain in its report. */
const PATTERN_PATH = "/api/qr";
/**
 * Genuine buyers call endpoints of half a cent and up: so few payments spread over cheaper ones would leave most
 * merchants below the cent a merchant is ranked from, and a board of none says little.
 */
const MIN_PRICE = 0.005;

/** A key of the demo's Solana, from its role and number: the same every start. */
export function solanaDemoKey(role: string, index: number | string = 0): SolanaKeyPair {
  return keyPairFromSeed(createHash("sha256").update(`x402-merchants demo solana ${role} ${index}`).digest());
}

/** Each merchant's Solana wallet, by the merchant's id (an alias is paid into its source's, as on Base). */
export const solanaMerchantKey = (id: string): SolanaKeyPair => solanaDemoKey("merchant", id);

/** The merchants with a wallet of their own, by id: every host but an alias, and every shop. */
export const SOLANA_MERCHANT_IDS: readonly string[] = [...WALLET_HOSTS, ...DEMO_SHOPS.map((s) => s.slug)];

/** The Solana wallet a merchant host is paid into: its own, or an alias's source's. */
export const solanaPayToOf = (host: MerchantHost): string =>
  solanaMerchantKey(ALIAS_PATHS[host]?.source ?? host).address;

export type SolanaAction =
  | {
      type: "pay";
      /** Chain time, unix seconds: the slot it lands in is dated then. */
      at: number;
      payer: SolanaKeyPair;
      merchant: SimMerchant;
      endpoint: PlanEndpoint;
      behaviour: Behaviour;
    }
  | { type: "transfer"; at: number; from: SolanaKeyPair; to: SolanaKeyPair; amount: bigint };

/**
 * The genesis wallets the plan needs: the merchants' (a USDC account each, which `exact` pays into), the buyers',
 * the farm's (an empty USDC account each, which the merchant's transfers fill).
 */
export function solanaGenesis(): GenesisAccount[] {
  return [
    ...SOLANA_MERCHANT_IDS.map((id) => ({
      address: solanaMerchantKey(id).address,
      lamports: SIGNER_LAMPORTS,
      usdc: id === PATTERN_MERCHANT ? MERCHANT_USDC : 0n,
    })),
    ...buyers().map((key) => ({ address: key.address, lamports: 0n, usdc: BUYER_USDC })),
    ...farm().map((key) => ({ address: key.address, lamports: 0n, usdc: 0n })),
  ];
}

const buyers = () => Array.from({ length: SOLANA_MIX.buyers }, (_, i) => solanaDemoKey("buyer", i));
const farm = () => Array.from({ length: SOLANA_MIX.farmWallets }, (_, i) => solanaDemoKey("farm", i));

/**
 * The week's actions, oldest first, over `[start, end)` (unix seconds): each genuine buyer's calls at random
 * times to random merchants' `exact` endpoints; the utility paying itself; the farm funded in the week's first
 * half, paying in its second. The same for the same merchants (seeded).
 */
export function solanaPlan(merchants: readonly SimMerchant[], start: number, end: number): SolanaAction[] {
  const rng = random(86, 7);
  const span = end - start;
  const at = (from: number, to: number) => Math.floor(start + span * (from + (to - from) * rng.next()));
  const offers = merchants.flatMap((merchant) =>
    merchant.endpoints
      .filter((e) => e.scheme !== "upto" && e.price >= MIN_PRICE)
      .map((endpoint) => ({ merchant, endpoint })),
  );
  const utility = merchants.find((m) => m.id === PATTERN_MERCHANT);
  const qr = utility?.endpoints.find((e) => e.path === PATTERN_PATH);
  if (!utility || !qr || offers.length === 0)
    throw new Error("the Solana week needs the utility API's /api/qr");
  const actions: SolanaAction[] = [];
  for (const payer of buyers()) {
    for (let k = 0; k < SOLANA_MIX.paymentsEach; k++) {
      const { merchant, endpoint } = rng.pick(offers);
      actions.push({ type: "pay", at: at(0, 1), payer, merchant, endpoint, behaviour: "agent" });
    }
  }
  const own = solanaMerchantKey(utility.id);
  for (let k = 0; k < SOLANA_MIX.selfPayments; k++) {
    const behaviour = "self_payment";
    actions.push({ type: "pay", at: at(0, 1), payer: own, merchant: utility, endpoint: qr, behaviour });
  }
  for (const wallet of farm()) {
    actions.push({ type: "transfer", at: at(0, 0.5), from: own, to: wallet, amount: FARM_FUNDING });
    for (let k = 0; k < SOLANA_MIX.farmPaymentsEach; k++) {
      const behaviour = "merchant_funded";
      actions.push({
        type: "pay",
        at: at(0.5, 1),
        payer: wallet,
        merchant: utility,
        endpoint: qr,
        behaviour,
      });
    }
  }
  return actions.sort((a, b) => a.at - b.at);
}
