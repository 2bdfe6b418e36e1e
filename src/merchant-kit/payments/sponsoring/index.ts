/**
 * Gas sponsoring on the merchant's side (docs/platform.md, "A wallet holding only USDC"): the extensions a
 * 402 declares where its facilitators act on them, and the 412 a wallet without a Permit2 allowance gets,
 * in the kit's error shape.
 */
export { ALLOWANCE_REQUIRED, answerAllowanceRequired } from "./allowance.ts";
export { declareSponsoring, type SponsoringKey, sponsoringListed } from "./declare.ts";
