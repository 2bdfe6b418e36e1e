/**
 * The reasons this facilitator puts in `invalidReason` (verify) and `errorReason` (settle). Where the x402
 * spec or the EVM exact scheme of `@x402/evm` has a reason, it is reused verbatim so merchants' code that
 * branches on them works unchanged; the rest are this facilitator's own, documented in docs/facilitator.md.
 */

// The x402 v2 specification, section 9.
export const INVALID_PAYLOAD = "invalid_payload";
export const INVALID_PAYMENT_REQUIREMENTS = "invalid_payment_requirements";
export const INVALID_X402_VERSION = "invalid_x402_version";
export const INVALID_NETWORK = "invalid_network";
export const UNSUPPORTED_SCHEME = "unsupported_scheme";
export const UNEXPECTED_VERIFY_ERROR = "unexpected_verify_error";
export const UNEXPECTED_SETTLE_ERROR = "unexpected_settle_error";
/** The payer's balance does not cover the authorized value. */
export const INSUFFICIENT_FUNDS = "insufficient_funds";

// @x402/evm's exact scheme (its facilitator errors).
export const NONCE_ALREADY_USED = "invalid_exact_evm_nonce_already_used";
export const UNSUPPORTED_PAYLOAD_TYPE = "unsupported_payload_type";
/** Broadcast, not yet confirmed: `transaction` carries the hash. The SDK's resource server retries once. */
export const SETTLEMENT_PENDING = "settlement_pending";

// @x402/evm's batch-settlement scheme.
/** A channel's receiver (a deposit's, a claim's, a refund's, a settle's) is not the requirements' payTo. */
export const RECEIVER_MISMATCH = "invalid_batch_settlement_evm_receiver_mismatch";
/** A channel's token is not the requirements' asset. */
export const TOKEN_MISMATCH = "invalid_batch_settlement_evm_token_mismatch";
/** The payload's type cannot be done by this call (a voucher settled, a claim verified...). */
export const CHANNEL_PAYLOAD_TYPE = "invalid_batch_settlement_evm_payload_type";
/** A refund sent to /settle is not the spec's completed one, or claims another channel. */
export const REFUND_PAYLOAD = "invalid_batch_settlement_evm_refund_payload";

// This facilitator's own.
/** The asset is not one this facilitator settles (it pays the gas, so it settles only known tokens). */
export const UNSUPPORTED_ASSET = "unsupported_asset";
/** /settle for an authorization this facilitator never verified (or verified with other content). */
export const PAYMENT_NOT_VERIFIED = "payment_not_verified";
/** Another request is submitting this authorization right now and has no transaction hash yet. */
export const SETTLEMENT_IN_PROGRESS = "settlement_in_progress";
/** The broadcast transaction vanished (never mined, its nonce taken by another): the payment did not happen. */
export const SETTLEMENT_DROPPED = "settlement_dropped";
/** The authorization was used on chain by a transaction that is not ours (settled elsewhere). */
export const SETTLED_ELSEWHERE = "authorization_settled_elsewhere";
/**
 * A batch-settlement deposit into a channel whose receiverAuthorizer is neither its receiver, nor this
 * facilitator, nor an authorizer the receiver registered here: nobody known can sign its claims, so its gas
 * would be spent for a channel the receiver can never collect (channels/authorizers.ts).
 */
export const UNCLAIMABLE_CHANNEL = "unclaimable_channel";

// Access control (src/facilitator/access/): refused before anything is verified on chain or signed.
/** The payee is not on the allow-list and no API key was sent (401), or the key sent does not allow it (403). */
export const PAYEE_NOT_ALLOWED = "payee_not_allowed";
/** The API key sent is malformed, unknown or revoked (401). */
export const API_KEY_INVALID = "api_key_invalid";
/** The key's gas budget for the day (UTC) cannot cover this settlement's worst case (429). */
export const KEY_OVER_BUDGET = "key_over_budget";
/** The key has used its settlements of the minute (429, with Retry-After). */
export const KEY_OVER_RATE = "key_over_rate";
/**
 * A claim or refund this facilitator would sign as the channels' receiverAuthorizer, asked without an API
 * key that names the receiver (401 without a key, 403 with one that does not name it).
 */
export const AUTHORIZER_KEY_REQUIRED = "authorizer_key_required";
