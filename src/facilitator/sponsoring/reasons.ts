/**
 * Why a payment's gas sponsoring is refused (`invalidReason` at /verify, `errorReason` at /settle), before
 * anything is signed or sent. Where `@x402/evm`'s schemes name the case, their reason is used verbatim.
 */

// @x402/evm's.
export const EIP2612_FORMAT = "invalid_eip2612_extension_format";
export const EIP2612_DEADLINE_EXPIRED = "eip2612_deadline_expired";
/** The permit's value is not the Permit2 authorization's amount (the proxy's `settleWithPermit` reverts). */
export const PERMIT_AMOUNT_MISMATCH = "permit2_2612_amount_mismatch";
export const ERC20_FORMAT = "invalid_erc20_approval_extension_format";
export const APPROVAL_TX_PARSE_FAILED = "erc20_approval_tx_parse_failed";
export const APPROVAL_TX_WRONG_TARGET = "erc20_approval_tx_wrong_target";
export const APPROVAL_TX_WRONG_SELECTOR = "erc20_approval_tx_wrong_selector";
export const APPROVAL_TX_WRONG_SPENDER = "erc20_approval_tx_wrong_spender";
export const APPROVAL_TX_INVALID_CALLDATA = "erc20_approval_tx_invalid_calldata";
export const APPROVAL_TX_SIGNER_MISMATCH = "erc20_approval_tx_signer_mismatch";
// (and `eip2612_from_mismatch`, `eip2612_asset_mismatch`, `eip2612_spender_not_permit2`, the same with
// `erc20_approval_` for an approval: made from the kind, checks.ts.)

// This facilitator's own.
/** The permit's signature is not the payer's on the token's EIP-712 domain. */
export const EIP2612_INVALID_SIGNATURE = "invalid_eip2612_signature";
/** The permit is signed at another nonce than the token's next for the payer: it would fail on chain. */
export const EIP2612_NONCE_MISMATCH = "eip2612_nonce_mismatch";
/** The approval is for less than the payment's Permit2 authorization takes. */
export const APPROVAL_TOO_SMALL = "erc20_approval_amount_too_small";
/** The approval is signed for another chain. */
export const APPROVAL_TX_WRONG_CHAIN = "erc20_approval_tx_wrong_chain";
/** The approval's nonce is not the wallet's next transaction's: it could not be mined now. */
export const APPROVAL_TX_WRONG_NONCE = "erc20_approval_tx_wrong_nonce";
/** Its gas limit or fee would make this facilitator fund more than it does for an approval. */
export const APPROVAL_TX_TOO_COSTLY = "erc20_approval_tx_too_costly";
/** Its fee is below the chain's base fee: it could not be mined, and its funding would be lost. */
export const APPROVAL_TX_UNDERPRICED = "erc20_approval_tx_underpriced";
/** The approval then the settlement fail in simulation. */
export const APPROVAL_SIMULATION_FAILED = "erc20_approval_simulation_failed";
/** A way to pay this facilitator does not sponsor (a batch-settlement deposit's raw approval). */
export const SPONSORING_UNSUPPORTED = "gas_sponsoring_unsupported";
