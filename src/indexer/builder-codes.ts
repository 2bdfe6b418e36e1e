/**
 * The ERC-8021 builder codes at the end of a settlement's calldata (x402's `builder-code` extension): the app
 * the payment came through (`a`), the facilitator that settled it (`w`) and the services beside them (`s`).
 * The contract ignores them; they are read from the transaction's input, which the way of reading senders
 * already holds (block-data.ts): decoding them costs no call (docs/indexer.md, "Builder codes").
 *
 * The app code is whatever the payer's software put in its payment, and anyone can append any suffix to their
 * own transaction: a code says who claims the payment, not who made it (x402 #3299).
 */
import {
  BUILDER_CODE_PATTERN,
  ERC_8021_MARKER,
  parseBuilderCodeSuffixFromCalldata,
} from "@x402/extensions/builder-code";

/** What follows a suffix's codes: their length (2 bytes), the schema's id (1) and the marker (16). */
const SUFFIX_TRAILER = 19;

/** A payment's decoded codes; null where the suffix has none. */
export interface BuilderCodes {
  app: string | null;
  wallet: string | null;
  /** The service codes, in the suffix's order, comma-separated (a code has no comma). */
  services: string | null;
}

/**
 * The codes of a transaction's input, or undefined when it ends in no ERC-8021 Schema 2 suffix (the SDK's
 * parser decides; only the marker's test is done first, as almost every input has none). A code outside the
 * spec's alphabet (`[a-z0-9_]{1,32}`) is dropped, not stored: the store and the pages show only codes the spec
 * allows, and a suffix of nothing else counts as none.
 */
export function builderCodesOf(input: string | undefined): BuilderCodes | undefined {
  if (
    !input ||
    input.length < 2 + 2 * SUFFIX_TRAILER ||
    input.slice(-ERC_8021_MARKER.length).toLowerCase() !== ERC_8021_MARKER
  )
    return undefined;
  // Only the suffix is handed to the parser, as long as its length field says (an input too short for it is
  // handed whole, and refused): the parser searches its whole argument for the marker, which more than doubled
  // its time on a settlement's input.
  const length = Number.parseInt(input.slice(-2 * SUFFIX_TRAILER, -2 * SUFFIX_TRAILER + 4), 16);
  const suffix = input.slice(-2 * (length + SUFFIX_TRAILER)).replace(/^0x/i, "");
  const parsed = parseBuilderCodeSuffixFromCalldata(`0x${suffix.toLowerCase()}`);
  if (!parsed) return undefined;
  const valid = (code: unknown) =>
    typeof code === "string" && BUILDER_CODE_PATTERN.test(code) ? code : null;
  const services = (Array.isArray(parsed.s) ? parsed.s : parsed.s === undefined ? [] : [parsed.s])
    .map(valid)
    .filter((code): code is string => code !== null);
  const codes = {
    app: valid(parsed.a),
    wallet: valid(parsed.w),
    services: services.length > 0 ? services.join(",") : null,
  };
  return codes.app || codes.wallet || codes.services ? codes : undefined;
}
