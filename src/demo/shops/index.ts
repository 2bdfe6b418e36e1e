/**
 * Small demo merchants ("shops") for the demo and the buyer simulator: 20 shops of one or two cheap,
 * pure-computation endpoints each (no network, no state), plus two premium ones. Each shop is served under
 * its slug; `shopMerchant` turns one into a `Merchant`. Each takes `exact` through EIP-3009 or Permit2.
 */
import type { AnyEndpoint, ExactTransfer, Merchant } from "../../merchant-kit/index.ts";
import { decode, encode } from "./base64.ts";
import { caseConvert } from "./case.ts";
import { colourName } from "./colour.ts";
import { roll } from "./dice.ts";
import { diff } from "./diff.ts";
import { fortune } from "./fortune.ts";
import { hash, hashBulk } from "./hash.ts";
import { iban } from "./iban.ts";
import { format } from "./json.ts";
import { loremEndpoint } from "./lorem.ts";
import { luhn } from "./luhn.ts";
import { words } from "./number-words.ts";
import { password } from "./password.ts";
import { pick, shuffle } from "./picker.ts";
import { factor } from "./primes.ts";
import { fromRomanEndpoint, toRomanEndpoint } from "./roman.ts";
import { slug } from "./slugify.ts";
import { count, report } from "./text-stats.ts";
import { convert } from "./timestamp.ts";
import { uuid } from "./uuid.ts";

export interface Shop {
  /** Lower-case kebab, unique: the shop's URL prefix. */
  slug: string;
  /** A human shop name, e.g. "Fortune Teller". */
  name: string;
  /** The API's title, e.g. "Fortune Teller API". */
  title: string;
  endpoints: readonly AnyEndpoint[];
}

/**
 * How the shops take `exact`: EIP-3009 first (a buyer that does not choose pays as everywhere), and through
 * Permit2 for wallets that sign Permit2 rather than EIP-3009 (the devnet deploys x402's exact proxy; the
 * simulator's agents choose it now and then).
 */
export const SHOP_EXACT_TRANSFERS: readonly ExactTransfer[] = ["eip3009", "permit2"];

const shop = (slug: string, name: string, endpoints: readonly AnyEndpoint[]): Shop => ({
  slug,
  name,
  title: `${name} API`,
  endpoints: endpoints.map((e) => ({ ...e, exactTransfers: SHOP_EXACT_TRANSFERS })),
});

export const DEMO_SHOPS: readonly Shop[] = [
  shop("fortune", "Fortune Teller", [fortune]),
  shop("dice", "Dice Tower", [roll]),
  shop("uuid", "UUID Vending Machine", [uuid]),
  shop("password", "Password Forge", [password]),
  shop("hash", "Hash House", [hash, hashBulk]),
  shop("base64", "Base64 Booth", [encode, decode]),
  shop("slugify", "Slug Shop", [slug]),
  shop("case", "Case Converter", [caseConvert]),
  shop("text-stats", "Word Counter", [count, report]),
  shop("roman", "Roman Numeral Mint", [toRomanEndpoint, fromRomanEndpoint]),
  shop("primes", "Prime Factory", [factor]),
  shop("luhn", "Luhn Checker", [luhn]),
  shop("iban", "IBAN Inspector", [iban]),
  shop("lorem", "Lorem Ipsum Bakery", [loremEndpoint]),
  shop("json", "JSON Tidy", [format]),
  shop("diff", "Diff Desk", [diff]),
  shop("colour-names", "Colour Namer", [colourName]),
  shop("timestamp", "Timestamp Converter", [convert]),
  shop("picker", "Random Picker", [pick, shuffle]),
  shop("number-words", "Number Speller", [words]),
];

/** What an agent should know of a shop, beyond its operations' descriptions (its `info.x-guidance`, `/llms.txt`). */
export function shopGuidance(shop: Pick<Shop, "name">): string {
  return `${shop.name}, one of the devnet demo's small shops: computation on what the call sends, nothing fetched and nothing stored, answered at once; paid in the demo's devnet USDC, not real money.`;
}

/** A shop as a merchant host. */
export function shopMerchant(shop: Shop, payTo: `0x${string}`, publicUrl: string): Merchant {
  return {
    name: shop.slug,
    title: shop.title,
    guidance: shopGuidance(shop),
    payTo,
    publicUrl,
    endpoints: shop.endpoints,
  };
}
