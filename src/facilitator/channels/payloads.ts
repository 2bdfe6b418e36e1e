/**
 * The batch-settlement scheme's payloads as this facilitator reads them (x402's
 * `specs/schemes/batch-settlement/scheme_batch_settlement_evm.md`, `@x402/evm` 2.27's types). A deposit is
 * the payer's authorization, relayed on chain once (the ledger's); a voucher is verified and never sent; a
 * claim, a settle and a refund are the receiver's actions (actions.ts). Shapes only: signatures,
 * channel ids and amounts against the chain are the SDK's to check.
 */
import { z } from "zod";
import { address, bytes32, signature, uint256 } from "../shapes.ts";

export interface ChannelConfig {
  payer: `0x${string}`;
  payerAuthorizer: `0x${string}`;
  receiver: `0x${string}`;
  receiverAuthorizer: `0x${string}`;
  token: `0x${string}`;
  withdrawDelay: number;
  salt: `0x${string}`;
}

export interface Voucher {
  channelId: `0x${string}`;
  maxClaimableAmount: string;
  signature: `0x${string}`;
}

export interface Erc3009DepositAuthorization {
  validAfter: string;
  validBefore: string;
  salt: `0x${string}`;
  signature: `0x${string}`;
}

export interface Permit2DepositAuthorization {
  from: `0x${string}`;
  permitted: { token: `0x${string}`; amount: string };
  spender: `0x${string}`;
  nonce: string;
  deadline: string;
  witness: { channelId: `0x${string}` };
  signature: `0x${string}`;
}

/** Opens or tops up a channel: the payer's ERC-3009 or Permit2 authorization, and the request's voucher. */
export interface ChannelDepositPayload {
  type: "deposit";
  channelConfig: ChannelConfig;
  voucher: Voucher;
  deposit: {
    amount: string;
    authorization: {
      erc3009Authorization?: Erc3009DepositAuthorization;
      permit2Authorization?: Permit2DepositAuthorization;
    };
  };
}

export interface VoucherClaim {
  voucher: { channel: ChannelConfig; maxClaimableAmount: string };
  signature: `0x${string}`;
  totalClaimed: string;
}

/** What the receiver's side sends that is not a payer's authorization. */
export type ChannelActionPayload =
  | { type: "voucher"; channelConfig: ChannelConfig; voucher: Voucher }
  | {
      type: "refund";
      channelConfig: ChannelConfig;
      voucher: Voucher;
      amount?: string;
      /** With `claims`, what the server adds before /settle (the spec's completed refund payload). */
      refundNonce?: string;
      claims?: VoucherClaim[];
      refundAuthorizerSignature?: `0x${string}`;
      claimAuthorizerSignature?: `0x${string}`;
    }
  | { type: "claim"; claims: VoucherClaim[]; claimAuthorizerSignature?: `0x${string}` }
  | { type: "settle"; receiver: `0x${string}`; token: `0x${string}` };

const channelConfig = z.object({
  payer: address,
  payerAuthorizer: address,
  receiver: address,
  receiverAuthorizer: address,
  token: address,
  withdrawDelay: z.number().int().nonnegative(),
  salt: bytes32,
});
const voucher = z.object({ channelId: bytes32, maxClaimableAmount: uint256, signature });
const voucherClaim = z.object({
  voucher: z.object({ channel: channelConfig, maxClaimableAmount: uint256 }),
  signature,
  totalClaimed: uint256,
});

export const ChannelDepositSchema = z
  .object({
    type: z.literal("deposit"),
    channelConfig,
    voucher,
    deposit: z.object({
      amount: uint256,
      authorization: z.object({
        erc3009Authorization: z
          .object({ validAfter: uint256, validBefore: uint256, salt: bytes32, signature })
          .optional(),
        permit2Authorization: z
          .object({
            from: address,
            permitted: z.object({ token: address, amount: uint256 }),
            spender: address,
            nonce: uint256,
            deadline: uint256,
            witness: z.object({ channelId: bytes32 }),
            signature,
          })
          .optional(),
      }),
    }),
  })
  .refine(
    (d) => !d.deposit.authorization.erc3009Authorization !== !d.deposit.authorization.permit2Authorization,
    "deposit.authorization holds exactly one of erc3009Authorization and permit2Authorization",
  ) as unknown as z.ZodType<ChannelDepositPayload>;

export const ChannelActionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("voucher"), channelConfig, voucher }),
  z.object({
    type: z.literal("refund"),
    channelConfig,
    voucher,
    amount: uint256.optional(),
    refundNonce: uint256.optional(),
    claims: z.array(voucherClaim).optional(),
    refundAuthorizerSignature: signature.optional(),
    claimAuthorizerSignature: signature.optional(),
  }),
  z.object({
    type: z.literal("claim"),
    claims: z.array(voucherClaim).min(1, "a claim holds at least one voucher"),
    claimAuthorizerSignature: signature.optional(),
  }),
  z.object({ type: z.literal("settle"), receiver: address, token: address }),
]) as unknown as z.ZodType<ChannelActionPayload>;

/** The payload types that are the receiver's actions rather than a payer's authorization. */
const ACTION_TYPES: ReadonlySet<unknown> = new Set(["voucher", "refund", "claim", "settle"]);

/** Whether a request is a batch-settlement action (voucher, claim, settle, refund), by its declared type. */
export function isChannelAction(payload: unknown, requirements: unknown): boolean {
  const scheme = (requirements as { scheme?: unknown } | null)?.scheme;
  const inner = (payload as { payload?: { type?: unknown } } | null)?.payload;
  return scheme === "batch-settlement" && ACTION_TYPES.has(inner?.type);
}
