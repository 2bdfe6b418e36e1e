/**
 * The ERC-8021 suffix the facilitator appends to what it settles (docs/facilitator.md, "Builder codes"), with a
 * cap on its size. The SDK's `BuilderCodeFacilitatorExtension` appends the payment's app code and up to ten of
 * its service codes of 32 characters each: codes any buyer may add to any payment (the merchant's resource
 * server accepts added service codes), which made a transfer's calldata 688 bytes instead of 345 and cost the
 * facilitator 5,500 gas more, every time. Here the suffix stays within `MAX_BUILDER_CODE_SUFFIX_BYTES`.
 *
 * Past the cap the payment's last service codes are dropped, not the payment refused: codes are attribution,
 * which the contract ignores, and a purchase must not fail for its decoration (the SDK itself drops codes
 * outside the spec's alphabet and past ten). What is kept: the facilitator's code (`w`), the payment's app code
 * (`a`, the merchant's: its resource server refuses a payment whose `a` differs from its 402's), always; then
 * the payment's service codes in their order, as many as fit. The SDK's client puts the buyer's codes before
 * those the merchant declared.
 */
import {
  BUILDER_CODE,
  BUILDER_CODE_PATTERN,
  BuilderCodeFacilitatorExtension,
  type DataSuffixContext,
  MAX_CLIENT_SERVICE_CODES,
  MAX_SERVER_SERVICE_CODES,
} from "@x402/extensions/builder-code";
import { type Hex, size } from "viem";

/**
 * The most bytes a settlement's suffix takes: 2,048 gas of calldata at most. It holds the two codes kept
 * whatever the payment carries, each of the spec's longest (32 characters): 19 bytes of trailer, then the
 * map's header and `w` and `a` with their keys (1 + 36 + 36), 92 in all. With `x402_merchants` and a merchant's
 * default code (`x402m_social_proxy`, 58 bytes with both), a buyer's codes have 70: the `s` key and its array
 * (3), then codes of 32 and 31 characters (34 and 33: a CBOR string of 24 characters or more has a 2-byte
 * header), or CDP's two SDK codes and another.
 */
export const MAX_BUILDER_CODE_SUFFIX_BYTES = 128;

/** As many of the payment's service codes as the SDK's extension reads. */
const MAX_PAYMENT_SERVICE_CODES = MAX_CLIENT_SERVICE_CODES + MAX_SERVER_SERVICE_CODES;

export class CappedBuilderCodeExtension extends BuilderCodeFacilitatorExtension {
  /**
   * `builderCode`: the facilitator's own code (`w`). No service code of its own: with one, the codes always
   * kept could pass the cap (129 bytes at the spec's longest).
   */
  constructor(builderCode?: string) {
    super(builderCode ? { builderCode } : {});
  }

  override buildDataSuffix(ctx: DataSuffixContext): Hex | undefined {
    let suffix = super.buildDataSuffix(ctx);
    if (!suffix || size(suffix) <= MAX_BUILDER_CODE_SUFFIX_BYTES) return suffix;
    const entry = ctx.paymentPayload.extensions?.[BUILDER_CODE];
    const info = isRecord(entry) && isRecord(entry.info) ? entry.info : {};
    // The codes the SDK appends (a string is one code), in its order: each one dropped shortens the suffix.
    const raw = typeof info.s === "string" ? [info.s] : Array.isArray(info.s) ? info.s : [];
    const codes = raw
      .filter((code): code is string => typeof code === "string" && BUILDER_CODE_PATTERN.test(code))
      .slice(0, MAX_PAYMENT_SERVICE_CODES);
    // With none of them the suffix is within the cap (`w` and `a`, see the constant): the loop ends there at
    // the latest.
    for (
      let kept = codes.length - 1;
      kept >= 0 && suffix && size(suffix) > MAX_BUILDER_CODE_SUFFIX_BYTES;
      kept--
    ) {
      suffix = super.buildDataSuffix({
        ...ctx,
        paymentPayload: {
          ...ctx.paymentPayload,
          extensions: {
            ...ctx.paymentPayload.extensions,
            [BUILDER_CODE]: { ...(entry as object), info: { ...info, s: codes.slice(0, kept) } },
          },
        },
      });
    }
    return suffix;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
